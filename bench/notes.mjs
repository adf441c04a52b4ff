// rune notes under load, each figure against a baseline measured in the same run:
//   1. note reads per second (GET of a public file) vs a bare fastify hello-world (goal ≥ 50 %),
//   2. delay for an edit to reach 200 SSE clients, p50/p99 (goal p99 ≤ 100 ms),
//   3. full-text search p95 over 100k files (goal ≤ 20 ms), with an empty-note search as baseline,
//   4. acknowledgement latency of collaborative updates with 20 typists, p50/p99: the durable update
//      log with synchronous = normal (default) and full, side by side with a binary from before the
//      log (--baseline BIN, built from 0d6a4c0; goal: at most +2 ms at p99), typed in --slices
//      interleaved slices (bench/notes/collab.mjs).
//   node bench/notes.mjs [--seconds 5] [--clients 200] [--files 100000]
//                        [--only reads|collab] [--typists 20] [--baseline BIN]
//                        [--typing-seconds 24] [--slices 12] [--also NAME=BIN …]
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { median, percentile, ROOT, requireBinary } from './lib.mjs';
import { collabLatency } from './notes/collab.mjs';
import { cpuMicros, httpClient, adminApi as signIn, startRune as start, waitForLine } from './notes/lib.mjs';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '5' },
    clients: { type: 'string', default: '200' },
    files: { type: 'string', default: '100000' },
    connections: { type: 'string', default: '32' },
    only: { type: 'string' },
    typists: { type: 'string', default: '20' },
    baseline: { type: 'string', default: process.env.RUNE_BASELINE_BIN },
    'typing-seconds': { type: 'string', default: '24' },
    slices: { type: 'string', default: '12' },
    also: { type: 'string', multiple: true, default: [] },
  },
});
const seconds = Number(values.seconds);
const sseClients = Number(values.clients);
const fileCount = Number(values.files);
const connections = Number(values.connections);
const rune = requireBinary();
const require = createRequire(join(ROOT, 'package.json'));
const { request, close: closeClient } = httpClient(connections);
const startRune = (home) => start(home, rune);
const adminApi = (url) => signIn(request, url);

async function startHello() {
  const code = `
    const fastify = require(${JSON.stringify(require.resolve('fastify'))})({ logger: false });
    fastify.get('/', async () => ({ hello: 'world' }));
    fastify.listen({ host: '127.0.0.1', port: 0 }).then(() => process.stderr.write('port ' + fastify.server.address().port + '\\n'));`;
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'ignore', 'pipe'] });
  const [, port] = await waitForLine(child, /port (\d+)/);
  return { child, url: `http://127.0.0.1:${port}`, stop: () => child.kill('SIGTERM') };
}

/** Requests per second, and the server's CPU µs per request (the client may be the bottleneck). */
async function throughput(url, pid) {
  const cpuBefore = cpuMicros(pid);
  let done = 0;
  const until = Date.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (Date.now() < until) {
        const res = await request(url);
        if (res.status !== 200) throw new Error(`${url}: ${res.status} ${res.body}`);
        done++;
      }
    }),
  );
  cpuPerRequest.get(url)?.push((cpuMicros(pid) - cpuBefore) / done) ??
    cpuPerRequest.set(url, [(cpuMicros(pid) - cpuBefore) / done]);
  return done / seconds;
}
const cpuPerRequest = new Map();

const collab = () =>
  collabLatency({
    rune,
    baseline: values.baseline,
    also: values.also.map((spec) => {
      const at = spec.indexOf('=');
      if (at < 1) throw new Error(`--also ${spec}: expected NAME=BIN`);
      return { name: spec.slice(0, at), bin: requireBinary(spec.slice(at + 1)) };
    }),
    typists: Number(values.typists),
    typingSeconds: Number(values['typing-seconds']),
    slices: Number(values.slices),
    Y: require('yjs'),
  });

if (values.only === 'collab') {
  await collab();
  closeClient();
  process.exit(0);
}

const home = mkdtempSync(join(tmpdir(), 'rune-bench-notes-'));
// Every client of this bench is one address (127.0.0.1): the per-address limits that protect a real
// server from one client (16 event streams, 120 searches a minute) are raised to what it measures.
writeFileSync(
  join(home, 'rune.toml'),
  `[notes.limits]
max_streams_per_client = ${sseClients + 16}
max_streams_per_note = ${sseClients + 16}
max_connections_per_client = ${sseClients + connections + 64}
expensive_per_minute = 100000
[notes.local]
admins = ["bench:benchpass"]
`,
);
let server = await startRune(home);
let api = await adminApi(server.url);
await api('/api/notes', 'POST', { name: 'bench', public: true });
await api('/api/notes/bench/files', 'POST', {
  name: 'index.md',
  content: `# Bench\n\n${'Some text. '.repeat(100)}\n`,
});

// 1. reads per second
const hello = await startHello();
const samples = { hello: [], health: [], rune: [] };
for (let round = 0; round < 3; round++) {
  samples.hello.push(await throughput(`${hello.url}/`, hello.child.pid));
  samples.health.push(await throughput(`${server.url}/healthz`, server.child.pid));
  samples.rune.push(await throughput(`${server.url}/api/notes/bench/files/index.md`, server.child.pid));
}
hello.stop();
const helloRate = median(samples.hello);
const runeRate = median(samples.rune);
console.log(`\nreads/s over ${connections} keep-alive connections, ${seconds} s × 3 interleaved rounds`);
console.log(`  bare fastify hello-world          ${helloRate.toFixed(0).padStart(8)} req/s  (baseline)`);
const healthRate = median(samples.health);
console.log(
  `  rune GET /healthz (no database)   ${healthRate.toFixed(0).padStart(8)} req/s  ratio ${(healthRate / helloRate).toFixed(3)}`,
);
console.log(
  `  GET public file (guest)           ${runeRate.toFixed(0).padStart(8)} req/s  ratio ${(runeRate / helloRate).toFixed(3)}  (goal ≥ 0.5)`,
);

const cpu = (url) => median(cpuPerRequest.get(url));
const helloCpu = cpu(`${hello.url}/`);
console.log('  server CPU per request (independent of the client):');
console.log(
  `    hello-world ${helloCpu.toFixed(0)} µs, /healthz ${cpu(`${server.url}/healthz`).toFixed(0)} µs, public file ${cpu(`${server.url}/api/notes/bench/files/index.md`).toFixed(0)} µs → rate ratio ${(helloCpu / cpu(`${server.url}/api/notes/bench/files/index.md`)).toFixed(3)}`,
);

// 2. SSE fan-out. The clients live in several processes so that their own parsing does not queue
// behind each other; times come from the monotonic clock, which all processes share.
const WORKERS = 4;
const clientScript = `
  const http = require('node:http');
  const [url, count] = [process.argv[1], Number(process.argv[2])];
  let ready = 0;
  for (let i = 0; i < count; i++) {
    http.get(url, { agent: false }, (res) => {
      let buffer = '';
      let hello = false;
      res.setEncoding('utf8').on('data', (chunk) => {
        const at = process.hrtime.bigint();
        buffer += chunk;
        if (!hello && buffer.includes('event: hello')) { hello = true; if (++ready === count) process.stdout.write('ready\\n'); }
        let i = buffer.indexOf('event: file.saved');
        while (i >= 0) {
          const end = buffer.indexOf('\\n\\n', i);
          if (end < 0) break;
          const revision = /"revision":(\\d+)/.exec(buffer.slice(i, end))[1];
          process.stdout.write(revision + ' ' + at + '\\n');
          buffer = buffer.slice(end + 2);
          i = buffer.indexOf('event: file.saved');
        }
        if (buffer.length > 100000) buffer = buffer.slice(-1000);
      });
    });
  }`;
const delays = [];
/** revision → {sent (ns), count, resolve} */
const waiting = new Map();
const workers = [];
await Promise.all(
  Array.from({ length: WORKERS }, (_, w) => {
    const count = Math.floor(sseClients / WORKERS) + (w < sseClients % WORKERS ? 1 : 0);
    const child = spawn(
      process.execPath,
      ['-e', clientScript, `${server.url}/api/events?note_id=bench`, String(count)],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    workers.push(child);
    return new Promise((resolve) => {
      let rest = '';
      child.stdout.setEncoding('utf8').on('data', (chunk) => {
        const lines = (rest + chunk).split('\n');
        rest = lines.pop();
        for (const line of lines) {
          if (line === 'ready') resolve();
          else {
            const [revision, at] = line.split(' ');
            const wait = waiting.get(Number(revision));
            if (!wait) continue;
            delays.push(Number(BigInt(at) - wait.sent) / 1e6);
            if (++wait.count === sseClients) wait.resolve();
          }
        }
      });
    });
  }),
);
let revision = JSON.parse((await api('/api/notes/bench/files/index.md')).body).revision;
// The first edits load the file's document and compile the code paths: counted apart as "cold".
const WARMUP = 3;
let coldMax = 0;
for (let i = 0; i < 30 + WARMUP; i++) {
  if (i === WARMUP) {
    coldMax = Math.max(...delays);
    delays.length = 0;
  }
  const all = new Promise((resolve) =>
    waiting.set(revision + 1, { sent: process.hrtime.bigint(), count: 0, resolve }),
  );
  const put = await api('/api/notes/bench/files/index.md', 'PUT', {
    content: `# Bench edit ${i}\n`,
    base_revision: revision,
  });
  revision = JSON.parse(put.body).revision;
  await all;
}
for (const child of workers) child.kill();
console.log(`\nedit → ${sseClients} SSE clients, ${delays.length} deliveries`);
console.log(
  `  p50 ${percentile(delays, 50).toFixed(1)} ms   p99 ${percentile(delays, 99).toFixed(1)} ms   (goal p99 ≤ 100 ms)`,
);
console.log(
  `  first ${WARMUP} edits (cold document, code not yet compiled): slowest delivery ${coldMax.toFixed(1)} ms`,
);

// 3. FTS over many files: filled straight into the database while the server is stopped.
await server.stop();
const Database = require('better-sqlite3');
const db = new Database(join(home, 'notes', 'notes.db'));
const words = Array.from({ length: 5000 }, (_, i) => `w${i.toString(36)}x`);
let seed = 42;
const rand = () => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff;
  return seed / 0x7fffffff;
};
const noteId = db
  .prepare("insert into notes(name, public, created_at, updated_at) values ('corpus', 1, ?, ?)")
  .run('2026-01-01', '2026-01-01').lastInsertRowid;
const insert = db.prepare(
  'insert into files(note_id, name, public, revision, content, created_at, updated_at) values (?, ?, 1, 1, ?, ?, ?)',
);
db.transaction(() => {
  for (let i = 0; i < fileCount; i++) {
    const text = Array.from({ length: 60 }, () => words[Math.floor(rand() * words.length)]).join(' ');
    insert.run(noteId, `f${i}.md`, text, '2026-01-01', '2026-01-01');
  }
})();
db.pragma('wal_checkpoint(TRUNCATE)');
db.close();
server = await startRune(home);
api = await adminApi(server.url);
const timeQuery = async (q) => {
  const start = performance.now();
  const res = await api(`/api/search?q=${encodeURIComponent(q)}`);
  if (res.status !== 200) throw new Error(res.body);
  return performance.now() - start;
};
const fts = [];
const base = [];
for (let i = 0; i < 200; i++) {
  base.push(await timeQuery('nosuchwordanywhere'));
  fts.push(await timeQuery(words[Math.floor(rand() * words.length)]));
}
console.log(`\nsearch over ${fileCount} files (200 queries, one word each)`);
console.log(
  `  no hits (baseline)  p50 ${percentile(base, 50).toFixed(1)} ms  p95 ${percentile(base, 95).toFixed(1)} ms`,
);
console.log(
  `  one word            p50 ${percentile(fts, 50).toFixed(1)} ms  p95 ${percentile(fts, 95).toFixed(1)} ms  (goal p95 ≤ 20 ms)`,
);
await server.stop();
if (values.only !== 'reads') await collab();
closeClient();
