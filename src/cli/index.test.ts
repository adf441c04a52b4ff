import { describe, expect, it } from 'vitest';
import { buildProgram, helpAlias } from './index.ts';

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

describe('rune sandbox --help', () => {
  it('shows no "(default: [])" for the repeatable options', () => {
    const sandbox = buildProgram(() => {}).commands.find((command) => command.name() === 'sandbox');
    const help = sandbox!.helpInformation();
    expect(help).toContain('--allow-read <path>');
    expect(help).toContain('--allow-domain <name>');
    expect(help).not.toContain('default:');
  });
});
