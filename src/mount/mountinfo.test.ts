import { mkdtempSync, realpathSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isRuneMount, mountPath, parseMountinfo } from './mountinfo.ts';

const TABLE = [
  '22 27 0:21 / /proc rw,relatime - proc proc rw',
  '120 27 0:61 / /tmp/my\\040tools rw,nosuid,nodev,relatime - fuse.rune rune rw,user_id=0,group_id=0',
  '121 27 0:62 / /tmp/other rw,relatime shared:5 - fuse.sshfs host:/ rw',
  '',
].join('\n');

describe('mountinfo', () => {
  it('reads mount points (octal escapes undone) and types, optional fields or not', () => {
    expect(parseMountinfo(TABLE)).toEqual([
      { mountpoint: '/proc', type: 'proc' },
      { mountpoint: '/tmp/my tools', type: 'fuse.rune' },
      { mountpoint: '/tmp/other', type: 'fuse.sshfs' },
    ]);
  });

  it('knows a rune mount from another FUSE mount and from a plain folder', () => {
    expect(isRuneMount('/tmp/my tools', TABLE)).toBe(true);
    expect(isRuneMount('/tmp/other', TABLE)).toBe(false);
    expect(isRuneMount('/tmp', TABLE)).toBe(false);
  });

  it('names a folder by its canonical parent without resolving the folder itself', () => {
    const root = realpathSync(mkdtempSync(join(tmpdir(), 'rune-mountinfo-')));
    symlinkSync(root, join(root, 'link'));
    expect(mountPath('link/mnt', root)).toBe(join(root, 'mnt'));
    expect(mountPath('gone/mnt', root)).toBe(join(root, 'gone/mnt'));
  });
});
