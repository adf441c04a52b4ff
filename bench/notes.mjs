// rune notes under load, each figure against a baseline measured in the same run:
//   1. note reads per second (GET of a public file) vs a bare fastify hello-world (goal ≥ 50 %),
//   2. delay for an edit to reach 200 SSE clients, p50/p99 (goal p99 ≤ 100 ms),
//   (full-text search over a million files, and reads against a bare fastify serving the same
//   bytes: bench/notes-public.mjs)
//   4. acknowledgement latency of collaborative updates with 20 typists, p50/p99: the durable update
//      log with synchronous = normal (default) and full, side by side with a binary from before the
//      log (--baseline BIN, built from 0d6a4c0; goal: at most +2 ms at p99), typed in --slices
//      interleaved slices (bench/notes/collab.mjs).
//   node bench/notes.mjs [--seconds 5] [--clients 200]
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
import { fanOut } from './notes/fanout.mjs';
import { httpClient, load, adminApi as signIn, startRune as start, waitForLine } from './notes/lib.mjs';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '5' },
    clients: { type: 'string', default: '200' },
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
  const { rate, cpu } = await load({ request, url, pid, seconds, connections });
  cpuPerRequest.get(url)?.push(cpu) ?? cpuPerRequest.set(url, [cpu]);
  return rate;
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
const server = await startRune(home);
const api = await adminApi(server.url);
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

// 2. SSE fan-out (bench/notes/fanout.mjs).
const { delays, coldMax } = await fanOut({
  url: server.url,
  api,
  note: 'bench',
  file: 'index.md',
  clients: sseClients,
  Y: require('yjs'),
});
const WARMUP = 3;
console.log(`\nedit → ${sseClients} SSE clients, ${delays.length} deliveries`);
console.log(
  `  p50 ${percentile(delays, 50).toFixed(1)} ms   p99 ${percentile(delays, 99).toFixed(1)} ms   (goal p99 ≤ 100 ms)`,
);
console.log(
  `  first ${WARMUP} edits (cold document, code not yet compiled): slowest delivery ${coldMax.toFixed(1)} ms`,
);

await server.stop();
if (values.only !== 'reads') await collab();
closeClient();
