import { mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fileEquals } from './helper.ts';

describe('fileEquals (the cached helper against the embedded bytes)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rune-file-equals-'));
  // Longer than the 64 KiB read buffer, so a difference past the first chunk counts too.
  const expected = Buffer.alloc(200_000, 7);
  const file = (name: string, bytes: Uint8Array) => {
    writeFileSync(join(dir, name), bytes);
    return join(dir, name);
  };
  const late = Buffer.from(expected);
  late[150_000] = 8;
  it.each([
    ['the same bytes', file('same', expected), true],
    ['one byte differs past the first chunk', file('late', late), false],
    ['shorter', file('short', expected.subarray(0, 100_000)), false],
    ['longer', file('long', Buffer.concat([expected, Buffer.from([7])])), false],
    ['empty', file('empty', Buffer.alloc(0)), false],
    ['missing', join(dir, 'missing'), false],
  ])('%s: %s', (_what, path, same) => {
    expect(fileEquals(path, expected)).toBe(same);
  });

  it('never follows a symlink, even to the right bytes', () => {
    const target = file('target', expected);
    symlinkSync(target, join(dir, 'link'));
    expect(fileEquals(join(dir, 'link'), expected)).toBe(false);
  });
});
