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

describe('help texts say what the commands take', () => {
  const program = buildProgram(() => {});
  it('rune mcp login and logout take a table name or a URL', () => {
    const mcp = program.commands.find((command) => command.name() === 'mcp')!;
    expect(mcp.description()).toContain('rune mcp login NAME|URL');
    for (const name of ['login', 'logout']) {
      const help = mcp.commands.find((command) => command.name() === name)!.helpInformation();
      expect(help).toMatch(/an \[\[mcp\]\] table name, or its URL/);
    }
  });

  it('--json lists every field of its object', () => {
    const option = program.options.find((o) => o.long === '--json')!;
    for (const field of ['answer', 'status', 'steps', 'usage', 'tool_calls', 'model', 'session_id', 'error'])
      expect(option.description).toContain(field);
  });
});
