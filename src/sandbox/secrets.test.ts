import { chmodSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { closedSystemEntries, closedToOthers, findClosedEntries } from './secrets.ts';

describe('closedToOthers', () => {
  it.each([
    [0o640, false, true], // /etc/shadow on Debian
    [0o600, false, true], // a host key, /etc/shadow-
    [0o644, false, false],
    [0o604, false, false],
    [0o700, true, true], // /etc/ssl/private
    [0o750, true, true],
    [0o754, true, true], // readable but not enterable
    [0o751, true, true], // enterable but not listable: names could be guessed
    [0o755, true, false],
  ])('mode %o (folder: %s) → %s', (mode, isDirectory, closed) => {
    expect(closedToOthers(mode, isDirectory)).toBe(closed);
  });
});

describe('findClosedEntries', () => {
  it('finds closed files and folders at any depth, not inside closed folders, and skips symlinks', () => {
    const root = mkdtempSync(join(tmpdir(), 'rune-secrets-'));
    writeFileSync(join(root, 'passwd'), 'root:x:0:0\n');
    writeFileSync(join(root, 'shadow-'), 'root:$6$\n', { mode: 0o600 });
    mkdirSync(join(root, 'db', 'main'), { recursive: true });
    writeFileSync(join(root, 'db', 'main', 'pg_hba.conf'), 'x', { mode: 0o640 });
    mkdirSync(join(root, 'private'), { mode: 0o700 });
    writeFileSync(join(root, 'private', 'key.pem'), 'x', { mode: 0o600 });
    symlinkSync(join(root, 'shadow-'), join(root, 'link-to-shadow'));
    chmodSync(join(root, 'private'), 0o700);
    expect(findClosedEntries(root).sort()).toEqual(
      [join(root, 'db', 'main', 'pg_hba.conf'), join(root, 'private'), join(root, 'shadow-')].sort(),
    );
  });

  it('returns nothing for a folder that does not exist', () => {
    expect(findClosedEntries('/nonexistent-rune-folder')).toEqual([]);
  });
});

describe('closedSystemEntries', () => {
  it('scans once while the folder is unchanged, and again when an entry is added', () => {
    const root = mkdtempSync(join(tmpdir(), 'rune-secrets-cache-'));
    let scans = 0;
    const scan = (folder: string) => {
      scans++;
      return findClosedEntries(folder);
    };
    expect(closedSystemEntries(root, scan)).toEqual([]);
    expect(closedSystemEntries(root, scan)).toEqual([]);
    expect(scans).toBe(1);
    writeFileSync(join(root, 'shadow-'), 'x', { mode: 0o600 });
    expect(closedSystemEntries(root, scan)).toEqual([join(root, 'shadow-')]);
    expect(scans).toBe(2);
  });
});
