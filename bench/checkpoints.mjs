// The cost of checkpoints per tool call, side by side with the same call without one: a repository
// of 10,000 files (three identical copies, one per case), execute_cmd through the real sandbox
// executor appending a line to one file, interleaved round after round. Goal: ≤ 10 ms added per
// call. Also: the first look at the repository (once per session), the cost with inotify switched
// off (every call scans the folder), the flush that makes a checkpoint durable (it runs while the
// model's next request is under way), and the store's size after 100 edits of different files.
// Needs `npm run build` (dist/assets: the addon and the sandbox helper).
//   node bench/checkpoints.mjs [--files 10000] [--rounds 30] [--edits 100]
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildSync } from 'esbuild';
import { median, percentile, ROOT, requireBinary } from './lib.mjs';

const { values } = parseArgs({
  options: {
    files: { type: 'string', default: '10000' },
    rounds: { type: 'string', default: '30' },
    edits: { type: 'string', default: '100' },
  },
});
const files = Number(values.files);
const rounds = Math.max(10, Number(values.rounds));
requireBinary();
// Outside /tmp: a tool's view has a private /tmp.
const work = mkdtempSync('/var/tmp/rune-bench-checkpoints-');
const runeHome = join(work, 'home', '.rune');
mkdirSync(runeHome, { recursive: true, mode: 0o700 });

/** A repository of `count` source files in folders of 20, ~1-5 KB each, with .git and .gitignore. */
function makeRepo(dir) {
  mkdirSync(join(dir, '.git'), { recursive: true });
  writeFileSync(join(dir, '.gitignore'), 'node_modules/\ndist/\n');
  let made = 0;
  for (let d = 0; made < count(); d++) {
    const folder = join(dir, 'src', `m${d % 20}`, `d${d}`);
    mkdirSync(folder, { recursive: true });
    for (let f = 0; f < 20 && made < count(); f++, made++)
      writeFileSync(
        join(folder, `f${f}.ts`),
        `// file ${made}\n${'export const x = 1;\n'.repeat(50 + (made % 200))}`,
      );
  }
}
const count = () => files;
const repos = ['a', 'b', 'c'].map((name) => join(work, name));
for (const repo of repos) makeRepo(repo);

const harness = join(work, 'harness.cjs');
buildSync({
  entryPoints: [join(ROOT, 'bench/checkpoints-harness.mts')],
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  logLevel: 'error',
  outfile: harness,
  banner: { js: `globalThis.__runeAssetDir = ${JSON.stringify(join(ROOT, 'dist/assets'))};` },
});

console.log(
  `checkpoints: ${files} files per repository, ${rounds} interleaved rounds, load ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')} on ${process.env.HOSTNAME ?? 'this machine'}`,
);
const result = spawnSync(process.execPath, [harness, ...repos, runeHome, String(rounds), values.edits], {
  encoding: 'utf8',
  maxBuffer: 64 * 1024 * 1024,
});
rmSync(work, { recursive: true, force: true });
if (result.status !== 0) {
  console.error(result.stderr);
  process.exit(1);
}
const out = JSON.parse(result.stdout);
const base = median(out.samples['command, no checkpoint (baseline)']);
for (const [name, samples] of Object.entries(out.samples)) {
  const m = median(samples);
  const vs = name.startsWith('command +')
    ? `ratio ${(m / base).toFixed(3)}, added ${(m - base).toFixed(1)} ms`
    : '';
  console.log(
    `  ${name.padEnd(56)} median ${m.toFixed(1).padStart(7)} ms  p90 ${percentile(samples, 90).toFixed(1).padStart(7)} ms  ${vs}`,
  );
}
const mib = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
console.log(
  `  first look at the repository (once per session, in the background during the first turn): ${out.firstLook.toFixed(0)} ms wall, ${out.firstLookCpu.toFixed(0)} ms CPU (${out.firstLookScanning.toFixed(0)} ms wall without inotify)`,
);
console.log(
  `  store: ${mib(out.sizeBaseline)} after the first look; ${mib(out.afterEdits)} after ${values.edits} edits (+${((out.afterEdits - out.sizeBaseline) / 1024).toFixed(0)} KiB)`,
);
