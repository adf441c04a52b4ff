// Checkpoints over a real folder: a command's changes (simulated by writing the folder directly
// between before() and after()) recorded and undone, with inotify and with scanning, conflicts,
// a stop during a call, and what the store must never hold.
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { withDefaults } from '../../config/load.ts';
import { createLogger, silentLogger } from '../../core/logger.ts';
import { realPath } from '../../core/paths.ts';
import { registerSecret } from '../../core/redact.ts';
import { protectedPathsFor } from '../../policy/gate.ts';
import { readHistory } from './history.ts';
import { Checkpoints } from './recorder.ts';
import { CheckpointStore } from './store.ts';
import { applyUndo, planUndoTo, recoverUnfinished } from './undo.ts';

let base: string;
let repo: string;
let env: NodeJS.ProcessEnv;
const config = withDefaults({});

beforeEach(() => {
  base = realPath(mkdtempSync(join(tmpdir(), 'rune-ckpt-')));
  repo = join(base, 'repo');
  env = { HOME: join(base, 'home'), RUNE_HOME: join(base, 'home', '.rune') };
  mkdirSync(join(repo, '.git'), { recursive: true });
  mkdirSync(join(repo, 'src', 'deep'), { recursive: true });
  writeFileSync(join(repo, '.gitignore'), 'build/\n*.log\n');
  writeFileSync(join(repo, 'src', 'a.txt'), 'alpha\n');
  writeFileSync(join(repo, 'src', 'deep', 'c.txt'), 'gamma\n');
  mkdirSync(join(repo, 'tree', 'inner'), { recursive: true });
  writeFileSync(join(repo, 'tree', 'inner', 't.txt'), 'in a tree\n');
  writeFileSync(join(repo, 'd.txt'), 'delta\n');
  writeFileSync(join(repo, '.env'), 'TOKEN=env-secret-value\n');
  mkdirSync(join(repo, 'build'));
  writeFileSync(join(repo, 'build', 'out.js'), 'ignored-build-output\n');
});

afterEach(() => rmSync(base, { recursive: true, force: true }));

const protectedPaths = () => protectedPathsFor(config, repo, env);

function open(watch = true): Checkpoints {
  return new Checkpoints({ env, sessionId: 's1', cwd: repo, config, logger: silentLogger, watch });
}

/** What a command might do: edit, create, delete, rename, a binary file, a link, a FIFO, a mode. */
function command(): void {
  writeFileSync(join(repo, 'src', 'a.txt'), 'alpha edited\n');
  writeFileSync(join(repo, 'src', 'new.txt'), 'brand new\n');
  rmSync(join(repo, 'src', 'deep', 'c.txt'));
  renameSync(join(repo, 'd.txt'), join(repo, 'e.txt'));
  writeFileSync(join(repo, 'blob.bin'), Buffer.from([0, 1, 2, 255, 0, 7]));
  symlinkSync('/etc/passwd', join(repo, 'link'));
  execFileSync('mkfifo', [join(repo, 'fifo')]);
  mkdirSync(join(repo, 'made', 'inner'), { recursive: true });
  writeFileSync(join(repo, 'made', 'inner', 'x.txt'), 'x\n');
  chmodSync(join(repo, 'src', 'deep'), 0o700);
  rmSync(join(repo, 'tree'), { recursive: true });
  writeFileSync(join(repo, 'build', 'out.js'), 'changed but ignored\n');
}

function expectRestored(): void {
  expect(readFileSync(join(repo, 'src', 'a.txt'), 'utf8')).toBe('alpha\n');
  expect(readFileSync(join(repo, 'src', 'deep', 'c.txt'), 'utf8')).toBe('gamma\n');
  expect(readFileSync(join(repo, 'd.txt'), 'utf8')).toBe('delta\n');
  for (const gone of ['src/new.txt', 'e.txt', 'blob.bin', 'link', 'fifo', 'made'])
    expect(existsSync(join(repo, gone)) || lstatOrNull(join(repo, gone)) !== null, gone).toBe(false);
  expect(lstatSync(join(repo, 'src', 'deep')).mode & 0o777).toBe(0o755);
  expect(readFileSync(join(repo, 'tree', 'inner', 't.txt'), 'utf8')).toBe('in a tree\n');
}

/** The inotify watches this process holds (every inotify descriptor's, from /proc). */
function inotifyWatches(): number {
  let count = 0;
  for (const fd of readdirSync('/proc/self/fdinfo')) {
    let info: string;
    try {
      info = readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8');
    } catch {
      continue;
    }
    count += info.split('\n').filter((line) => line.startsWith('inotify wd:')).length;
  }
  return count;
}

function lstatOrNull(path: string) {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}

describe.each([
  ['inotify', true],
  ['scanning', false],
])('checkpoints (%s)', (_name, watch) => {
  it('records what a command changed and undoes it', async () => {
    const ck = open(watch);
    ck.beginTurn('do things', []);
    ck.before('c1', 'execute_cmd', { roots: [repo], files: [] }, protectedPaths());
    command();
    const result = ck.after('c1');
    expect(result.partial).toEqual([]);
    const history = readHistory(ck.store.records);
    const paths = history.turns[0]!.calls[0]!.changes.map((c) => c.p.slice(repo.length + 1)).sort();
    expect(paths).toEqual(
      [
        'tree',
        'tree/inner',
        'tree/inner/t.txt',
        'blob.bin',
        'd.txt',
        'e.txt',
        'fifo',
        'link',
        'made',
        'made/inner',
        'made/inner/x.txt',
        'src/a.txt',
        'src/deep',
        'src/deep/c.txt',
        'src/new.txt',
      ].sort(),
    );
    const plan = planUndoTo(history)!;
    expect(plan.conflicts).toEqual([]);
    const report = applyUndo(ck.store, plan, new Map());
    expect(report.failed).toEqual([]);
    expectRestored();
    // Ignored output is neither tracked nor touched.
    expect(readFileSync(join(repo, 'build', 'out.js'), 'utf8')).toBe('changed but ignored\n');
    await ck.close();
  });

  it("sees edits made between calls as someone else's, and undo asks about them", async () => {
    const ck = open(watch);
    ck.beginTurn('t1', []);
    ck.before('c1', 'execute_cmd', { roots: [repo], files: [] }, protectedPaths());
    writeFileSync(join(repo, 'src', 'a.txt'), 'by the command\n');
    ck.after('c1');
    writeFileSync(join(repo, 'src', 'a.txt'), 'by the person\n');
    const plan = planUndoTo(readHistory(ck.store.records))!;
    expect(plan.conflicts.map((c) => c.p)).toEqual([join(repo, 'src', 'a.txt')]);
    const kept = applyUndo(ck.store, plan, new Map());
    expect(kept.kept).toEqual([join(repo, 'src', 'a.txt')]);
    expect(readFileSync(join(repo, 'src', 'a.txt'), 'utf8')).toBe('by the person\n');
    await ck.close();
  });
});

describe('the first look in the background', () => {
  it("is done when the call comes, and edits made meanwhile are not taken for the call's", async () => {
    const ck = open();
    ck.beginTurn('t1', []);
    ck.warm([repo], protectedPaths());
    writeFileSync(join(repo, 'src', 'a.txt'), 'edited while rune looked\n');
    for (let i = 0; i < 500 && !ck.store.records.some((r) => r.t === 'based'); i++)
      await new Promise((r) => setTimeout(r, 10));
    expect(ck.store.records.some((r) => r.t === 'based')).toBe(true);
    writeFileSync(join(repo, 'src', 'deep', 'c.txt'), 'edited after the look\n');
    ck.before('c1', 'execute_cmd', { roots: [repo], files: [] }, protectedPaths());
    writeFileSync(join(repo, 'src', 'a.txt'), 'by the command\n');
    ck.after('c1');
    const history = readHistory(ck.store.records);
    expect(history.turns[0]!.calls[0]!.changes.map((c) => c.p)).toEqual([join(repo, 'src', 'a.txt')]);
    applyUndo(ck.store, planUndoTo(history)!, new Map());
    expect(readFileSync(join(repo, 'src', 'a.txt'), 'utf8')).toBe('edited while rune looked\n');
    expect(readFileSync(join(repo, 'src', 'deep', 'c.txt'), 'utf8')).toBe('edited after the look\n');
    await ck.close();
  });
});

describe('several granted folders', () => {
  it('sees a change in each, and once where one folder is inside the other', async () => {
    const other = join(base, 'other');
    mkdirSync(other);
    writeFileSync(join(other, 'o.txt'), 'other\n');
    const ck = open();
    ck.beginTurn('t1', []);
    const roots = [repo, join(repo, 'src'), other];
    ck.before('c1', 'execute_cmd', { roots, files: [] }, protectedPaths());
    writeFileSync(join(repo, 'src', 'a.txt'), 'changed a\n');
    writeFileSync(join(other, 'o.txt'), 'changed o\n');
    ck.after('c1');
    ck.before('c2', 'execute_cmd', { roots, files: [] }, protectedPaths());
    writeFileSync(join(repo, 'src', 'deep', 'c.txt'), 'changed c\n');
    ck.after('c2');
    const calls = readHistory(ck.store.records).turns[0]!.calls;
    expect(calls[0]!.changes.map((c) => c.p).sort()).toEqual([
      join(other, 'o.txt'),
      join(repo, 'src', 'a.txt'),
    ]);
    expect(calls[1]!.changes.map((c) => c.p)).toEqual([join(repo, 'src', 'deep', 'c.txt')]);
    applyUndo(ck.store, planUndoTo(readHistory(ck.store.records))!, new Map());
    expect(readFileSync(join(other, 'o.txt'), 'utf8')).toBe('other\n');
    expect(readFileSync(join(repo, 'src', 'a.txt'), 'utf8')).toBe('alpha\n');
    expect(readFileSync(join(repo, 'src', 'deep', 'c.txt'), 'utf8')).toBe('gamma\n');
    await ck.close();
  });
});

describe('the journal', () => {
  it('masks secrets in the prompts it lists', async () => {
    registerSecret('sk-test-journal-secret-0123456789');
    const ck = open();
    ck.beginTurn('use sk-test-journal-secret-0123456789 for it', []);
    await ck.close();
    const journal = readFileSync(join(env.RUNE_HOME!, 'checkpoints', 's1', 'journal'), 'utf8');
    expect(journal).toContain('use ');
    expect(journal).not.toContain('sk-test-journal-secret');
  });
});

describe('conflict answers', () => {
  it('takes the checkpoint, or writes it beside theirs', async () => {
    const ck = open();
    ck.beginTurn('t1', []);
    ck.before('c1', 'execute_cmd', { roots: [repo], files: [] }, protectedPaths());
    writeFileSync(join(repo, 'src', 'a.txt'), 'by the command\n');
    writeFileSync(join(repo, 'd.txt'), 'by the command\n');
    ck.after('c1');
    writeFileSync(join(repo, 'src', 'a.txt'), 'theirs a\n');
    writeFileSync(join(repo, 'd.txt'), 'theirs d\n');
    const plan = planUndoTo(readHistory(ck.store.records))!;
    const report = applyUndo(
      ck.store,
      plan,
      new Map([
        [join(repo, 'src', 'a.txt'), 'checkpoint'],
        [join(repo, 'd.txt'), 'both'],
      ] as const),
    );
    expect(readFileSync(join(repo, 'src', 'a.txt'), 'utf8')).toBe('alpha\n');
    expect(readFileSync(join(repo, 'd.txt'), 'utf8')).toBe('theirs d\n');
    expect(readFileSync(join(repo, 'd.txt.rune-undo'), 'utf8')).toBe('delta\n');
    expect(report.beside).toEqual([join(repo, 'd.txt.rune-undo')]);
    await ck.close();
  });
});

describe('the store', () => {
  it('never holds .env files, ignored files or the secrets floor', async () => {
    mkdirSync(join(env.HOME!, '.ssh'), { recursive: true });
    writeFileSync(join(env.HOME!, '.ssh', 'id_rsa'), 'ssh-secret-key-material\n');
    // A hard link to the key inside the repository is the key.
    execFileSync('ln', [join(env.HOME!, '.ssh', 'id_rsa'), join(repo, 'src', 'linked-key')]);
    const ck = open();
    ck.beginTurn('t1', []);
    ck.before(
      'c1',
      'execute_cmd',
      { roots: [repo, env.HOME!], files: [join(repo, '.env.local')] },
      protectedPaths(),
    );
    writeFileSync(join(repo, '.env'), 'TOKEN=changed-secret\n');
    writeFileSync(join(repo, '.env.local'), 'TOKEN=local-secret\n');
    writeFileSync(join(env.HOME!, '.ssh', 'id_rsa'), 'ssh-secret-changed\n');
    const result = ck.after('c1');
    expect(result.partial.join('\n')).toContain('.env.local is not checkpointed');
    await ck.close();
    const stored = readdirSync(join(env.RUNE_HOME!, 'checkpoints', 's1'))
      .map((name) => readFileSync(join(env.RUNE_HOME!, 'checkpoints', 's1', name), 'latin1'))
      .join('\n');
    for (const secret of [
      'env-secret',
      'changed-secret',
      'local-secret',
      'ssh-secret',
      'ignored-build-output',
      'id_rsa',
    ])
      expect(stored, secret).not.toContain(secret);
    expect(stored).toContain('alpha');
  });

  it('stores each content once', async () => {
    const ck = open();
    for (let i = 0; i < 5; i++) {
      ck.beginTurn(`t${i}`, []);
      ck.before(`c${i}`, 'execute_cmd', { roots: [repo], files: [] }, protectedPaths());
      writeFileSync(join(repo, 'src', 'a.txt'), i % 2 === 0 ? 'one\n' : 'two\n');
      ck.after(`c${i}`);
    }
    const blobs = ck.store.records.filter((r) => r.t === 'blob').length;
    // alpha, gamma, delta, in a tree, .gitignore, one, two.
    expect(blobs).toBe(7);
    await ck.close();
  });

  it('finishes a call rune was stopped in, and undoes it', async () => {
    const ck = open();
    ck.beginTurn('t1', []);
    ck.before('c1', 'execute_cmd', { roots: [repo], files: [] }, protectedPaths());
    command();
    // No after(): the process died. Its lock is left to a dead pid.
    ck.store.flushSync();
    await ck.close();
    const store = CheckpointStore.open(env, 's1', { create: false, limits: { room: () => true } });
    const notes = recoverUnfinished(store, protectedPaths(), 64);
    expect(notes[0]).toContain('rune stopped during execute_cmd');
    const plan = planUndoTo(readHistory(store.records))!;
    expect(plan.conflicts).toEqual([]);
    const report = applyUndo(store, plan, new Map());
    expect(report.failed).toEqual([]);
    expectRestored();
    await store.close();
  });
});

describe('a session over several processes', () => {
  it("a later process's first look replaces what the journal knew before", async () => {
    let ck = open();
    ck.beginTurn('t1', []);
    ck.before('c1', 'execute_cmd', { roots: [repo], files: [] }, protectedPaths());
    rmSync(join(repo, 'd.txt'));
    ck.after('c1');
    await ck.close();
    rmSync(join(repo, 'src', 'deep', 'c.txt')); // by the person, between the runs
    ck = open();
    ck.beginTurn('t2', []);
    ck.before('c2', 'execute_cmd', { roots: [repo], files: [] }, protectedPaths());
    writeFileSync(join(repo, 'src', 'a.txt'), 'the run was killed here\n');
    ck.store.flushSync();
    await ck.close(); // no after(): killed
    const store = CheckpointStore.open(env, 's1', { create: false, limits: { room: () => true } });
    recoverUnfinished(store, protectedPaths(), 64);
    const plan = planUndoTo(readHistory(store.records))!;
    expect(plan.turn.n).toBe(2);
    expect(plan.steps.map((s) => s.p)).toEqual([join(repo, 'src', 'a.txt')]);
    applyUndo(store, plan, new Map());
    expect(readFileSync(join(repo, 'src', 'a.txt'), 'utf8')).toBe('alpha\n');
    expect(existsSync(join(repo, 'src', 'deep', 'c.txt'))).toBe(false);
    await store.close();
  });
});

describe('the bound', () => {
  const big = (mb: number) => Buffer.alloc(mb * 1024 * 1024, 7);

  it('a file above max_file_mb is recorded without its content, and the person is told', async () => {
    const small = withDefaults({ checkpoints: { max_file_mb: 1 } });
    const ck = new Checkpoints({ env, sessionId: 's1', cwd: repo, config: small, logger: silentLogger });
    writeFileSync(join(repo, 'large.bin'), big(2));
    ck.beginTurn('t1', []);
    ck.before('c1', 'execute_cmd', { roots: [repo], files: [] }, protectedPaths());
    writeFileSync(join(repo, 'large.bin'), big(3));
    const kept = ck.after('c1');
    expect(kept.partial).toEqual([
      `${join(repo, 'large.bin')}: not kept whole (it is larger than checkpoints.max_file_mb)`,
    ]);
    const report = applyUndo(ck.store, planUndoTo(readHistory(ck.store.records))!, new Map());
    expect(report.failed).toEqual([`${join(repo, 'large.bin')}: its content was not kept (large)`]);
    await ck.close();
  });

  it("the least recently used sessions' checkpoints go first; then the store stops growing", async () => {
    const bounded = withDefaults({ checkpoints: { max_mb: 3 } });
    for (const [id, mtime] of [
      ['old', 1_000],
      ['newer', 2_000],
    ] as const) {
      const dir = join(env.RUNE_HOME!, 'checkpoints', id);
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'pack'), big(1));
      writeFileSync(join(dir, 'journal'), '');
      utimesSync(join(dir, 'pack'), mtime, mtime);
      utimesSync(join(dir, 'journal'), mtime, mtime);
    }
    const ck = new Checkpoints({ env, sessionId: 's1', cwd: repo, config: bounded, logger: silentLogger });
    ck.beginTurn('t1', []);
    ck.before('c1', 'execute_cmd', { roots: [repo], files: [] }, protectedPaths());
    writeFileSync(join(repo, 'one.bin'), big(1));
    expect(ck.after('c1').partial).toEqual([]);
    expect(readdirSync(join(env.RUNE_HOME!, 'checkpoints')).sort()).toEqual(['newer', 's1']);
    ck.before('c2', 'execute_cmd', { roots: [repo], files: [] }, protectedPaths());
    writeFileSync(join(repo, 'two.bin'), Buffer.alloc(1024 * 1024, 8));
    writeFileSync(join(repo, 'three.bin'), Buffer.alloc(1024 * 1024, 9));
    const kept = ck.after('c2');
    expect(readdirSync(join(env.RUNE_HOME!, 'checkpoints'))).toEqual(['s1']);
    expect(kept.partial.join('\n')).toContain(
      'not kept whole (the checkpoint store is full (checkpoints.max_mb))',
    );
    await ck.close();
  });

  it('a folder with more entries than a tracked folder may hold is not tracked; the person is told, once', async () => {
    const told: string[] = [];
    const logger = createLogger({ write: (line) => told.push(line) });
    const watchesBefore = inotifyWatches();
    const ck = new Checkpoints({ env, sessionId: 's1', cwd: repo, config, logger, maxTracked: 4 });
    const packSize = () => statSync(join(env.RUNE_HOME!, 'checkpoints', 's1', 'pack')).size;
    ck.beginTurn('t1', []);
    for (const id of ['c1', 'c2']) {
      ck.before(id, 'execute_cmd', { roots: [repo], files: [] }, protectedPaths());
      writeFileSync(join(repo, 'src', 'a.txt'), `${id}\n`);
      expect(ck.after(id).changed).toBe(0);
    }
    // Its watches are gone with it: a busy folder's events would make the tracked ones scan.
    expect(inotifyWatches()).toBe(watchesBefore);
    const tooLarge = told.filter((line) => line.includes('holds more than 4 files and folders'));
    expect(tooLarge).toEqual([
      `warning: ${repo} holds more than 4 files and folders that .gitignore does not ignore: commands' changes there are not checkpointed (narrow allowed_paths_rw)\n`,
    ]);
    // A file tool's own file inside it is still kept exactly.
    const packed = packSize();
    ck.before('c3', 'write_file', { roots: [], files: [join(repo, 'd.txt')] }, protectedPaths());
    writeFileSync(join(repo, 'd.txt'), 'written\n');
    expect(ck.after('c3').changed).toBe(1);
    expect(packSize()).toBeGreaterThan(packed);
    applyUndo(ck.store, planUndoTo(readHistory(ck.store.records))!, new Map());
    expect(readFileSync(join(repo, 'd.txt'), 'utf8')).toBe('delta\n');
    expect(readFileSync(join(repo, 'src', 'a.txt'), 'utf8')).toBe('c2\n');
    await ck.close();
  });
});

describe('file tools', () => {
  it('keeps the exact file, even where .gitignore ignores it', async () => {
    const target = join(repo, 'build', 'out.js');
    const ck = open();
    ck.beginTurn('t1', []);
    ck.before('c1', 'write_file', { roots: [], files: [target] }, protectedPaths());
    writeFileSync(target, 'written by write_file\n');
    expect(ck.after('c1').changed).toBe(1);
    const plan = planUndoTo(readHistory(ck.store.records))!;
    applyUndo(ck.store, plan, new Map());
    expect(readFileSync(target, 'utf8')).toBe('ignored-build-output\n');
    await ck.close();
  });

  it('a new file is removed by the undo', async () => {
    const target = join(repo, 'src', 'fresh.txt');
    const ck = open();
    ck.beginTurn('t1', []);
    ck.before('c1', 'write_file', { roots: [], files: [target] }, protectedPaths());
    writeFileSync(target, 'fresh\n');
    ck.after('c1');
    applyUndo(ck.store, planUndoTo(readHistory(ck.store.records))!, new Map());
    expect(existsSync(target)).toBe(false);
    await ck.close();
  });
});

describe('turns', () => {
  it('undoes back to a turn, and later turns with it', async () => {
    const ck = open();
    for (const [i, text] of ['one', 'two', 'three'].entries()) {
      ck.beginTurn(text, []);
      ck.before(`c${i}`, 'execute_cmd', { roots: [repo], files: [] }, protectedPaths());
      writeFileSync(join(repo, 'src', 'a.txt'), `${text}\n`);
      ck.after(`c${i}`);
    }
    applyUndo(ck.store, planUndoTo(readHistory(ck.store.records), 2)!, new Map());
    expect(readFileSync(join(repo, 'src', 'a.txt'), 'utf8')).toBe('one\n');
    const history = readHistory(ck.store.records);
    expect(history.turns.map((t) => t.undone)).toEqual([false, true, true]);
    // A change after the undo is tracked from the restored state.
    ck.beginTurn('four', []);
    ck.before('c4', 'execute_cmd', { roots: [repo], files: [] }, protectedPaths());
    writeFileSync(join(repo, 'src', 'a.txt'), 'four\n');
    ck.after('c4');
    applyUndo(ck.store, planUndoTo(readHistory(ck.store.records))!, new Map());
    expect(readFileSync(join(repo, 'src', 'a.txt'), 'utf8')).toBe('one\n');
    await ck.close();
  });
});

describe('links in the way', () => {
  it('puts a file back by replacing a link, never writing through it', async () => {
    const outside = join(base, 'outside.txt');
    writeFileSync(outside, 'outside\n');
    const ck = open();
    ck.beginTurn('t1', []);
    ck.before('c1', 'execute_cmd', { roots: [repo], files: [] }, protectedPaths());
    rmSync(join(repo, 'd.txt'));
    symlinkSync(outside, join(repo, 'd.txt'));
    ck.after('c1');
    applyUndo(ck.store, planUndoTo(readHistory(ck.store.records))!, new Map());
    expect(lstatSync(join(repo, 'd.txt')).isFile()).toBe(true);
    expect(readFileSync(join(repo, 'd.txt'), 'utf8')).toBe('delta\n');
    expect(readFileSync(outside, 'utf8')).toBe('outside\n');
    await ck.close();
  });

  it('a folder swapped for a link is refused, not followed', async () => {
    const ck = open();
    ck.beginTurn('t1', []);
    ck.before('c1', 'execute_cmd', { roots: [repo], files: [] }, protectedPaths());
    writeFileSync(join(repo, 'src', 'a.txt'), 'edited\n');
    ck.after('c1');
    mkdirSync(join(base, 'elsewhere'));
    renameSync(join(repo, 'src'), join(base, 'moved-src'));
    symlinkSync(join(base, 'elsewhere'), join(repo, 'src'));
    const plan = planUndoTo(readHistory(ck.store.records))!;
    applyUndo(ck.store, plan, new Map([[join(repo, 'src', 'a.txt'), 'checkpoint']]));
    expect(readdirSync(join(base, 'elsewhere'))).toEqual([]);
    expect(readlinkSync(join(repo, 'src'))).toBe(join(base, 'elsewhere'));
    await ck.close();
  });
});
