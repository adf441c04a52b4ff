import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config/load.ts';
import { isRuneError, type RuneError } from '../core/errors.ts';
import { FLAG_LABELS, flagsToLayer } from './flags.ts';

function problems(flags: Parameters<typeof flagsToLayer>[0], env: NodeJS.ProcessEnv = {}): string[] {
  try {
    loadConfig({
      env: { HOME: '/home/u', ...env },
      flags: flagsToLayer(flags),
      flagLabels: FLAG_LABELS,
      readFile: () => {
        throw Object.assign(new Error('missing'), { code: 'ENOENT' });
      },
    });
  } catch (error) {
    if (isRuneError(error)) return [...(error as RuneError).details];
    throw error;
  }
  return [];
}

describe('numeric flags', () => {
  it('are numbers when they look like one, so a negative or fractional value is judged as a number', () => {
    expect(flagsToLayer({ maxSteps: '12', timeout: ' 30 ' })).toEqual({ max_steps: 12, timeout_secs: 30 });
    expect(problems({ maxSteps: '-3' })).toEqual([expect.stringMatching(/^--max-steps: Too small: .*>0/)]);
    expect(problems({ timeout: '0' })).toEqual([expect.stringMatching(/^--timeout: Too small/)]);
    expect(problems({ tokenBudget: '1.5' })).toEqual([expect.stringMatching(/^--token-budget: .*int/)]);
    expect(problems({ maxOutputTokens: 'lots' })).toEqual([
      expect.stringMatching(/^--max-output-tokens: .*number/),
    ]);
  });

  it('from the environment get the same treatment', () => {
    expect(problems({}, { RUNE_MAX_STEPS: '-3' })).toEqual([
      expect.stringMatching(/^RUNE_MAX_STEPS: Too small: .*>0/),
    ]);
  });
});

describe('--base-url', () => {
  it('must be an http(s) URL: "localhost:8080/v1" and ftp:// are refused at load, not retried as connections', () => {
    for (const url of ['localhost:8080/v1', 'ftp://example.com/v1', 'nope']) {
      expect(problems({ baseUrl: url })).toEqual([
        expect.stringMatching(/^--base-url: must be an http:\/\/ or https:\/\/ URL/),
      ]);
    }
    expect(problems({ baseUrl: 'http://127.0.0.1:11434/v1' })).toEqual([]);
    expect(problems({ baseUrl: 'https://api.openai.com/v1' })).toEqual([]);
  });
});
