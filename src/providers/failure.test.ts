import { describe, expect, it } from 'vitest';
import { ProviderFailure, parseRetryAfter } from './failure.ts';
import { DEFAULT_RETRY, retryDelay } from './retry.ts';

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  it.each([
    ['1', 1000],
    ['0', 0],
    ['2.5', 2500],
    ['Thu, 01 Jan 2026 00:00:30 GMT', 30_000],
    ['Wed, 31 Dec 2025 23:00:00 GMT', 0],
    ['soon', undefined],
    [undefined, undefined],
  ])('%s → %s ms', (value, ms) => {
    expect(parseRetryAfter(value, now)).toBe(ms);
  });
});

describe('retry policy', () => {
  it('backs off exponentially up to the cap unless the server says when', () => {
    const failure = new ProviderFailure('http', 'busy', { status: 503 });
    expect([1, 2, 3, 4, 5, 6].map((n) => retryDelay(n, failure, DEFAULT_RETRY))).toEqual([
      500, 1000, 2000, 4000, 8000, 8000,
    ]);
    const told = new ProviderFailure('http', 'slow down', { status: 429, retryAfterMs: 3000 });
    expect(retryDelay(1, told, DEFAULT_RETRY)).toBe(3000);
  });

  it.each([
    [429, true],
    [408, true],
    [500, true],
    [529, true],
    [400, false],
    [401, false],
    [404, false],
  ])('HTTP %i retryable: %s', (status, retryable) => {
    expect(new ProviderFailure('http', 'x', { status }).retryable).toBe(retryable);
  });

  it('never retries once text went out', () => {
    const failure = new ProviderFailure('network', 'reset');
    expect(failure.retryable).toBe(true);
    failure.partial = true;
    expect(failure.retryable).toBe(false);
  });
});
