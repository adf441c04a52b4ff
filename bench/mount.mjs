// One read_file call through `rune mount` (write the arguments to tools/read_file, read the result)
// against the same call made in-process, side by side: interleaved rounds, medians and ratios.
// The baseline is the mount's own call path without FUSE (src/mount/invoke.ts: the tool's checks,
// the policy gate and its audit line, as a model's call), so the ratio is what the files cost:
// FUSE, the hand-over between the FUSE thread and Node's, the session slot. Two mount rows: the
// system calls `echo … > f; cat f` make (from this process), and a shell running them (a fork and
// exec of sh and cat included).
//   node bench/mount.mjs [--rounds 200]
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildSync } from 'esbuild';
import { median, percentile, ROOT, requireBinary } from './lib.mjs';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '200' } } });
const rounds = Math.max(20, Number(values.rounds));
const bin = requireBinary();
if (!existsSync('/dev/fuse')) {
  console.log('skipped: no /dev/fuse on this machine (rune doctor says why)');
  process.exit(0);
}

const work = mkdtempSync(join(tmpdir(), 'rune-bench-mount-'));
const project = join(work, 'project');
const mnt = join(work, 'mnt');
const runeHome = join(work, '.rune');
for (const dir of [project, mnt, runeHome]) mkdirSync(dir, { recursive: true });
const text = Array.from(
  { length: 100 },
  (_, i) => `line ${i + 1}: the quick brown fox jumps over the lazy dog`,
).join('\n');
writeFileSync(join(project, 'file.txt'), `${text}\n`);
const env = { PATH: '/usr/bin:/bin', HOME: work, RUNE_HOME: runeHome, LC_ALL: 'C.UTF-8' };
const input = '{"path":"file.txt"}\n';

// The in-process side, bundled from the sources with the native addon laid out as the build does.
const assets = join(work, 'assets');
const addon = join(ROOT, 'native/build/Release/rune_native.node');
mkdirSync(join(assets, 'native'), { recursive: true });
copyFileSync(addon, join(assets, 'native/rune_native.node'));
writeFileSync(
  join(assets, 'manifest.json'),
  JSON.stringify({
    version: 'bench',
    sha256: { 'native/rune_native.node': createHash('sha256').update(readFileSync(addon)).digest('hex') },
  }),
);
const harness = join(work, 'in-process.cjs');
buildSync({
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  logLevel: 'error',
  outfile: harness,
  stdin: {
    loader: 'ts',
    resolveDir: ROOT,
    contents: `
      import { loadConfig } from './src/config/load.ts';
      import { devAssets } from './src/core/assets.ts';
      import { silentLogger } from './src/core/logger.ts';
      import { runMountedCall } from './src/mount/invoke.ts';
      import { createPolicyGate } from './src/policy/gate.ts';
      import { createSandboxExecutor } from './src/sandbox/executor.ts';
      import { ToolRegistry } from './src/tools/registry.ts';
      export function setup(assets, cwd, env) {
        devAssets.dir = assets;
        const { config } = loadConfig({ env });
        const gate = createPolicyGate({ config, cwd, env, interactive: false, yes: false, sessionId: 'bench', logger: silentLogger });
        const calls = {
          registry: new ToolRegistry(),
          gate,
          executor: createSandboxExecutor({ config, logger: silentLogger }),
          context: { config, cwd, env },
          serverLayers: () => undefined,
          signal: new AbortController().signal,
        };
        return (input) => runMountedCall(calls, { tool: 'read_file', path: 'tools/read_file', input, caller: { pid: process.pid, sid: 0 } });
      }`,
  },
});
const call = createRequire(import.meta.url)(harness).setup(assets, project, env);

const server = spawn(bin, ['mount', mnt, '--foreground'], {
  cwd: project,
  env,
  stdio: ['ignore', 'ignore', 'pipe'],
});
let stderr = '';
server.stderr.setEncoding('utf8').on('data', (chunk) => {
  stderr += chunk;
});
for (let i = 0; i < 600 && !stderr.includes(' serves '); i++) await new Promise((r) => setTimeout(r, 50));
if (!stderr.includes(' serves ')) {
  console.error(`rune mount did not start: ${stderr}`);
  server.kill('SIGKILL');
  process.exit(1);
}
const endpoint = join(mnt, 'tools/read_file');
const expected = `${text}\n`;
const check = (out) => {
  if (!out.startsWith('line 1: the quick')) throw new Error(`unexpected result: ${out.slice(0, 200)}`);
};

const cases = {
  'read_file in-process (baseline)': async () => {
    const t0 = process.hrtime.bigint();
    const outcome = await call(input);
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    check(outcome.text);
    return ms;
  },
  'rune mount: write + read (this process)': async () => {
    const t0 = process.hrtime.bigint();
    writeFileSync(endpoint, input);
    const out = readFileSync(endpoint, 'utf8');
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    check(out);
    return ms;
  },
  'rune mount: sh -c "echo … > f; cat f"': async () => {
    const t0 = process.hrtime.bigint();
    const r = spawnSync('/bin/sh', ['-c', `echo '{"path":"file.txt"}' > ${endpoint}; cat ${endpoint}`], {
      encoding: 'utf8',
    });
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    check(r.stdout);
    return ms;
  },
  'sh -c "echo … > f; cat f" on a plain file': async () => {
    const plain = join(work, 'plain');
    const t0 = process.hrtime.bigint();
    const r = spawnSync('/bin/sh', ['-c', `echo '${expected.slice(0, 40)}' > ${plain}; cat ${plain}`], {
      encoding: 'utf8',
    });
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    if (!r.stdout.startsWith('line 1')) throw new Error('plain file round trip failed');
    return ms;
  },
};

const names = Object.keys(cases);
for (let i = 0; i < 5; i++) for (const name of names) await cases[name]();
const samples = Object.fromEntries(names.map((name) => [name, []]));
for (let i = 0; i < rounds; i++) for (const name of names) samples[name].push(await cases[name]());
server.kill('SIGTERM');
await new Promise((resolve) => server.once('exit', resolve));

const base = median(samples[names[0]]);
console.log(`one read_file call (a ${expected.length}-byte file), ${rounds} interleaved rounds`);
for (const name of names) {
  const m = median(samples[name]);
  const ratio = name === names[0] ? '(baseline)' : `ratio ${(m / base).toFixed(2)}`;
  console.log(
    `  ${name.padEnd(44)} median ${m.toFixed(3).padStart(8)} ms  p90 ${percentile(samples[name], 90).toFixed(3).padStart(8)} ms  ${ratio}`,
  );
}
const shell = median(samples[names[2]]) - median(samples[names[3]]);
console.log(
  `  the mount's part of the shell round trip (shell row minus the plain-file row): ${shell.toFixed(3)} ms`,
);
