// Shared helpers for the benchmarks: interleaved runs of commands, medians and ratios.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const RUNE_BIN = resolve(process.env.RUNE_BIN ?? join(ROOT, 'dist/rune'));

export function requireBinary(path = RUNE_BIN) {
  if (!existsSync(path)) {
    console.error(`${path} is missing: run npm run build first`);
    process.exit(2);
  }
  return path;
}

/** Wall time of one run in ms; throws when the command fails, so a broken build never looks fast. */
export function timeOnce(cmd, args, options = {}) {
  const start = process.hrtime.bigint();
  const result = spawnSync(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'], ...options });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (result.status !== 0) {
    throw new Error(
      `${cmd} ${args.join(' ')} exited ${result.status}: ${result.stderr?.toString().slice(0, 500)}`,
    );
  }
  return ms;
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/**
 * Runs every case once per round, round after round, so drift in machine load hits all cases alike.
 * `cases` is {name: () => ms}. Returns {name: [ms…]}.
 */
export function interleave(cases, rounds, warmup = 2) {
  const names = Object.keys(cases);
  for (let i = 0; i < warmup; i++) for (const name of names) cases[name]();
  const samples = Object.fromEntries(names.map((name) => [name, []]));
  for (let i = 0; i < rounds; i++) for (const name of names) samples[name].push(cases[name]());
  return samples;
}

export function report(title, samples, baseline) {
  const base = median(samples[baseline]);
  console.log(`\n${title}`);
  for (const [name, values] of Object.entries(samples)) {
    const m = median(values);
    const ratio = name === baseline ? '(baseline)' : `ratio ${(m / base).toFixed(3)}`;
    console.log(
      `  ${name.padEnd(44)} median ${m.toFixed(1).padStart(7)} ms  p90 ${percentile(values, 90).toFixed(1).padStart(7)} ms  ${ratio}`,
    );
  }
}

/** Whether valgrind is installed (for instructionsOnce). */
export function hasValgrind() {
  return spawnSync('valgrind', ['--version'], { stdio: 'ignore' }).status === 0;
}

/**
 * Instructions one run executes (valgrind cachegrind's `I refs`, every thread): unlike wall time,
 * another process on the machine barely moves it, so two builds compare on a busy machine too.
 * `check(stdout)` must hold, so a broken run never looks cheap.
 */
export function instructionsOnce(cmd, args, options = {}, check = () => true) {
  const result = spawnSync(
    'valgrind',
    ['--tool=cachegrind', '--cache-sim=no', '--cachegrind-out-file=/dev/null', cmd, ...args],
    { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024, ...options },
  );
  const refs = /I\s+refs:\s+([\d,]+)/.exec(result.stderr ?? '');
  if (result.status !== 0 || !refs || !check(result.stdout ?? '')) {
    throw new Error(
      `valgrind ${cmd} ${args.join(' ')} failed (exit ${result.status}): ${(result.stderr ?? '').slice(-500)}`,
    );
  }
  return Number(refs[1].replaceAll(',', ''));
}
