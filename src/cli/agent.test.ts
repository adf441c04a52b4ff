import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readToEnd } from './agent.ts';

describe('readToEnd (stdin read straight from its descriptor)', () => {
  const dirs: string[] = [];
  const scratch = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'rune-stdin-'));
    dirs.push(dir);
    return dir;
  };
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('reads a file given as stdin to its end, past one buffer', () => {
    const file = join(scratch(), 'prompt');
    const text = `${'x'.repeat(200 * 1024)}\nend`;
    writeFileSync(file, text);
    const fd = openSync(file, 'r');
    const chunks: Buffer[] = [];
    try {
      expect(readToEnd(fd, chunks)).toBe(true);
    } finally {
      closeSync(fd);
    }
    expect(Buffer.concat(chunks).toString('utf8')).toBe(text);
  });

  it('stops on a non-blocking pipe that has no more yet, keeping what it read, and ends at EOF', () => {
    const fifo = join(scratch(), 'fifo');
    execFileSync('mkfifo', [fifo]);
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const writer = openSync(fifo, constants.O_WRONLY);
    const chunks: Buffer[] = [];
    try {
      writeSync(writer, 'first part ');
      expect(readToEnd(reader, chunks)).toBe(false);
      writeSync(writer, 'and the rest');
      closeSync(writer);
      expect(readToEnd(reader, chunks)).toBe(true);
    } finally {
      closeSync(reader);
    }
    expect(Buffer.concat(chunks).toString('utf8')).toBe('first part and the rest');
  });
});
