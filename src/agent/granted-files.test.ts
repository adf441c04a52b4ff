// Approved redirect targets made before the call and removed when unused, through src/core/fd.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createGrantedFiles } from './granted-files.ts';

describe('createGrantedFiles', () => {
  it('makes a missing file, removes it when unused, keeps it when written, leaves others alone', () => {
    const base = mkdtempSync(join(tmpdir(), 'rune-granted-'));
    writeFileSync(join(base, 'there.txt'), 'kept\n');
    const unused = join(base, 'unused.txt');
    const written = join(base, 'written.txt');
    const undo = createGrantedFiles([unused, written, join(base, 'there.txt'), join(base, 'nope', 'x')]);
    expect(readFileSync(unused, 'utf8')).toBe('');
    writeFileSync(written, 'by the command\n');
    undo();
    expect(existsSync(unused)).toBe(false);
    expect(readFileSync(written, 'utf8')).toBe('by the command\n');
    expect(readFileSync(join(base, 'there.txt'), 'utf8')).toBe('kept\n');
    expect(existsSync(join(base, 'nope'))).toBe(false);
  });

  it('makes nothing through a link: not a dangling one at the name, not one on the way', () => {
    const base = mkdtempSync(join(tmpdir(), 'rune-granted-'));
    const outside = join(base, 'outside');
    mkdirSync(outside);
    symlinkSync(join(outside, 'planted'), join(base, 'dangling.txt'));
    symlinkSync(outside, join(base, 'via'));
    const undo = createGrantedFiles([join(base, 'dangling.txt'), join(base, 'via', 'made.txt')]);
    undo();
    expect(existsSync(join(outside, 'planted'))).toBe(false);
    expect(existsSync(join(outside, 'made.txt'))).toBe(false);
  });
});
