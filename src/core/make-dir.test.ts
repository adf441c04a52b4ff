import { spawnSync } from 'node:child_process';
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSync } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { makeDir } from './make-dir.ts';

describe('makeDir', () => {
  it('creates every missing folder with the mode', () => {
    const base = mkdtempSync(join(tmpdir(), 'rune-mkdir-'));
    makeDir(join(base, 'a', 'b', 'c'));
    expect(statSync(join(base, 'a', 'b', 'c')).mode & 0o777).toBe(0o700);
    makeDir(join(base, 'a', 'b', 'c'));
  });

  it('names EROFS on a read-only file system, where mkdirSync(recursive) says ENOENT', () => {
    // A read-only tmpfs needs a mount namespace: unshare as root, or a user namespace otherwise.
    const script = `
      const { mkdirSync } = require('node:fs');
      const codes = [];
      try { mkdirSync('/mnt/x/.rune/cache', { recursive: true }); } catch (e) { codes.push(e.code); }
      try { require(process.argv[1]).makeDir('/mnt/x/.rune/cache'); } catch (e) { codes.push(e.code); }
      console.log(codes.join(' '));`;
    const bundle = join(mkdtempSync(join(tmpdir(), 'rune-mkdir-')), 'make-dir.cjs');
    buildSync({
      entryPoints: [join(import.meta.dirname, 'make-dir.ts')],
      bundle: true,
      platform: 'node',
      format: 'cjs',
      outfile: bundle,
    });
    const result = spawnSync(
      'unshare',
      [
        '-rm',
        'sh',
        '-c',
        `mount -t tmpfs -o ro none /mnt && exec "${process.execPath}" -e "$0" "$1"`,
        script,
        bundle,
      ],
      { encoding: 'utf8' },
    );
    if (result.status !== 0 && /unshare|mount/.test(result.stderr)) {
      console.warn(`skipped: no mount namespace here (${result.stderr.trim()})`);
      return;
    }
    expect(result.stdout.trim()).toBe('ENOENT EROFS');
  });
});

describe('makeDir under /proc', () => {
  it('fails with ENOENT at once where mkdir(2) says ENOENT although the parent exists', () => {
    expect(() => makeDir('/proc/rune-home-test/cache/native')).toThrow(/ENOENT/);
    expect(makeDir(join(mkdtempSync(join(tmpdir(), 'rune-mkdir-')), 'x', 'y'))).toMatch(/\/x$/);
  });
});
