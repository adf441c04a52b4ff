import { beforeEach, describe, expect, it, vi } from 'vitest';
import { parseSandboxInvocation } from './argv.ts';

// commander (the cli bundle) stays the reference: every form the fast path accepts must reach
// runSandboxCommand with the same command and options as commander would pass.
const calls: { command: string[]; options: Record<string, unknown> }[] = [];
vi.mock('./command.ts', () => ({
  runSandboxCommand: async (command: string[], options: Record<string, unknown>) => {
    calls.push({ command, options });
    return 0;
  },
}));

async function viaCommander(args: string[]) {
  const { run } = await import('../cli/index.ts');
  calls.length = 0;
  await run({ args, invokedAs: 'rune' });
  expect(calls).toHaveLength(1);
  const { command, options } = calls[0]!;
  return {
    command,
    options: {
      allowRead: options.allowRead,
      allowWrite: options.allowWrite,
      allowDomain: options.allowDomain,
      sandbox: options.sandbox,
      layers: options.layers,
      config: options.config,
      verbose: options.verbose,
    },
  };
}

describe('parseSandboxInvocation', () => {
  beforeEach(() => {
    calls.length = 0;
  });

  it.each([
    [['sandbox', '--', '/bin/true']],
    [['sandbox', '--', 'ls', '-la', '--', 'x']],
    [['sandbox', '--layers', '--', 'sh', '-c', 'exit 3']],
    [['sandbox', '--allow-read', '/a', '--allow-read=/b', '--allow-write', '/c', '--', 'cat']],
    [['sandbox', '--allow-domain', 'example.com', '--allow-domain=x.org', '--', 'curl']],
    [['--sandbox', 'off', 'sandbox', '--', '/bin/true']],
    [['--sandbox=strict', '--config', '/tmp/r.toml', 'sandbox', '--', 'true']],
    [['-c', '/tmp/r.toml', 'sandbox', '--sandbox', 'auto', '--', 'true']],
    [['sandbox', '--sandbox', 'off', '--sandbox', 'strict', '--', 'true']],
    [['sandbox', '--config=', '--', 'true']],
    [['sandbox', '--sandbox', 'bad', '--', 'true']],
    [['-v', 'sandbox', '--', '/bin/true']],
    [['--verbose', 'sandbox', '--layers', '--allow-write', '/w', '--', '/bin/true']],
    [['sandbox', '-v', '--', 'true']],
  ])('%j is parsed as commander parses it', async (args) => {
    const fast = parseSandboxInvocation(args);
    expect(fast).toBeDefined();
    const reference = await viaCommander(args);
    expect({
      command: fast!.command,
      options: {
        layers: undefined,
        sandbox: undefined,
        config: undefined,
        verbose: undefined,
        ...fast!.options,
      },
    }).toEqual(reference);
  });

  it.each([
    [[]],
    [['sandbox']],
    [['sandbox', '--']],
    [['sandbox', 'ls']],
    [['sandbox', '--help', '--', 'ls']],
    [['sandbox', '-h', '--', 'ls']],
    [['--help', 'sandbox', '--', 'ls']],
    [['sandbox', '--layers=1', '--', 'ls']],
    [['--verbose=1', 'sandbox', '--', 'ls']],
    [['-vv', 'sandbox', '--', 'ls']],
    [['sandbox', '--allow-read', '--layers', '--', 'ls']],
    [['--allow-read', '/x', 'sandbox', '--', 'ls']],
    [['--model', 'm', 'sandbox', '--', 'ls']],
    [['--sandbox', 'sandbox', '--', 'ls']],
    [['-c=/x', 'sandbox', '--', 'ls']],
    [['sandbox', 'sandbox', '--', 'ls']],
    [['--', 'sandbox', '--', 'ls']],
    [['doctor']],
    [['explain', 'sandbox', '--', 'ls']],
    [['_landlock', '--', 'ls']],
  ])('%j is left to commander', (args) => {
    expect(parseSandboxInvocation(args)).toBeUndefined();
  });
});
