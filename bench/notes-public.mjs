// rune notes as a public service, side by side with a build from before (--before BIN; without it,
// only this build is measured):
//   1. search over --files files (default 1,000,000, generated with bulk inserts, bench/notes/
//      corpus.mjs): p50/p95 of rare and common words as a member and as a visitor, and a visitor's
//      query that matches only private files (goal: p95 ≤ 20 ms each, ranked, not partial), and
//      each server's CPU per query (every thread: what the load of the machine does not change),
//   2. public page, /raw and JSON reads: server CPU per request against a bare fastify serving the
//      same bytes with the same headers, found by a route of the same shape (bench/notes/reads.mjs;
//      goal ≥ 0.8),
//   3. edit → --clients event streams (default 1000), p99, alone and while --typists (default 5)
//      type into other files of the note (goal p99 ≤ 50 ms); the streams are tabs that have the
//      saved file open and follow it, and with typists once more following no file.
//   node bench/notes-public.mjs [--before BIN] [--files 1000000] [--only search|reads|fanout]
//                               [--queries 100] [--clients 1000] [--typists 5] [--seconds 2]
//                               [--keep DIR]
// --keep DIR: the search's data folders are DIR/before and DIR/after, kept after the run; a folder
// that already holds a corpus is searched as it is (the corpus and the first index are made once;
// the folder must be of a build with the same schema, or one this build migrates).
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { median, percentile, ROOT, requireBinary } from './lib.mjs';
import { fillCorpus, zipf } from './notes/corpus.mjs';
import { fanOut } from './notes/fanout.mjs';
import { adminApi, cpuMicros, httpClient, startRune } from './notes/lib.mjs';
import { readsAgainstBare } from './notes/reads.mjs';

const { values } = parseArgs({
  options: {
    before: { type: 'string', default: process.env.RUNE_BASELINE_BIN },
    files: { type: 'string', default: '1000000' },
    only: { type: 'string' },
    queries: { type: 'string', default: '100' },
    clients: { type: 'string', default: '1000' },
    typists: { type: 'string', default: '5' },
    seconds: { type: 'string', default: '2' },
    connections: { type: 'string', default: '32' },
    keep: { type: 'string' },
  },
});
const clients = Number(values.clients);
const connections = Number(values.connections);
const builds = [
  ...(values.before ? [{ name: 'before', bin: requireBinary(values.before) }] : []),
  { name: 'after', bin: requireBinary() },
];
const require = createRequire(join(ROOT, 'package.json'));
const { request, close } = httpClient(connections);
const want = (section) => !values.only || values.only === section;

/** Data folders made by this run, removed when it ends (a million files take a few GB). */
const homes = [];
process.on('exit', () => {
  for (const home of homes) {
    rmSync(home, { recursive: true, force: true });
    rmSync(`${home}-notes-workspace`, { recursive: true, force: true });
  }
});

/** A data folder whose limits let one bench client open what it measures (settings every build knows). */
function benchHome(kept) {
  let home;
  if (kept) {
    home = kept;
    mkdirSync(home, { recursive: true });
  } else {
    home = mkdtempSync(join(tmpdir(), 'rune-bench-public-'));
    homes.push(home);
  }
  writeFileSync(
    join(home, 'rune.toml'),
    `[notes.limits]
max_streams_per_client = ${clients + 64}
max_streams_per_note = ${clients + 64}
max_connections_per_client = ${clients + connections + 128}
expensive_per_minute = 1000000
[notes.local]
admins = ["bench:benchpass"]
`,
  );
  return home;
}

async function startBuild(build, home) {
  const server = await startRune(home, build.bin);
  const api = await adminApi(request, server.url);
  return { ...build, server, api };
}

const ms = (v) => `${v.toFixed(1).padStart(6)} ms`;

// --- 1. search
async function search() {
  const files = Number(values.files);
  const { words, rand } = zipf(7);
  const pickFrom = (from, to) => words[from + Math.floor(rand() * (to - from))];
  const queries = Number(values.queries);
  const kinds = {
    'rare word (in ~100-400 files)': Array.from({ length: queries }, () => pickFrom(20_000, 50_000)),
    'common word (in 50-98 % of files)': Array.from({ length: queries }, () => pickFrom(0, 12)),
    'two common words': Array.from({ length: queries }, () => `${pickFrom(0, 12)} ${pickFrom(12, 200)}`),
  };
  const running = [];
  for (const build of builds) {
    const kept = values.keep ? join(values.keep, build.name) : undefined;
    const reused = kept !== undefined && existsSync(join(kept, 'notes', 'notes.db'));
    const home = benchHome(kept);
    if (reused) console.log(`${build.name}: the corpus of ${home} searched as it is`);
    else {
      // The build makes its schema, then the corpus goes in while it is stopped.
      const first = await startRune(home, build.bin);
      await first.stop();
      const started = Date.now();
      fillCorpus(join(home, 'notes', 'notes.db'), { files, privateFiles: Math.floor(files / 10) });
      console.log(`${build.name}: ${files} files written in ${((Date.now() - started) / 1000).toFixed(0)} s`);
    }
    const ready = Date.now();
    const b = await startBuild(build, home);
    // Searchable once a member finds the last file written (a build may index after it starts).
    const last = `f${files - 1}.md`;
    for (;;) {
      const res = await b.api(`/api/search?q=${encodeURIComponent(last.replace('.md', ''))}&limit=1`);
      if (res.status === 200 && JSON.parse(res.body).results.length > 0) break;
      await new Promise((r) => setTimeout(r, 1000));
    }
    console.log(`${build.name}: searchable ${((Date.now() - ready) / 1000).toFixed(0)} s after its start`);
    running.push(b);
  }
  const timed = async (b, q, member) => {
    const path = `/api/search?q=${encodeURIComponent(q)}`;
    const start = performance.now();
    const res = member ? await b.api(path) : await request(`${b.server.url}${path}`);
    const took = performance.now() - start;
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${res.body}`);
    const body = JSON.parse(res.body);
    return { took, partial: body.partial === true, hits: body.results.length };
  };
  // A server in service has its index pages in memory: 60 queries of other words first, not
  // measured (without them the first case measured the page faults of a cold map).
  const warm = Array.from({ length: 20 }, () => [
    pickFrom(12, 20_000),
    pickFrom(0, 12),
    pickFrom(50_000, 60_000),
  ]);
  for (const q of warm.flat()) for (const b of running) await timed(b, q, rand() < 0.5);
  console.log(
    `\nsearch over ${files} files (${queries} queries of each kind, one at a time, builds interleaved, after 60 not measured)`,
  );
  const cases = [
    ...Object.entries(kinds).flatMap(([kind, qs]) => [
      [`member, ${kind}`, qs, true],
      [`visitor, ${kind}`, qs, false],
    ]),
    ["visitor, a word only private files hold ('vaultword')", Array(queries).fill('vaultword'), false],
  ];
  for (const [label, qs, member] of cases) {
    const results = Object.fromEntries(running.map((b) => [b.name, { took: [], partial: 0, empty: 0 }]));
    // Each server's CPU (every thread) over the case: its cost per query, whatever the machine's load.
    const cpuBefore = running.map((b) => cpuMicros(b.server.child.pid));
    for (const q of qs) {
      for (const b of running) {
        const r = await timed(b, q, member);
        results[b.name].took.push(r.took);
        if (r.partial) results[b.name].partial++;
        if (r.hits === 0) results[b.name].empty++;
      }
    }
    const cpu = running.map((b, i) => (cpuMicros(b.server.child.pid) - cpuBefore[i]) / qs.length / 1000);
    console.log(`  ${label}`);
    for (const [i, b] of running.entries()) {
      const r = results[b.name];
      console.log(
        `    ${b.name.padEnd(7)} p50 ${ms(percentile(r.took, 50))}  p95 ${ms(percentile(r.took, 95))}  partial ${r.partial}/${qs.length}  no hits ${r.empty}/${qs.length}  (goal p95 ≤ 20 ms)  server CPU ${ms(cpu[i])} a query`,
      );
    }
  }
  for (const b of running) await b.server.stop();
}

// --- 2. reads
async function prepared(build) {
  const b = await startBuild(build, benchHome());
  await b.api('/api/notes', 'POST', { name: 'bench', public: true });
  await b.api('/api/notes/bench/files', 'POST', {
    name: 'index.md',
    content: `# Bench\n\n${'Some text. '.repeat(100)}\n`,
  });
  return b;
}

async function reads() {
  const seconds = Number(values.seconds);
  // Each path, and the route by which rune finds it.
  const paths = {
    '/notes/bench/index.md': '/notes/:note/:file',
    '/raw/bench/index.md': '/raw/:note/:file',
    '/api/notes/bench/files/index.md': '/api/notes/:note/files/:file',
  };
  console.log(
    `\nreads over ${connections} keep-alive connections, ${seconds} s × 7 rounds: server CPU per request against a bare fastify with the same bytes and headers, found by a route of the same shape (and by a static route of the one path)`,
  );
  for (const build of builds) {
    const b = await prepared(build);
    const result = await readsAgainstBare({ request, server: b.server, paths, seconds, connections });
    for (const [path, r] of Object.entries(result)) {
      console.log(
        `  ${b.name.padEnd(7)} ${path.padEnd(34)} rune ${r.runeCpu.toFixed(0).padStart(4)} µs  bare ${r.bareCpu.toFixed(0).padStart(4)} µs  ratio ${r.ratio.toFixed(2)}  (${r.runeRate.toFixed(0)} vs ${r.bareRate.toFixed(0)} req/s; goal ≥ 0.8)  static route ${r.staticCpu.toFixed(0).padStart(4)} µs  ratio ${r.staticRatio.toFixed(2)}`,
      );
    }
    await b.server.stop();
  }
}

// --- 3. fan-out
async function fanout() {
  const typists = Number(values.typists);
  const Y = require('yjs');
  console.log(`\nedit → ${clients} event streams (30 saves each run; rounds alternate the builds)`);
  const samples = {};
  for (let round = 0; round < 2; round++) {
    // Each build goes first in one round: a load that grows during the run hits both alike.
    for (const build of round % 2 ? [...builds].reverse() : builds) {
      // Alone; with typists, the streams following the saved file (as the web client's tabs do);
      // with typists, the streams following no file (every update goes to every stream).
      for (const [n, follow] of [
        [0, true],
        [typists, true],
        [typists, false],
      ]) {
        const b = await prepared(build);
        const { delays, typed, cpuMsPerEdit, kernelShare } = await fanOut({
          url: b.server.url,
          api: b.api,
          note: 'bench',
          file: 'index.md',
          clients,
          typists: n,
          Y,
          pid: b.server.child.pid,
          follow,
        });
        const key = `${b.name}, ${n} typist(s)${n > 0 && !follow ? ', streams follow no file' : ''}`;
        samples[key] ??= { delays: [], typed: 0, server: [], clients: [], kernel: [] };
        samples[key].kernel.push(kernelShare);
        samples[key].delays.push(...delays);
        samples[key].typed += typed;
        samples[key].server.push(cpuMsPerEdit.server);
        samples[key].clients.push(cpuMsPerEdit.clients);
        await b.server.stop();
      }
    }
  }
  for (const [key, s] of Object.entries(samples)) {
    console.log(
      `  ${key.padEnd(46)} p50 ${ms(percentile(s.delays, 50))}  p99 ${ms(percentile(s.delays, 99))}  (${s.delays.length} deliveries, ${s.typed} updates typed meanwhile; goal p99 ≤ 50 ms)  CPU per save: server ${ms(median(s.server))} (${(100 * median(s.kernel)).toFixed(0)} % in the kernel), stream clients ${ms(median(s.clients))}`,
    );
  }
}

if (want('reads')) await reads();
if (want('fanout')) await fanout();
if (want('search')) await search();
close();
