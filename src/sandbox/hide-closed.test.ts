// The class of host secrets in a system folder (native/src/secrets.c): every entry others may not
// read, found by the helper of each call (--hide-closed) and hidden in its view. Runs the helper the
// build compiled into native/build.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sandboxHelperPath } from './helper.ts';
import { SYSTEM_READ_ONLY } from './plan.ts';

const SYSTEM = SYSTEM_READ_ONLY.flatMap((folder) => ['--sys', folder]);

function listed(folder: string): string[] {
  const result = spawnSync(sandboxHelperPath(), ['--closed', folder], { encoding: 'utf8' });
  expect(result.status).toBe(0);
  return (JSON.parse(result.stdout) as string[]).sort();
}

describe('the helper finds the entries others may not read', () => {
  it.each([
    [0o640, 'file', true], // /etc/shadow on Debian
    [0o600, 'file', true], // a host key, /etc/shadow-
    [0o644, 'file', false],
    [0o604, 'file', false],
    [0o700, 'folder', true], // /etc/ssl/private
    [0o750, 'folder', true],
    [0o754, 'folder', true], // readable but not enterable
    [0o751, 'folder', true], // enterable but not listable: names could be guessed
    [0o755, 'folder', false],
  ])('mode %o (%s) closed: %s', (mode, kind, closed) => {
    const root = mkdtempSync(join(tmpdir(), 'rune-closed-mode-'));
    const entry = join(root, 'entry');
    if (kind === 'folder') mkdirSync(entry);
    else writeFileSync(entry, 'x');
    chmodSync(entry, mode);
    expect(listed(root)).toEqual(closed ? [entry] : []);
  });

  it('at any depth, not inside closed folders, and never through symlinks', () => {
    const root = mkdtempSync(join(tmpdir(), 'rune-closed-'));
    writeFileSync(join(root, 'passwd'), 'root:x:0:0\n');
    writeFileSync(join(root, 'shadow-'), 'root:$6$\n', { mode: 0o600 });
    mkdirSync(join(root, 'db', 'main'), { recursive: true });
    writeFileSync(join(root, 'db', 'main', 'pg_hba.conf'), 'x', { mode: 0o640 });
    mkdirSync(join(root, 'private'), { mode: 0o700 });
    writeFileSync(join(root, 'private', 'key.pem'), 'x', { mode: 0o600 });
    symlinkSync(join(root, 'shadow-'), join(root, 'link-to-shadow'));
    chmodSync(join(root, 'private'), 0o700);
    expect(listed(root)).toEqual(
      [join(root, 'db', 'main', 'pg_hba.conf'), join(root, 'private'), join(root, 'shadow-')].sort(),
    );
    expect(listed('/nonexistent-rune-folder')).toEqual([]);
  });

  it('hides them in every call, a secret added to a subfolder since the last call included', () => {
    const root = mkdtempSync(join(tmpdir(), 'rune-closed-hide-'));
    writeFileSync(join(root, 'open.conf'), 'open\n');
    writeFileSync(join(root, 'shadow-'), 'SECRET-1\n', { mode: 0o600 });
    mkdirSync(join(root, 'sub'));
    const call = () =>
      spawnSync(
        sandboxHelperPath(),
        [
          ...SYSTEM,
          '--ro',
          root,
          '--hide-closed',
          root,
          '--',
          '/bin/sh',
          '-c',
          `cat ${root}/*.conf ${root}/shadow- ${root}/sub/* 2>/dev/null; echo end`,
        ],
        { encoding: 'utf8' },
      );
    const first = call();
    expect(first.stdout).toBe('open\nend\n');
    // Only the subfolder changes: the folder's own stamp (what a cache would be keyed by) does not.
    writeFileSync(join(root, 'sub', 'key.pem'), 'SECRET-2\n', { mode: 0o600 });
    const second = call();
    expect(second.stdout).toBe('open\nend\n');
    // The control: the same call without --hide-closed reads both (root reads 0600 files).
    const open = spawnSync(
      sandboxHelperPath(),
      [...SYSTEM, '--ro', root, '--', '/bin/sh', '-c', `cat ${root}/shadow- ${root}/sub/key.pem`],
      { encoding: 'utf8' },
    );
    expect(open.stdout).toBe('SECRET-1\nSECRET-2\n');
  });

  it('hides a path both named and found once, leaving nothing of the hiding in the view', () => {
    const root = mkdtempSync(join(tmpdir(), 'rune-closed-twice-'));
    writeFileSync(join(root, 'shadow-'), 'SECRET\n', { mode: 0o600 });
    const named = join(root, 'shadow-');
    const result = spawnSync(
      sandboxHelperPath(),
      [
        ...SYSTEM,
        '--ro',
        root,
        '--hide',
        named,
        '--hide',
        named,
        '--hide-closed',
        root,
        '--',
        '/bin/sh',
        '-c',
        `cat ${named}; ls -A /`,
      ],
      { encoding: 'utf8' },
    );
    expect(result.status).toBe(0);
    expect(result.stdout).not.toContain('SECRET');
    // A path hidden twice stacked two binds of the empty file, which then stayed in the root.
    expect(result.stdout).not.toMatch(/\.rune-empty/);
    expect(result.stdout).toMatch(/^usr$/m);
  });
});
