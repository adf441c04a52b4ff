// Cost of the net guard per supervised call, measured inside Python (Debian's python3) so process
// start-up is left out: N TCP connects (+ close) to a loopback server on the host, and N unix-socket
// connects to a server of the command's own, side by side:
//   - TCP: python on the host (baseline) vs the same inside `rune sandbox --allow-domain IP:PORT`
//     (every connect goes to the guard, which makes and connects the host socket);
//   - unix: inside `rune sandbox` without allowed domains (no guard) vs with one (every connect is
//     supervised and run by the connector inside the sandbox).
// Medians of interleaved runs, as ratios of the per-connect time.
//   node bench/net-guard.mjs [--connects 300] [--rounds 15]
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { interleave, median, requireBinary } from './lib.mjs';

const { values } = parseArgs({
  options: { connects: { type: 'string', default: '300' }, rounds: { type: 'string', default: '15' } },
});
const connects = Number(values.connects);
const rounds = Math.max(5, Number(values.rounds));
const rune = requireBinary();
const PY = '/usr/bin/python3';

const work = mkdtempSync(join(tmpdir(), 'rune-bench-guard-'));
const home = mkdtempSync(join(tmpdir(), 'rune-bench-guard-home-'));
const env = { PATH: '/usr/bin:/bin', HOME: home };
// The server runs in its own process: spawnSync below blocks this one's event loop.
const server = spawn(
  PY,
  [
    '-c',
    'import socket\ns = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(512); print(s.getsockname()[1], flush=True)\nwhile True:\n    c, _ = s.accept(); c.close()',
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
const port = await new Promise((resolve) =>
  server.stdout.once('data', (d) => resolve(Number(String(d).trim()))),
);

const tcp = join(work, 'tcp.py');
writeFileSync(
  tcp,
  `import socket, sys, time
n = int(sys.argv[1]); port = int(sys.argv[2])
start = time.perf_counter()
for _ in range(n):
    s = socket.socket(); s.connect(("127.0.0.1", port)); s.close()
print((time.perf_counter() - start) / n * 1e6)
`,
);
const unix = join(work, 'unix.py');
writeFileSync(
  unix,
  `import os, socket, sys, threading, time
n = int(sys.argv[1])
path = "bench.sock"
srv = socket.socket(socket.AF_UNIX); srv.bind(path); srv.listen(64)
def serve():
    while True:
        c, _ = srv.accept(); c.close()
threading.Thread(target=serve, daemon=True).start()
start = time.perf_counter()
for _ in range(n):
    s = socket.socket(socket.AF_UNIX); s.connect(path); s.close()
print((time.perf_counter() - start) / n * 1e6)
os.unlink(path)
`,
);

/** Runs a command that prints microseconds per connect; returns them (interleave wants a number). */
const perConnect =
  (cmd, args, cwd = work) =>
  () => {
    const result = spawnSync(cmd, args, { env, cwd, encoding: 'utf8' });
    const value = Number(result.stdout.trim().split('\n').at(-1));
    if (result.status !== 0 || !Number.isFinite(value))
      throw new Error(`${cmd} ${args.join(' ')}: ${result.stderr.slice(0, 500)}`);
    return value;
  };
const sandbox = (extra, script) => [
  'sandbox',
  '--allow-write',
  work,
  ...extra,
  '--',
  PY,
  script,
  String(connects),
  String(port),
];

const samples = interleave(
  {
    'tcp connect, python on the host': perConnect(PY, [tcp, String(connects), String(port)]),
    'tcp connect, rune sandbox (net guard)': perConnect(
      rune,
      sandbox(['--allow-domain', `127.0.0.1:${port}`], tcp),
    ),
    'unix connect, rune sandbox (no guard)': perConnect(rune, sandbox([], unix)),
    'unix connect, rune sandbox (guard + connector)': perConnect(
      rune,
      sandbox(['--allow-domain', `127.0.0.1:${port}`], unix),
    ),
  },
  rounds,
  1,
);
console.log(`\nnet guard: microseconds per connect, ${connects} connects, ${rounds} interleaved rounds`);
const base = median(samples['tcp connect, python on the host']);
for (const [name, values] of Object.entries(samples))
  console.log(
    `  ${name.padEnd(48)} median ${median(values).toFixed(0).padStart(6)} µs  ratio ${(median(values) / base).toFixed(2)}`,
  );
const unixRatio =
  median(samples['unix connect, rune sandbox (guard + connector)']) /
  median(samples['unix connect, rune sandbox (no guard)']);
const tcpAdded = median(samples['tcp connect, rune sandbox (net guard)']) - base;
console.log(
  `  the guard adds ${tcpAdded.toFixed(0)} µs to a TCP connect; unix connect, guard + connector / no guard: ${unixRatio.toFixed(2)}`,
);
server.kill();
rmSync(work, { recursive: true, force: true });
rmSync(home, { recursive: true, force: true });
