import { describe, expect, it } from 'vitest';
import { helpAlias } from './index.ts';

describe('helpAlias', () => {
  it.each([
    [['help'], ['--help']],
    [
      ['help', 'doctor'],
      ['doctor', '--help'],
    ],
    [
      ['help', 'sandbox'],
      ['sandbox', '--help'],
    ],
    // Prompts that begin with the word stay prompts.
    [
      ['help', 'me'],
      ['help', 'me'],
    ],
    [
      ['help', 'me', 'fix', 'the', 'build'],
      ['help', 'me', 'fix', 'the', 'build'],
    ],
    [['doctor'], ['doctor']],
    [[], []],
  ])('%j → %j', (args, expected) => {
    expect(helpAlias(args, new Set(['doctor', 'sandbox']))).toEqual(expected);
  });
});
