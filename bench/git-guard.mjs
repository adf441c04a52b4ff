// Cost of the git guard (src/sandbox/git.ts) on a writable root of many folders, side by side with
// `find ROOT -name .git` (what a shell user would run to look for repositories) and a plain Node
// readdir walk:
//   - first call: the full walk that finds every git folder and what to bind read-only;
//   - every later call: the after-call check, which re-reads only folders whose mtime changed
//     (one lstat per folder otherwise) — what each agent tool call pays;
//   - through the binary: `rune sandbox --allow-write TREE -- /bin/true` against the same with an
//     empty writable folder (a fresh process: first-call walk before, check after).
// Medians of interleaved runs, as ratios.
//   node bench/git-guard.mjs [--dirs 20000] [--rounds 30]
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';
import { interleave, median, ROOT, report, requireBinary, timeOnce } from './lib.mjs';

const { values } = parseArgs({
  options: { dirs: { type: 'string', default: '20000' }, rounds: { type: 'string', default: '30' } },
});
const dirs = Number(values.dirs);
const rounds = Math.max(10, Number(values.rounds));
const rune = requireBinary();

// A tree like a project with dependencies: folders of a few files, and a handful of repositories.
const work = mkdtempSync(join(tmpdir(), 'rune-bench-git-'));
const tree = join(work, 'tree');
const empty = join(work, 'empty');
mkdirSync(empty);
const fanout = Math.ceil(Math.cbrt(dirs));
let made = 0;
for (let a = 0; a < fanout && made < dirs; a++)
  for (let b = 0; b < fanout && made < dirs; b++)
    for (let c = 0; c < fanout && made < dirs; c++, made++) {
      const dir = join(tree, `a${a}`, `b${b}`, `c${c}`);
      mkdirSync(dir, { recursive: true });
      for (const f of ['index.js', 'package.json', 'README.md']) writeFileSync(join(dir, f), 'x');
    }
for (const repo of ['', 'a0/nested', 'a1/b1/vendored', 'a2/b2/c2/deep']) {
  const git = join(tree, repo, '.git');
  for (const sub of ['objects', 'refs', 'hooks', 'info']) mkdirSync(join(git, sub), { recursive: true });
  writeFileSync(join(git, 'HEAD'), 'ref: refs/heads/main\n');
  writeFileSync(join(git, 'config'), '[core]\n\tbare = false\n');
}
console.log(`tree: ${made} folders, ${made * 3} files, 4 repositories`);

const bundle = join(work, 'git-guard.mjs');
await build({
  entryPoints: [join(ROOT, 'src/sandbox/git.ts')],
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  outfile: bundle,
  logLevel: 'silent',
});
const { GitGuard } = await import(pathToFileURL(bundle).href);
const logger = { debug() {}, info() {}, warn() {}, error() {} };

const time = (fn) => {
  const start = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
};
const walk = (root) => {
  const stack = [root];
  let n = 0;
  while (stack.length) {
    const dir = stack.pop();
    for (const e of readdirSync(dir, { withFileTypes: true }))
      if (e.isDirectory()) stack.push(join(dir, e.name));
    n++;
  }
  return n;
};
const warm = new GitGuard(logger, undefined);
warm.prepare([tree], true);
const home = mkdtempSync(join(tmpdir(), 'rune-bench-git-home-'));
const env = { PATH: '/usr/bin:/bin', HOME: home };
spawnSync(rune, ['sandbox', '--', '/bin/true'], { env });

const samples = interleave(
  {
    'find TREE -name .git': () => timeOnce('find', [tree, '-name', '.git'], { env }),
    'Node readdir walk of TREE': () => time(() => walk(tree)),
    'git guard, first call (walk + protect)': () =>
      time(() => new GitGuard(logger, undefined).prepare([tree], true)),
    'git guard, after each call (check)': () => time(() => warm.check([tree])),
    'rune sandbox --allow-write EMPTY -- /bin/true': () =>
      timeOnce(rune, ['sandbox', '--allow-write', empty, '--', '/bin/true'], { env }),
    'rune sandbox --allow-write TREE -- /bin/true': () =>
      timeOnce(rune, ['sandbox', '--allow-write', tree, '--', '/bin/true'], { env }),
  },
  rounds,
);
report(`git guard on ${made} folders, ${rounds} interleaved rounds`, samples, 'find TREE -name .git');
const added =
  median(samples['rune sandbox --allow-write TREE -- /bin/true']) -
  median(samples['rune sandbox --allow-write EMPTY -- /bin/true']);
console.log(
  `  rune sandbox: the tree adds ${added.toFixed(1)} ms (a fresh process walks it before and checks after)`,
);
console.log(
  `  per agent tool call after the first: ${median(samples['git guard, after each call (check)']).toFixed(1)} ms for ${made} folders`,
);
rmSync(work, { recursive: true, force: true });
rmSync(home, { recursive: true, force: true });
