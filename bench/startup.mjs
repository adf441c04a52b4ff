// Start-up of rune against Node's own: `rune --version` vs `node -e 0` (goal: ratio ≤ 1.10), the
// same with a binary built without the SEA code cache, and a mode's cold start (first run:
// addons extracted, no V8 code cache yet) vs its warm start.
//   node bench/startup.mjs [--rounds 25] [--no-variant]
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { interleave, median, ROOT, report, requireBinary, timeOnce } from './lib.mjs';

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '25' }, 'no-variant': { type: 'boolean' } },
});
const rounds = Number(values.rounds);
const rune = requireBinary();
const home = mkdtempSync(join(tmpdir(), 'rune-bench-home-'));
const env = { PATH: '/usr/bin:/bin', HOME: home };

const cases = {
  'node -e 0': () => timeOnce(process.execPath, ['-e', '0'], { env }),
  'rune --version (code cache)': () => timeOnce(rune, ['--version'], { env }),
};
let variantDir;
if (!values['no-variant']) {
  variantDir = mkdtempSync(join(tmpdir(), 'rune-bench-nocache-'));
  execFileSync(process.execPath, [join(ROOT, 'scripts/build.mjs'), '--out', variantDir, '--no-code-cache'], {
    stdio: 'ignore',
  });
  cases['rune --version (no code cache)'] = () => timeOnce(join(variantDir, 'rune'), ['--version'], { env });
}
const versionSamples = interleave(cases, rounds);
report(
  `rune --version vs node -e 0, ${rounds} interleaved rounds (load ${loadavg()[0].toFixed(1)})`,
  versionSamples,
  'node -e 0',
);
const versionRatio =
  median(versionSamples['rune --version (code cache)']) / median(versionSamples['node -e 0']);
console.log(`  goal ≤ 1.10: ${versionRatio <= 1.1 ? 'met' : 'NOT met'} (${versionRatio.toFixed(3)})`);

// Cold: a fresh RUNE_HOME each time, so addons are extracted and no code cache exists.
// Warm: one RUNE_HOME reused. doctor loads the cli bundle and both native addons.
const warmHome = mkdtempSync(join(tmpdir(), 'rune-bench-warm-'));
let n = 0;
const modeCases = {
  'node -e 0': () => timeOnce(process.execPath, ['-e', '0'], { env }),
  'rune doctor --json (cold)': () => {
    const fresh = join(home, `cold-${n++}`);
    const ms = timeOnce(rune, ['doctor', '--json'], { env: { ...env, RUNE_HOME: fresh } });
    rmSync(fresh, { recursive: true, force: true });
    return ms;
  },
  'rune doctor --json (warm)': () =>
    timeOnce(rune, ['doctor', '--json'], { env: { ...env, RUNE_HOME: warmHome } }),
  'rune --help (warm)': () => timeOnce(rune, ['--help'], { env: { ...env, RUNE_HOME: warmHome } }),
};
const modeSamples = interleave(modeCases, Math.max(10, Math.round(rounds / 2)));
report('cold (first extraction) vs warm start of a mode', modeSamples, 'node -e 0');
const cold = median(modeSamples['rune doctor --json (cold)']);
const warm = median(modeSamples['rune doctor --json (warm)']);
console.log(`  cold − warm: ${(cold - warm).toFixed(1)} ms`);

for (const dir of [home, warmHome, variantDir]) if (dir) rmSync(dir, { recursive: true, force: true });
