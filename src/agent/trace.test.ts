import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openTraceFolder, writeTrace } from './trace.ts';

const input = {
  options: { prompt: 'p', cwd: '/', config: {} },
  result: {
    sessionId: 'abcdef12',
    model: 'm',
    status: 'FinalAnswer',
    steps: 1,
    usage: {},
    answer: 'a',
    toolCalls: [],
    messages: [],
  },
  events: [],
  startedAt: new Date(0),
} as unknown as Parameters<typeof writeTrace>[1];

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('writeTrace', () => {
  it('refuses a folder under /proc at once instead of hanging in mkdir', () => {
    expect(() => openTraceFolder('/', '/proc/rune-trace-test/x')).toThrow(/kernel pseudo-filesystem/);
    expect(() => openTraceFolder('/', '/sys/x')).toThrow(/kernel pseudo-filesystem/);
  });

  it('writes into the folder held at the start, even after a call replaced it by a link', () => {
    const base = mkdtempSync(join(tmpdir(), 'rune-trace-'));
    dirs.push(base);
    const outside = join(base, 'outside');
    mkdirSync(outside);
    const folder = openTraceFolder(base, 'traces');
    try {
      // What a call could do meanwhile: move the folder away and leave a link in its place.
      renameSync(join(base, 'traces'), join(base, 'moved'));
      symlinkSync(outside, join(base, 'traces'));
      const file = writeTrace(folder, input);
      expect(readdirSync(outside)).toEqual([]);
      const written = readdirSync(join(base, 'moved'));
      expect(written).toEqual(['rune-1970-01-01T00-00-00-000Z-abcdef12.json']);
      expect(JSON.parse(readFileSync(join(base, 'moved', written[0] as string), 'utf8'))).toMatchObject({
        status: 'FinalAnswer',
      });
      expect(file).toBe(join(base, 'traces', written[0] as string));
    } finally {
      folder.close();
    }
  });

  it('refuses a link or FIFO at the trace file name: never written through, never blocking', () => {
    const base = mkdtempSync(join(tmpdir(), 'rune-trace-'));
    dirs.push(base);
    const folder = openTraceFolder(base, 'traces');
    try {
      const target = join(base, 'target');
      symlinkSync(target, join(base, 'traces', 'rune-1970-01-01T00-00-00-000Z-abcdef12.json'));
      expect(() => writeTrace(folder, input)).toThrow(/symbolic link/);
      expect(existsSync(target)).toBe(false);
    } finally {
      folder.close();
    }
  });
});
