import { mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { inputFolders, resolveInside } from './paths.ts';

function fixture(): { root: string; outside: string } {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'rune-paths-')));
  const root = join(base, 'src');
  mkdirSync(join(root, 'repo'), { recursive: true });
  mkdirSync(join(root, 'notes'));
  writeFileSync(join(root, 'repo', 'prompt.md'), 'hi');
  writeFileSync(join(base, 'secret.txt'), 'no');
  symlinkSync(join(base, 'secret.txt'), join(root, 'repo', 'link.md'));
  symlinkSync(base, join(root, 'escape'));
  return { root, outside: base };
}

describe('resolveInside', () => {
  it('resolves a relative file inside the root', () => {
    const { root } = fixture();
    expect(resolveInside(root, 'repo/prompt.md', 'prompt_file')).toBe(join(root, 'repo', 'prompt.md'));
    expect(resolveInside(root, './repo/../repo/prompt.md', 'prompt_file')).toBe(
      join(root, 'repo', 'prompt.md'),
    );
  });

  it.each([['../secret.txt'], ['repo/link.md'], ['escape/secret.txt']])(
    'refuses %s, which escapes',
    (path) => {
      const { root, outside } = fixture();
      expect(() => resolveInside(root, path, 'prompt_file')).toThrow(/resolves outside/);
      expect(() => resolveInside(root, join(outside, 'secret.txt'), 'prompt_file')).toThrow(
        /resolves outside/,
      );
    },
  );

  it('takes a file in a folder whose name begins with two dots (..x is a name, not a way up)', () => {
    const { root } = fixture();
    mkdirSync(join(root, '..notes'));
    writeFileSync(join(root, '..notes', 'prompt.md'), 'hi');
    expect(resolveInside(root, '..notes/prompt.md', 'prompt_file')).toBe(join(root, '..notes', 'prompt.md'));
    // …and a sibling whose name only starts like the root's is not inside it.
    mkdirSync(`${root}-evil`);
    writeFileSync(join(`${root}-evil`, 'prompt.md'), 'no');
    expect(() => resolveInside(root, '../src-evil/prompt.md', 'prompt_file')).toThrow(/resolves outside/);
  });

  it('says when the file does not exist', () => {
    const { root } = fixture();
    expect(() => resolveInside(root, 'nope.md', 'prompt_file')).toThrow(/does not exist/);
  });
});

describe('inputFolders', () => {
  it('lists the real folders directly under src, never symlinks', () => {
    const { root } = fixture();
    expect(inputFolders(root)).toEqual([join(root, 'notes'), join(root, 'repo')]);
  });
});

describe('resolveInside, order of checks', () => {
  it('calls a path outside the root outside even when it does not exist', () => {
    const { root } = fixture();
    expect(() => resolveInside(root, '../../no/such/file', 'prompt_file')).toThrow(/resolves outside/);
  });
});
