// native/src/fuse_abi.h declares the part of libfuse's ABI rune uses, so the build needs no libfuse
// headers; this compiles native/test/fuse_abi_check.c against the real ones and runs it.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');
const HEADERS = '/usr/include/fuse3/fuse_lowlevel.h';

describe('fuse_abi.h against libfuse 3 headers', () => {
  it.skipIf(!existsSync(HEADERS))('has the same offsets, sizes and flag bits (libfuse3-dev)', () => {
    const out = join(mkdtempSync(join(tmpdir(), 'rune-fuse-abi-')), 'check');
    const compile = spawnSync(
      'gcc',
      [
        '-Wall',
        '-Wextra',
        '-Werror',
        '-std=gnu11',
        '-I',
        join(ROOT, 'native/src'),
        '-o',
        out,
        join(ROOT, 'native/test/fuse_abi_check.c'),
      ],
      { encoding: 'utf8' },
    );
    expect(compile.stderr).toBe('');
    expect(compile.status).toBe(0);
    const run = spawnSync(out, { encoding: 'utf8' });
    expect(run.stdout).toMatch(/^fuse_abi\.h matches libfuse 3\.\d+/);
    expect(run.status).toBe(0);
  });
});
