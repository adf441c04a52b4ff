// canonicaliser() answers as canonicalise() does, path by path, for what a command line names:
// existing files, files not created yet, symlinked folders, a file on the way, a dangling link.
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { canonicalise, canonicaliser } from './paths.ts';

describe('canonicaliser', () => {
  it('gives what canonicalise gives', () => {
    const root = mkdtempSync(join(tmpdir(), 'rune-paths-'));
    mkdirSync(join(root, 'real/sub'), { recursive: true });
    writeFileSync(join(root, 'real/file'), 'x');
    symlinkSync(join(root, 'real'), join(root, 'link'));
    symlinkSync(join(root, 'nowhere'), join(root, 'dangling'));
    const paths = [
      'real/file',
      'real/missing',
      'real/sub/deeper/missing',
      'link/file',
      'link/missing/x',
      'real/file/under-a-file',
      'dangling',
      'dangling/x',
      'link',
    ].map((path) => join(root, path));
    const resolve = canonicaliser();
    for (const path of [...paths, ...paths]) expect(resolve(path), path).toBe(canonicalise(path));
    expect(resolve(join(root, 'link/missing/x'))).toBe(join(root, 'real/missing/x'));
  });
});
