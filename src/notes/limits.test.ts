import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULTS } from '../config/schema.ts';
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

describe('the limits table of docs/notes-api.md', () => {
  it('names every [notes.limits] key with the default the schema gives it', () => {
    const doc = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'notes-api.md'), 'utf8');
    const section = doc.slice(doc.indexOf('## Limits'));
    const rows = Object.fromEntries(
      [...section.matchAll(/^\| `(\w+)` +\| (\d+) +\|/gm)].map((m) => [m[1], Number(m[2])]),
    );
    expect(rows).toEqual(DEFAULTS.notes.limits);
  });
});
