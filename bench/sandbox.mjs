// Cost of the sandbox per tool call, side by side with its peers in one interleaved run:
//   - bare /bin/true;
//   - the embedded helper with exactly the command line the executor builds for a tool call
//     (rune -v logs it; cgroup joins left out), every layer on: what each agent tool
//     call pays, since the executor runs inside the already started rune;
//   - Codex CLI's sandbox (`codex sandbox -- /bin/true`), both its native binary and the npm
//     launcher users run: the goal is helper ≤ 0.25 × Codex's native sandbox;
//   - `bwrap --unshare-all --ro-bind / / /bin/true` (Debian's bubblewrap);
//   - `rune sandbox -- /bin/true`, which adds a Node start of rune to the helper (goal: ≤ 1.0 ×
//     Codex's native `codex sandbox -- /bin/true`); `--before BIN` adds another build side by side.
// Codex is installed on demand into bench/node_modules from bench/package.json (an exact version,
// never a dependency of rune); without network or npm the Codex lines are skipped with the reason.
// Medians of interleaved runs, as ratios.
//   node bench/sandbox.mjs [--rounds 40] [--before path/to/old/rune]
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmdirSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { interleave, median, report, requireBinary, timeOnce } from './lib.mjs';

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '40' }, before: { type: 'string' } },
});
const rounds = Math.max(30, Number(values.rounds));
const rune = requireBinary();
const here = dirname(fileURLToPath(import.meta.url));
const home = mkdtempSync(join(tmpdir(), 'rune-bench-sandbox-'));
const work = mkdtempSync(join(tmpdir(), 'rune-bench-work-'));
const env = { PATH: '/usr/bin:/bin', HOME: home };

// One call as a tool call makes it: its layers, and the helper command line the executor built.
function toolCall(bin, runEnv) {
  const first = spawnSync(
    bin,
    ['--verbose', 'sandbox', '--layers', '--allow-write', work, '--', '/bin/true'],
    {
      cwd: work,
      env: runEnv,
      encoding: 'utf8',
    },
  );
  if (first.status !== 0) {
    console.error(`${bin} sandbox failed: ${first.stderr}`);
    process.exit(1);
  }
  const logged = first.stderr
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line))
    .find((event) => event.event === 'sandbox.helper_argv');
  if (!logged) {
    // Seen with a dist/rune older than its source (a worktree not rebuilt since main moved).
    console.error(
      `${bin} did not log the helper command line (sandbox.helper_argv) under --verbose: is it a stale build? run npm run build, or point RUNE_BIN at a current one`,
    );
    process.exit(1);
  }
  const [helper, ...logArgs] = logged.argv;
  // The pooled cgroups were removed when rune exited: the call's are replaced by the bench's own.
  const args = logArgs.filter((arg, i) => arg !== '--cgroup' && logArgs[i - 1] !== '--cgroup');
  const cgroupBases = logArgs.filter((_, i) => logArgs[i - 1] === '--cgroup').map((dir) => dirname(dir));
  return {
    helper,
    args,
    cgroupBases,
    layers: first.stderr.slice(first.stderr.indexOf('rune sandbox layers:')),
  };
}

/** Empty cgroups of the bench under the bases a call used (cgroup v1 or delegated v2), when writable. */
function benchCgroups(bases) {
  const made = [];
  for (const base of bases) {
    const dir = join(base, `rune-bench-${process.pid}`);
    try {
      mkdirSync(dir);
      made.push(dir);
    } catch {
      return { made, args: [] };
    }
  }
  return { made, args: made.flatMap((dir) => ['--cgroup', dir]) };
}

const call = toolCall(rune, env);
console.log(call.layers.trimEnd());
const cgroups = benchCgroups(call.cgroupBases);
const beforeEnv = { ...env, RUNE_HOME: join(home, 'before') };
const beforeCall = values.before ? toolCall(requireBinary(values.before), beforeEnv) : undefined;

const cases = {
  '/bin/true': () => timeOnce('/bin/true', [], { env }),
  'helper, every layer (per tool call)': () => timeOnce(call.helper, call.args, { env, cwd: work }),
};
// What a tool call's helper really runs: every layer and the move into its cgroups (~7 ms of an RCU
// grace period on cgroup v1, overlapped with building the view since ADR 0028).
// A move right after another one finds the kernel's cgroup lock warm and is cheap: each of these
// runs after a pause, as a tool call does, so neither profits from the other's grace period.
const pause = new Int32Array(new SharedArrayBuffer(4));
const cold = (run) => () => {
  Atomics.wait(pause, 0, 0, 40);
  return run();
};
if (cgroups.args.length > 0) {
  cases['helper, every layer, joining its cgroups'] = cold(() =>
    timeOnce(call.helper, [...cgroups.args, ...call.args], { env, cwd: work }),
  );
  if (beforeCall)
    cases['before: helper, every layer, joining its cgroups'] = cold(() =>
      timeOnce(beforeCall.helper, [...cgroups.args, ...beforeCall.args], { env, cwd: work }),
    );
}

const codex = findCodex();
if (codex.problem) console.log(`\nCodex skipped: ${codex.problem}`);
else {
  const codexEnv = { ...env, CODEX_HOME: codex.home };
  cases['codex sandbox -- /bin/true (native binary)'] = () =>
    timeOnce(codex.native, ['sandbox', '--', '/bin/true'], { env: codexEnv, cwd: work });
  cases['codex sandbox -- /bin/true (npm launcher)'] = () =>
    timeOnce(codex.launcher, ['sandbox', '--', '/bin/true'], { env: codexEnv, cwd: work });
}

const bwrap = ['/usr/bin/bwrap', '/bin/bwrap'].find((p) => existsSync(p));
const bwrapArgs = ['--unshare-all', '--ro-bind', '/', '/', '/bin/true'];
if (bwrap && spawnSync(bwrap, bwrapArgs).status === 0) {
  cases['bwrap --unshare-all --ro-bind / / /bin/true'] = () => timeOnce(bwrap, bwrapArgs, { env });
} else {
  console.log(
    `\nbwrap skipped: ${bwrap ? `${bwrap} cannot create namespaces here` : 'not installed (apt-get install -y bubblewrap)'}`,
  );
}
cases['rune sandbox -- /bin/true'] = () => timeOnce(rune, ['sandbox', '--', '/bin/true'], { env, cwd: work });
if (values.before) {
  const before = requireBinary(values.before);
  cases['before: rune sandbox -- /bin/true'] = () =>
    timeOnce(before, ['sandbox', '--', '/bin/true'], { env: beforeEnv, cwd: work });
}

const samples = interleave(cases, rounds);
report(`sandbox cost, ${rounds} interleaved rounds (load ${loadavg()[0].toFixed(1)})`, samples, '/bin/true');
const perCall = median(samples['helper, every layer (per tool call)']);
console.log(`  per-call overhead of the layers: ${(perCall - median(samples['/bin/true'])).toFixed(1)} ms`);
const joining = samples['helper, every layer, joining its cgroups'];
if (joining) {
  const was = samples['before: helper, every layer, joining its cgroups'];
  console.log(
    `  joining the cgroups adds ${(median(joining) - perCall).toFixed(1)} ms to the helper${was ? ` (before: the whole call ${median(was).toFixed(1)} ms, now ${median(joining).toFixed(1)} ms)` : ''}`,
  );
} else console.log("  cgroups not joined here: no writable cgroup under the call's bases");
for (const peer of [
  'codex sandbox -- /bin/true (native binary)',
  'codex sandbox -- /bin/true (npm launcher)',
  'bwrap --unshare-all --ro-bind / / /bin/true',
]) {
  if (samples[peer]) console.log(`  helper / ${peer}: ${(perCall / median(samples[peer])).toFixed(3)}`);
}
if (samples['codex sandbox -- /bin/true (native binary)']) {
  const ratio = perCall / median(samples['codex sandbox -- /bin/true (native binary)']);
  console.log(
    `  goal helper ≤ 0.25 × Codex's sandbox: ${ratio <= 0.25 ? 'met' : 'NOT met'} (${ratio.toFixed(3)})`,
  );
}
const native = samples['codex sandbox -- /bin/true (native binary)'];
if (native) {
  const ratio = median(samples['rune sandbox -- /bin/true']) / median(native);
  console.log(
    `  goal rune sandbox ≤ 1.0 × codex sandbox (native): ${ratio <= 1 ? 'met' : 'NOT met'} (${ratio.toFixed(3)})`,
  );
  if (samples['before: rune sandbox -- /bin/true'])
    console.log(
      `  before: ${(median(samples['before: rune sandbox -- /bin/true']) / median(native)).toFixed(3)} × codex sandbox (native)`,
    );
}
// The helpers have exited: the bench's cgroups are empty and can go.
for (const dir of cgroups.made) rmdirSync(dir);
rmSync(home, { recursive: true, force: true });
rmSync(work, { recursive: true, force: true });

/** Codex from bench/node_modules, installed there on first use (bench/package.json pins it). */
function findCodex() {
  const launcher = join(here, 'node_modules', '.bin', 'codex');
  const native = join(
    here,
    'node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex',
  );
  if (process.arch !== 'x64' || process.platform !== 'linux')
    return {
      problem: `only the linux-x64 build is wired here (this is ${process.platform}-${process.arch})`,
    };
  if (!existsSync(native)) {
    console.log('\ninstalling the pinned Codex CLI into bench/node_modules (npm ci)…');
    mkdirSync(join(here, 'node_modules'), { recursive: true });
    const install = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: here, encoding: 'utf8' });
    if (install.status !== 0)
      return {
        problem: `npm ci in bench/ failed: ${(install.stderr || install.error?.message || '').trim().slice(0, 300)}`,
      };
  }
  if (!existsSync(native)) return { problem: `${native} is missing after the install` };
  // Not under /tmp: Codex refuses to set up its sandbox helper aliases in a temporary folder.
  const codexHome = join(here, 'node_modules', '.codex-home');
  mkdirSync(codexHome, { recursive: true });
  const probe = spawnSync(native, ['sandbox', '--', '/bin/true'], {
    env: { ...env, CODEX_HOME: codexHome },
    cwd: work,
    encoding: 'utf8',
  });
  if (probe.status !== 0)
    return { problem: `codex sandbox fails here: ${probe.stderr.trim().slice(0, 300)}` };
  return { launcher, native, home: codexHome };
}
