import { describe, expect, it } from 'vitest';
import { ByteBudget, resolveLimits } from './limits.ts';

describe('ByteBudget', () => {
  it('lets two seconds of bytes through at once, then the rate, per key', () => {
    let now = 0;
    const budget = new ByteBudget(100, () => now);
    expect(budget.take('a', 150)).toBe(0);
    expect(budget.take('a', 50)).toBe(0);
    expect(budget.take('a', 100)).toBe(1);
    expect(budget.take('b', 200)).toBe(0);
    now = 1000;
    expect(budget.take('a', 100)).toBe(0);
    expect(budget.take('a', 1)).toBe(1);
  });
});

describe('resolveLimits', () => {
  it('fills every limit with its default and takes what the config sets', () => {
    const limits = resolveLimits({ limits: { max_file_kb: 4, login_window_minutes: 1 } });
    expect(limits.maxFileBytes).toBe(4096);
    expect(limits.loginWindowMs).toBe(60_000);
    expect(limits.maxStreamsPerClient).toBe(16);
    expect(limits.collabBytesPerSecond).toBe(128 * 1024);
  });
});
