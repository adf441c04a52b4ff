import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isRuneError } from '../core/errors.ts';
import { findFusermount, fuseStatus, requireFuse } from './status.ts';

describe('whether rune mount can use FUSE', () => {
  it('finds fusermount3 on PATH before the usual folders', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rune-fusermount-'));
    writeFileSync(join(dir, 'fusermount3'), '#!/bin/sh\n');
    chmodSync(join(dir, 'fusermount3'), 0o755);
    expect(findFusermount({ PATH: dir })).toBe(join(dir, 'fusermount3'));
  });

  it('as a user, a missing fusermount3 makes it unusable, with how to get it; requireFuse refuses with exit 15', () => {
    const status = fuseStatus({ PATH: '/nonexistent' }, { euid: 1000, usualDirs: [] });
    expect(status.fusermount).toBeUndefined();
    expect(status.usable).toBe(false);
    expect(status.detail).toContain('fusermount3 is missing, which mounting as a user needs; install fuse3');
    let thrown: unknown;
    try {
      requireFuse(status);
    } catch (error) {
      thrown = error;
    }
    expect(isRuneError(thrown) && thrown.code === 'FUSE_UNAVAILABLE' && thrown.exitCode).toBe(15);
  });

  it('as root without fusermount3 it works, and says that a dead rune leaves its mount', () => {
    const status = fuseStatus({ PATH: '/nonexistent' }, { euid: 0, usualDirs: [] });
    expect(status.detail).not.toContain('fusermount3 is missing');
    if (status.usable) expect(status.detail).toContain('a rune that dies leaves its mount: umount DIR');
    else expect(status.detail).toMatch(/libfuse 3 is not available|\/dev\/fuse cannot be opened/);
  });
});
