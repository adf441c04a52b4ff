import { execFileSync } from 'node:child_process';
import {
  closeSync,
  constants,
  linkSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { ProtectedPaths } from '../../policy/types.ts';
import { runeNative } from '../../sandbox/native.ts';
import { type FolderOps, folderOps, procOps } from './folder-ops.ts';
import { PathGuard } from './guard.ts';
import { IgnoreRules } from './ignore-rules.ts';
import { planGrants } from './thread-landlock.ts';
import { emptyStats, rulesAbove, walk } from './walk.ts';

function tree(files: Record<string, string>): string {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'rune-walk-')));
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  return root;
}

const noProtection: ProtectedPaths = { floor: [], denied: [], unrestricted: false };

// Both ways of opening relative to a folder: the addon's openat (when built) and /proc/self/fd.
const native = folderOps();
const implementations: FolderOps[] = native.kind === 'native' ? [native, procOps] : [procOps];
let ops: FolderOps = procOps;

function list(root: string, protectedPaths = noProtection, onFile?: (rel: string) => void) {
  const guard = new PathGuard(protectedPaths, root);
  const stats = emptyStats();
  const files: string[] = [];
  walk({
    root,
    guard,
    ops,
    rules: rulesAbove(root, guard, ops),
    stats,
    onFile(entry) {
      files.push(entry.rel);
      onFile?.(entry.rel);
      return false;
    },
  });
  return { files, stats };
}

describe.each(implementations.map((impl) => [impl.kind, impl] as const))('walk (%s)', (_kind, impl) => {
  beforeEach(() => {
    ops = impl;
  });

  it("lists files in git's order (a folder sorts as name + '/')", () => {
    const root = tree({ 'a.c': '', 'a/b': '', 'a-b': '', b: '', 'a/a': '' });
    expect(list(root).files).toEqual(['a-b', 'a.c', 'a/a', 'a/b', 'b']);
  });

  it('compares names as UTF-8 bytes, as git does (not as UTF-16 code units)', () => {
    // UTF-8: é C3 A9 < U+FFFD EF BF BD < 😀 F0 9F 98 80; in UTF-16 the emoji (D83D…) sorts before U+FFFD.
    const root = tree({ '\u{1F600}': '', '\uFFFD': '', é: '', z: '' });
    expect(list(root).files).toEqual(['z', 'é', '\uFFFD', '\u{1F600}']);
  });

  it('applies .gitignore inside a repository (nested files, negation, .git/info/exclude) and .ignore everywhere', () => {
    const root = tree({
      '.gitignore': 'build/\n*.log\n!keep.log\n',
      'src/.gitignore': 'generated.ts\n',
      'src/a.ts': '',
      'src/generated.ts': '',
      'src/deep/generated.ts': '',
      'build/out.js': '',
      'x.log': '',
      'keep.log': '',
      '.ignore': 'secret-notes.txt\n',
      'secret-notes.txt': '',
      'excluded.txt': '',
      '.git/info/exclude': 'excluded.txt\n',
      '.git/HEAD': 'ref: refs/heads/main\n',
    });
    const { files, stats } = list(root);
    expect(files).toEqual(['.gitignore', '.ignore', 'keep.log', 'src/.gitignore', 'src/a.ts']);
    expect(stats.ignored).toBe(6);
  });

  it('outside a repository .gitignore files do not count (as in ripgrep), .ignore files do', () => {
    const root = tree({ '.gitignore': '*.txt\n', '.ignore': '*.md\n', 'a.txt': '', 'b.md': '' });
    expect(list(root).files).toEqual(['.gitignore', '.ignore', 'a.txt']);
  });

  it('uses the rules above the root up to the repository root, but searches a folder named on purpose', () => {
    const repo = tree({
      '.gitignore': 'node_modules/\n*.tmp\n',
      '.git/HEAD': '',
      'pkg/src/a.ts': '',
      'pkg/src/b.tmp': '',
      'node_modules/lib/index.js': '',
      'node_modules/lib/c.tmp': '',
    });
    expect(list(join(repo, 'pkg')).files).toEqual(['src/a.ts']);
    // node_modules itself is ignored: named as the root, it is searched with only its own ignore files.
    expect(list(join(repo, 'node_modules')).files).toEqual(['lib/c.tmp', 'lib/index.js']);
  });

  it('a nested repository starts afresh: the outer .gitignore stops at it', () => {
    const root = tree({
      '.gitignore': '*.gen\n',
      '.git/HEAD': '',
      'inner/.git/HEAD': '',
      'inner/x.gen': '',
      'y.gen': '',
    });
    expect(list(root).files).toEqual(['.gitignore', 'inner/x.gen']);
  });

  it('never follows a symlink, and skips the floor, denied_paths and pseudo file systems by real path', () => {
    const home = tree({ '.ssh/id_rsa': 'KEY', 'notes.txt': '' });
    const root = tree({ 'ok.txt': '', 'private/p.txt': '', 'sub/deep/private2/q.txt': '' });
    symlinkSync(join(home, '.ssh'), join(root, 'ssh-link'));
    symlinkSync(join(home, '.ssh/id_rsa'), join(root, 'key-link'));
    const protectedPaths = {
      floor: [join(home, '.ssh')],
      denied: [join(root, 'private'), join(root, 'sub/deep/private2')],
      unrestricted: false,
    };
    const { files, stats } = list(root, protectedPaths);
    expect(files).toEqual(['ok.txt']);
    expect(stats.symlinks).toBe(2);
    expect(stats.protected).toBe(2);
    // From the home folder the floor entry itself is skipped.
    const fromHome = list(home, protectedPaths);
    expect(fromHome.files).toEqual(['notes.txt']);
    expect(fromHome.stats.protected).toBe(1);
  });

  it('refuses a root inside the floor, unless --unrestricted named it', () => {
    const home = tree({ '.ssh/config': 'Host x' });
    const floor = { floor: [join(home, '.ssh')], denied: [], unrestricted: false };
    expect(() => list(join(home, '.ssh'), floor)).toThrow(/inside the secrets floor/);
    expect(list(join(home, '.ssh'), { ...floor, unrestricted: true }).files).toEqual(['config']);
    expect(() => list('/proc/self', noProtection)).toThrow(/pseudo file system/);
  });

  it('a hard link to a protected file is refused by identity, wherever it is', () => {
    const home = tree({ '.ssh/id_rsa': 'KEY' });
    const root = tree({ 'a.txt': '' });
    linkSync(join(home, '.ssh/id_rsa'), join(root, 'innocent.txt'));
    const guard = new PathGuard({ floor: [join(home, '.ssh')], denied: [], unrestricted: false }, root);
    const stats = emptyStats();
    const opened: string[] = [];
    walk({
      root,
      guard,
      ops,
      rules: IgnoreRules.empty(),
      stats,
      onFile(entry) {
        const st = execFileSync('stat', ['-c', '%h', entry.path], { encoding: 'utf8' });
        if (!guard.identityRefusal({ ...statOf(entry.path), nlink: Number(st) })) opened.push(entry.rel);
        return false;
      },
    });
    expect(opened).toEqual(['a.txt']);
  });

  it('a folder swapped for a symlink during the walk is not entered (O_NOFOLLOW at open)', () => {
    const secret = tree({ id_rsa: 'KEY' });
    const root = tree({ 'a.txt': '', 'b/c.txt': '' });
    const { files, stats } = list(root, noProtection, (rel) => {
      if (rel === 'a.txt') {
        renameSync(join(root, 'b'), join(root, 'b.old'));
        symlinkSync(secret, join(root, 'b'));
      }
    });
    expect(files).toEqual(['a.txt']);
    expect(stats.symlinks).toBeGreaterThanOrEqual(1);
  });

  it('a parent swapped for a symlink mid-walk does not redirect the rest of its walk (fd-relative opens)', () => {
    const secret = tree({ 'z/id_rsa': 'KEY' });
    const root = tree({ 'b/a.txt': '', 'b/z/real.txt': '' });
    const { files } = list(root, noProtection, (rel) => {
      if (rel === 'b/a.txt') {
        renameSync(join(root, 'b'), join(root, 'moved'));
        symlinkSync(secret, join(root, 'b'));
      }
    });
    // The rest of b is read from the folder that was opened (now `moved`), never from the symlink.
    expect(files).toEqual(['b/a.txt', 'b/z/real.txt']);
  });

  it('opens only single names below a folder: never `..`, `.` or a path', () => {
    const root = tree({ 'a/b.txt': 'x' });
    const fd = openSync(root, constants.O_RDONLY | constants.O_DIRECTORY);
    try {
      for (const name of ['..', '.', 'a/b.txt', '']) {
        expect(() => ops.openAt(fd, name, constants.O_RDONLY), name).toThrow(/EINVAL/);
      }
      closeSync(ops.openAt(fd, 'a', constants.O_RDONLY | constants.O_DIRECTORY));
      expect(() => ops.openAt(fd, 'missing', constants.O_RDONLY)).toThrow(
        expect.objectContaining({ code: 'ENOENT' }),
      );
    } finally {
      closeSync(fd);
    }
  });

  it('a root whose path was redirected after canonicalisation is refused (no link is followed on the way)', () => {
    const root = tree({ 'dir/sub/a.txt': '' });
    const elsewhere = tree({ 'sub/secret.txt': '' });
    renameSync(join(root, 'dir'), join(root, 'dir.old'));
    symlinkSync(elsewhere, join(root, 'dir'));
    expect(() => list(join(root, 'dir/sub'))).toThrow(/changed while it was opened/);
    rmSync(join(root, 'dir'));
    symlinkSync(elsewhere, join(root, 'dir'));
    expect(() => list(join(root, 'dir'))).toThrow(/a symbolic link is on the way now\): refused/);
  });
});

function statOf(path: string) {
  const out = execFileSync('stat', ['-c', '%d %i %F', path], { encoding: 'utf8' }).trim().split(' ');
  return {
    dev: Number(out[0]),
    ino: Number(out[1]),
    isDirectory: () => out.slice(2).join(' ') === 'directory',
  };
}

describe.skipIf(native.kind !== 'native')('the addon’s openat', () => {
  it('refuses anything but a single name itself, whatever the caller checked', () => {
    const addon = runeNative() as unknown as { openat(fd: number, name: string, flags: number): number };
    const root = tree({ 'a.txt': 'x' });
    const fd = openSync(root, constants.O_RDONLY | constants.O_DIRECTORY);
    try {
      for (const name of ['..', '.', 'a/b', ''])
        expect(addon.openat(fd, name, constants.O_RDONLY), name).toBe(-22);
      const file = addon.openat(fd, 'a.txt', constants.O_RDONLY);
      expect(file).toBeGreaterThan(2);
      closeSync(file);
      symlinkSync('a.txt', join(root, 'link'));
      // O_NOFOLLOW is always added: ELOOP.
      expect(addon.openat(fd, 'link', constants.O_RDONLY)).toBe(-40);
    } finally {
      closeSync(fd);
    }
  });
});

describe('planGrants (the walk thread’s Landlock rules)', () => {
  const listing: Record<string, Array<{ name: string; kind: 'dir' | 'file' | 'other' }>> = {
    '/h': [
      { name: '.ssh', kind: 'dir' },
      { name: '.config', kind: 'dir' },
      { name: 'src', kind: 'dir' },
      { name: 'notes.md', kind: 'file' },
      { name: 'link', kind: 'other' },
    ],
    '/h/.config': [
      { name: 'gh', kind: 'dir' },
      { name: 'nvim', kind: 'dir' },
    ],
  };
  const lister = (dir: string) => listing[dir] ?? [];

  it('grants the root whole when nothing inside it is protected', () => {
    expect(planGrants('/h/src', [], lister)).toEqual({ read: ['/h/src'], list: [] });
  });

  it('grants around protected entries: their ancestors list-only, every other child read', () => {
    const grants = planGrants('/h', ['/h/.ssh', '/h/.config/gh'], lister);
    expect(grants.read.sort()).toEqual(['/h/.config/nvim', '/h/notes.md', '/h/src']);
    expect(grants.list).toEqual(['/h', '/h/.config']);
  });
});
