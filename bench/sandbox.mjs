// Cost of the sandbox per tool call: bare /bin/true vs the same in every layer this machine offers.
//   - `rune sandbox -- /bin/true`: the user-facing command (includes one Node start of rune);
//   - the embedded helper alone with the arguments the executor passes (what each agent tool call
//     pays, since the executor runs inside the already started rune);
//   - `bwrap --unshare-all --ro-bind / / /bin/true` (Debian's bubblewrap) for comparison.
// Goal (issue 5): ≤ 22 ms here. `rune sandbox` pays a Node start (~65 ms) before any layer, so the
// goal is met by the per-call path; the CLI line shows what the layers add to rune's own start.
// Medians of interleaved runs, as ratios.
//   node bench/sandbox.mjs [--rounds 40]
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { interleave, median, report, requireBinary, timeOnce } from './lib.mjs';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '40' } } });
const rounds = Math.max(30, Number(values.rounds));
const rune = requireBinary();
const home = mkdtempSync(join(tmpdir(), 'rune-bench-sandbox-'));
const work = mkdtempSync(join(tmpdir(), 'rune-bench-work-'));
const env = { PATH: '/usr/bin:/bin', HOME: home };

// One run materialises the helper into $HOME/.rune/cache/native; the bench then calls it directly.
const first = spawnSync(rune, ['sandbox', '--layers', '--', '/bin/true'], { env, encoding: 'utf8' });
if (first.status !== 0) {
  console.error(`rune sandbox failed: ${first.stderr}`);
  process.exit(1);
}
console.log(`layers applied by rune sandbox on this machine:\n${first.stderr.trimEnd()}`);
const cache = join(home, '.rune', 'cache', 'native');
const helperName = readdirSync(cache).find((n) => n.startsWith('rune-sandbox-'));
if (!helperName) throw new Error(`no helper in ${cache}`);
const helper = join(cache, helperName);
const system = [
  '/usr',
  '/bin',
  '/sbin',
  '/lib',
  '/lib32',
  '/lib64',
  '/libx32',
  '/etc',
  '/opt',
  '/proc',
  '/sys',
  '/dev',
];
const writable = [
  '/dev/null',
  '/dev/zero',
  '/dev/full',
  '/dev/tty',
  '/dev/ptmx',
  '/dev/pts',
  '/dev/shm',
  '/tmp',
  work,
];
const helperArgs = [
  '--cwd',
  work,
  ...system.flatMap((p) => ['--ro', p]),
  '--ro',
  work,
  ...writable.flatMap((p) => ['--rw', p]),
  ...['/etc/shadow', '/etc/gshadow'].flatMap((p) => ['--hide', p]),
  ...[
    '--tmp-mb',
    '512',
    '--fsize',
    String(1 << 30),
    '--nofile',
    '4096',
    '--nproc',
    '512',
    '--data',
    String(2 << 30),
  ],
  '--',
  '/bin/true',
];

const cases = {
  '/bin/true': () => timeOnce('/bin/true', [], { env }),
  'helper, every layer (per tool call)': () => timeOnce(helper, helperArgs, { env }),
  'rune sandbox -- /bin/true': () => timeOnce(rune, ['sandbox', '--', '/bin/true'], { env }),
  'rune --sandbox off sandbox -- /bin/true': () =>
    timeOnce(rune, ['--sandbox', 'off', 'sandbox', '--', '/bin/true'], { env }),
};
const bwrap = ['/usr/bin/bwrap', '/bin/bwrap'].find((p) => existsSync(p));
const bwrapArgs = ['--unshare-all', '--ro-bind', '/', '/', '/bin/true'];
if (bwrap && spawnSync(bwrap, bwrapArgs).status === 0) {
  cases['bwrap --unshare-all --ro-bind / / /bin/true'] = () => timeOnce(bwrap, bwrapArgs, { env });
} else {
  console.log(
    `\nbwrap skipped: ${bwrap ? `${bwrap} cannot create namespaces here` : 'not installed (apt-get install -y bubblewrap)'}`,
  );
}
const samples = interleave(cases, rounds);
report(`sandbox cost, ${rounds} interleaved rounds`, samples, '/bin/true');
const perCall = median(samples['helper, every layer (per tool call)']) - median(samples['/bin/true']);
console.log(`  per-call overhead of the layers: ${perCall.toFixed(1)} ms (goal ≤ 22 ms)`);
const cliLayers =
  median(samples['rune sandbox -- /bin/true']) - median(samples['rune --sandbox off sandbox -- /bin/true']);
console.log(
  `  rune sandbox: layers add ${cliLayers.toFixed(1)} ms to rune's own start (kernel probe + helper)`,
);
if (cases['bwrap --unshare-all --ro-bind / / /bin/true']) {
  const ratio =
    median(samples['helper, every layer (per tool call)']) /
    median(samples['bwrap --unshare-all --ro-bind / / /bin/true']);
  console.log(`  helper / bwrap: ${ratio.toFixed(2)}`);
}
rmSync(home, { recursive: true, force: true });
rmSync(work, { recursive: true, force: true });
