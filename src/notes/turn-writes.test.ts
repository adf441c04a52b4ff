import { describe, expect, it } from 'vitest';
import { TurnWrites } from './turn-writes.ts';

const text = (b: Buffer | null) => b?.toString() ?? null;

describe('TurnWrites', () => {
  it('gives each recipient its frames in order, in one buffer shared by the same frames', () => {
    const turn = new TurnWrites<string>();
    const a = turn.add(Buffer.from('A'));
    const b = turn.add(Buffer.from('B'));
    const c = turn.add(Buffer.from('C'));
    for (const [to, frames] of [
      ['x', [a, b]],
      ['y', [a, b]],
      ['z', [b]],
      ['w', [c, a]],
    ] as const) {
      for (const f of frames) turn.queue(to, f);
    }
    const out = new Map(turn.drain());
    expect([...out].map(([to, bytes]) => [to, bytes.toString()])).toEqual([
      ['x', 'AB'],
      ['y', 'AB'],
      ['z', 'B'],
      ['w', 'CA'],
    ]);
    expect(out.get('x')).toBe(out.get('y'));
    expect([...turn.drain()]).toEqual([]);
  });

  it('takes one recipient out of the turn with what it has queued', () => {
    const turn = new TurnWrites<string>();
    const a = turn.add(Buffer.from('A'));
    const b = turn.add(Buffer.from('B'));
    turn.queue('x', a);
    turn.queue('x', b);
    turn.queue('y', b);
    expect(text(turn.take('x'))).toBe('AB');
    expect(turn.take('x')).toBeNull();
    expect([...turn.drain()].map(([to, bytes]) => [to, bytes.toString()])).toEqual([['y', 'B']]);
  });
});
