import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT_CODES, formatError, isRuneError, RuneError, toRuneError } from './errors.ts';

describe('exit codes', () => {
  it('are distinct', () => {
    const codes = Object.values(EXIT_CODES);
    expect(new Set(codes).size).toBe(codes.length);
    expect(codes).not.toContain(0);
  });

  it('agree with docs/exit-codes.md, row by row', () => {
    const doc = readFileSync(join(import.meta.dirname, '../../docs/exit-codes.md'), 'utf8');
    const rows = [...doc.matchAll(/^\|\s*(\d+)\s*\|\s*`([A-Z_]+)`\s*\|/gm)].map((m) => [m[2], Number(m[1])]);
    const documented = Object.fromEntries(rows);
    const { ...table } = EXIT_CODES;
    expect(documented).toEqual(table);
  });
});

describe('RuneError', () => {
  it('is recognised by brand, not by class identity', () => {
    const error = new RuneError('USAGE', 'bad flag');
    expect(isRuneError(error)).toBe(true);
    expect(isRuneError({ ...error })).toBe(false);
    expect(isRuneError(new Error('x'))).toBe(false);
    expect(error.exitCode).toBe(2);
  });

  it('wraps foreign errors as INTERNAL keeping the cause', () => {
    const original = new TypeError('boom');
    const wrapped = toRuneError(original);
    expect(wrapped.code).toBe('INTERNAL');
    expect(wrapped.cause).toBe(original);
    expect(toRuneError('text', 'IO').code).toBe('IO');
  });

  it('formats details under the message', () => {
    const text = formatError(new RuneError('CONFIG_INVALID', 'invalid', { details: ['a: x', 'b: y'] }));
    expect(text).toBe('rune: invalid\n  a: x\n  b: y');
  });
});
