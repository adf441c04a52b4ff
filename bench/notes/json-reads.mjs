// JSON API reads before and after the response schemas (src/notes/api-routes.ts: fastify writes a
// declared answer with fast-json-stringify instead of JSON.stringify): the server's CPU per request
// of signed-in reads that go through the serializer, for a build from before (--before BIN) and
// this one (--after BIN, default dist/rune), both started alike with the same note of --files
// files, loaded in interleaved rounds so drift in the machine's load hits both alike.
//   node bench/notes/json-reads.mjs --before BIN [--after BIN] [--files 200] [--seconds 3]
//                                   [--rounds 3] [--connections 16]
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { median, requireBinary } from '../lib.mjs';
import { adminApi, httpClient, load, startRune } from './lib.mjs';

const { values } = parseArgs({
  options: {
    before: { type: 'string', default: process.env.RUNE_BASELINE_BIN },
    after: { type: 'string' },
    files: { type: 'string', default: '200' },
    seconds: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '16' },
  },
});
if (!values.before) throw new Error('give --before BIN (a build from before the response schemas)');
const builds = [
  { name: 'before', bin: requireBinary(values.before) },
  { name: 'after', bin: requireBinary(values.after) },
];
const connections = Number(values.connections);
const { request, close } = httpClient(connections);
const homes = [];
process.on('exit', () => {
  for (const home of homes) {
    rmSync(home, { recursive: true, force: true });
    rmSync(`${home}-notes-workspace`, { recursive: true, force: true });
  }
});

async function start(build) {
  const home = mkdtempSync(join(tmpdir(), 'rune-bench-json-'));
  homes.push(home);
  writeFileSync(
    join(home, 'rune.toml'),
    '[notes.limits]\nexpensive_per_minute = 1000000\nfiles_per_minute = 1000000\nrevisions_per_minute = 1000000\n[notes.local]\nadmins = ["bench:benchpass"]\n',
  );
  const server = await startRune(home, build.bin);
  const api = await adminApi(request, server.url);
  await api('/api/notes', 'POST', { name: 'bench', public: true });
  for (let i = 0; i < Number(values.files); i++) {
    const res = await api('/api/notes/bench/files', 'POST', {
      name: `file ${i}.md`,
      content: `# File ${i}\n`,
    });
    if (res.status !== 201) throw new Error(`${build.name}: creating a file: ${res.status} ${res.body}`);
  }
  for (let i = 0; i < 20; i++) {
    await api('/api/notes/bench/files/file%200.md', 'PUT', {
      content: `# File 0, take ${i}\n`,
      base_revision: i + 1,
    });
  }
  return { ...build, server, headers: { authorization: `Bearer ${api.token}` } };
}

/** Signed-in reads whose answers fastify serializes (not the pre-rendered visitor reads). */
const PATHS = [
  '/api/notes',
  '/api/notes/bench',
  '/api/notes/bench/files',
  '/api/notes/bench/files/file%200.md/revisions',
];

const started = [];
for (const build of builds) started.push(await start(build));
const samples = new Map();
for (let round = 0; round < Number(values.rounds); round++) {
  for (const path of PATHS) {
    for (const b of round % 2 ? [...started].reverse() : started) {
      const r = await load({
        request,
        url: `${b.server.url}${path}`,
        pid: b.server.child.pid,
        seconds: Number(values.seconds),
        connections,
        headers: b.headers,
      });
      const key = `${path}\0${b.name}`;
      if (!samples.has(key)) samples.set(key, []);
      samples.get(key).push(r);
    }
  }
}
const cpus = (await import('node:os')).cpus();
console.log(
  `JSON reads, signed in, ${values.files} files in the note; ${connections} keep-alive connections, ${values.seconds} s × ${values.rounds} interleaved rounds; median server CPU per request`,
);
console.log(
  `machine: ${cpus.length} × ${cpus[0]?.model ?? '?'}; load average at the end ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
);
for (const path of PATHS) {
  const [before, after] = ['before', 'after'].map((name) => {
    const rs = samples.get(`${path}\0${name}`);
    return { cpu: median(rs.map((r) => r.cpu)), rate: median(rs.map((r) => r.rate)) };
  });
  console.log(
    `  ${path.padEnd(46)} before ${before.cpu.toFixed(0).padStart(5)} µs  after ${after.cpu.toFixed(0).padStart(5)} µs  after/before ${(after.cpu / before.cpu).toFixed(2)}  (${before.rate.toFixed(0)} vs ${after.rate.toFixed(0)} req/s)`,
  );
}
for (const b of started) await b.server.stop();
close();
