import { describe, expect, it } from 'vitest';
import type { ResultLine } from './scan.ts';
import { mergeShares, type SharedFile } from './shares.ts';

const hit = (n: number): ResultLine => ({ n, text: `hit ${n}`, match: true });
const ctx = (n: number): ResultLine => ({ n, text: `ctx ${n}`, match: false });
const file = (seq: number, lines: ResultLine[]): SharedFile => ({
  seq,
  path: `f${seq}`,
  lines,
  matches: lines.filter((l) => l.match).length,
});

describe('mergeShares', () => {
  it.each([
    {
      why: 'files come back in walk order, whatever thread found them first',
      found: [file(4, [hit(1)]), file(1, [hit(2)]), file(9, [hit(3)])],
      max: 10,
      context: 0,
      paths: ['f1', 'f4', 'f9'],
      stopped: false,
    },
    {
      why: 'max_results counts lines across files; later files are dropped',
      found: [file(3, [hit(1), hit(2)]), file(0, [hit(5)]), file(7, [hit(1)])],
      max: 3,
      context: 0,
      paths: ['f0', 'f3'],
      stopped: true,
    },
    {
      why: 'exactly max_results lines: stopped, as one thread says',
      found: [file(0, [hit(1)]), file(2, [hit(1)])],
      max: 2,
      context: 0,
      paths: ['f0', 'f2'],
      stopped: true,
    },
  ])('$why', ({ found, max, context, paths, stopped }) => {
    const merged = mergeShares(found, max, context);
    expect(merged.files.map((f) => f.path)).toEqual(paths);
    expect(merged.stopped).toBe(stopped);
  });

  it('cuts the last file after its allowed matches, keeping the context after as context', () => {
    // With context 1: lines 1-2 (ctx, hit), 3 (hit), 4 (ctx), 6 (hit), 7 (ctx).
    const lines = [ctx(1), hit(2), hit(3), ctx(4), hit(6), ctx(7)];
    const merged = mergeShares([file(0, lines)], 1, 1);
    expect(merged.files[0]).toEqual({
      path: 'f0',
      lines: [ctx(1), hit(2), { ...hit(3), match: false }],
      matches: 1,
    });
    const two = mergeShares([file(0, lines)], 2, 1);
    expect(two.files[0]!.lines).toEqual([ctx(1), hit(2), hit(3), ctx(4)]);
    // No context: the line after the last allowed match is not shown.
    expect(mergeShares([file(0, lines)], 2, 0).files[0]!.lines).toEqual([ctx(1), hit(2), hit(3)]);
  });
});
