// A property test of the rule of docs/adr/0034: while a background process swaps a granted folder
// and a link to a folder never granted (renameat2 RENAME_EXCHANGE, as fast as it can), every file
// tool and the code rune runs after a call (the git guard, the moves aside, the removal of a call's
// temporary folder) is called on random paths for a few thousand rounds. Each call is judged the
// way the gate judges it (the canonical path at that moment must lie in the grant), and then runs
// raced. Never may anything outside the grant be read, created, changed or removed.
import { spawn } from 'node:child_process';
import {
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFile, Grants, makeFolder, Root, useResolution } from '../core/fd/index.ts';
import { silentLogger } from '../core/logger.ts';
import { canonicalise, isUnder } from '../core/paths.ts';
import { moveAsideCreated, watchAbsent } from '../sandbox/absent.ts';
import { removeCallTmp } from '../sandbox/call-tmp.ts';
import { GitGuard } from '../sandbox/git.ts';
import { gitDir, tempRoot } from '../sandbox/test-git.ts';
import { callTool, toolContext } from './test-helpers.ts';

const SECRET = 'SECRET-outside-the-grant-9d1f';
const RACER = join(import.meta.dirname, '../../tests/helpers/swap-racer.py');

let base = '';
let proj = '';
let outside = '';
let home = '';
let stop: () => Promise<number> = async () => 0;

/** Everything under `dir`, as kind and content (an unchanged result proves nothing happened there). */
function tree(dir: string): string {
  const out: string[] = [];
  const walk = (at: string, rel: string) => {
    let names: string[];
    try {
      names = readdirSync(at).sort();
    } catch {
      return; // swapped away meanwhile (the racer runs on in the grant)
    }
    for (const name of names) {
      const path = join(at, name);
      const st = lstatSync(path, { throwIfNoEntry: false });
      if (!st) continue;
      const key = `${rel}/${name}`;
      if (st.isDirectory()) {
        out.push(`${key}/ ${st.mode & 0o7777}`);
        walk(path, key);
      } else if (st.isSymbolicLink()) out.push(`${key} -> ${readlinkSync(path)}`);
      else out.push(`${key} ${st.mode & 0o7777} ${readText(path)}`);
    }
  };
  walk(dir, '');
  return out.join('\n');
}

function readText(path: string): string {
  try {
    return readFileSync(path, 'latin1');
  } catch {
    return '(gone)';
  }
}

let outsideBefore = '';

beforeAll(() => {
  base = tempRoot('rune-race-');
  proj = join(base, 'proj');
  outside = join(base, 'outside');
  home = join(base, 'home');
  mkdirSync(join(proj, 'd', 's'), { recursive: true });
  mkdirSync(home);
  writeFileSync(join(proj, 'd', 'f.txt'), 'one\ntwo\n');
  writeFileSync(join(proj, 'd', 's', 'g.txt'), 'decoy\n');
  gitDir(join(proj, 'd', '.git'));
  // What the link leads to looks like the granted folder, secrets inside.
  mkdirSync(join(outside, 's'), { recursive: true });
  writeFileSync(join(outside, 'f.txt'), `${SECRET}\none\ntwo\n`);
  writeFileSync(join(outside, 's', 'g.txt'), `${SECRET}\n`);
  gitDir(join(outside, '.git'), `[core]\n\tpager = cat\n[client]\n\tpassword = ${SECRET}\n`);
  symlinkSync(outside, join(proj, 'l'));
  symlinkSync(join(outside, 's'), join(proj, 'd', 'ls'));
  outsideBefore = tree(outside);
});

afterAll(() => {
  useResolution('auto');
});

/** Starts swapping d with a link to the outside folder (and d/s with one to outside/s). */
function startRacer(): void {
  const stopFile = join(base, 'racer.stop');
  const child = spawn('python3', [
    RACER,
    stopFile,
    '600',
    join(proj, 'd'),
    join(proj, 'l'),
    join(proj, 'd', 's'),
    join(proj, 'd', 'ls'),
  ]);
  let swaps = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => {
    swaps += c;
  });
  const done = new Promise<number>((resolve) => child.on('close', () => resolve(Number(swaps.trim()) || 0)));
  stop = () => {
    writeFileSync(stopFile, '');
    return done;
  };
}

const realProj = () => realpathSync(proj);
const files = ['d/f.txt', 'd/s/g.txt', 'd/s/new.txt', 'd/new.txt', 'd/.git/config', 'd/s'];
const folders = ['d', 'd/s', '.'];

type Op =
  | { tool: 'read_file' | 'list_dir' | 'write_file' | 'edit_file'; path: string; n: number }
  | { tool: 'search_files' | 'find_files'; path: string }
  | { tool: 'git' | 'absent' | 'tmp'; n: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    tool: fc.constantFrom('read_file', 'list_dir', 'write_file', 'edit_file' as const),
    path: fc.constantFrom(...files, ...folders),
    n: fc.nat(1000),
  }),
  fc.record({
    tool: fc.constantFrom('search_files', 'find_files' as const),
    path: fc.constantFrom(...folders),
  }),
  fc.record({ tool: fc.constantFrom('git', 'absent', 'tmp' as const), n: fc.nat(1000) }),
);

/** What the tool would be allowed by the gate: its path's canonical form now lies in the grant. */
function judged(path: string): Record<string, string> | undefined {
  const lexical = join(proj, path);
  const real = canonicalise(lexical);
  return isUnder(real, realProj()) ? { [lexical]: real } : undefined;
}

function args(o: Extract<Op, { path: string }>): Record<string, unknown> {
  switch (o.tool) {
    case 'write_file':
      return { path: o.path, content: `written ${o.n}\n` };
    case 'edit_file':
      return { path: o.path, edits: [{ old_string: 'two', new_string: `two ${o.n}` }] };
    case 'search_files':
      return { pattern: 'SECRET|decoy|one', path: o.path };
    case 'find_files':
      return { pattern: '**/*', path: o.path };
    default:
      return { path: o.path };
  }
}

/** What a call would have left (made through no link: the test itself must not write outside). */
function plant(rel: string): void {
  const root = Root.open(realProj());
  try {
    makeFolder(root, rel, { parents: true });
    createFile(root, `${rel}/z`, 'z');
  } catch {
    // The racer had a link on the way at that moment.
  } finally {
    root.close();
  }
}

async function perform(o: Op, grants: Grants, guard: GitGuard): Promise<string> {
  if (o.tool === 'git') return guard.check([realProj()]) ?? '';
  if (o.tool === 'absent') {
    const watched = watchAbsent([join(realProj(), 'd', `planted-${o.n}`, 'x')], [realProj()]);
    plant(`d/planted-${o.n}/x`);
    return moveAsideCreated(watched).join('\n');
  }
  if (o.tool === 'tmp') {
    plant(`d/tmp-${o.n}/x/y`);
    return removeCallTmp({ tmpDir: join(realProj(), 'd', `tmp-${o.n}`) }, silentLogger);
  }
  if (!('path' in o)) return '';
  const decided = judged(o.path);
  if (!decided) return '(the gate would not allow it)';
  const context = { ...toolContext(proj, home, { allowed_paths_rw: [proj] }), grants, judged: decided };
  return (await callTool(o.tool, args(o), context)).content;
}

describe('file tools and post-call code under a racer', () => {
  it('never read, write or remove outside the grant', async () => {
    startRacer();
    const grants = new Grants();
    grants.pinAll([proj]);
    const guard = new GitGuard(silentLogger, home, join(base, 'journal'));
    guard.prepare([realProj()], true);
    let rounds = 0;
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.tuple(op, fc.constantFrom('auto', 'walk' as const)), { minLength: 1, maxLength: 10 }),
          async (ops) => {
            for (const [o, how] of ops) {
              rounds++;
              // openat2 where the kernel has it, and the O_NOFOLLOW walk of kernels without it.
              useResolution(how);
              const said = await perform(o, grants, guard);
              expect(said).not.toContain(SECRET);
            }
            expect(tree(outside)).toBe(outsideBefore);
          },
        ),
        { numRuns: 360, seed: 27 },
      );
    } finally {
      expect(await stop()).toBeGreaterThan(1000);
      grants.close();
    }
    // Read once the racer has stopped: while it runs, reading by name would follow its links.
    expect(
      tree(proj)
        .split('\n')
        .filter((line) => line.includes(SECRET)),
    ).toEqual([]);
    expect(rounds).toBeGreaterThan(1500);
  }, 150_000);
});
