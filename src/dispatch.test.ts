import { describe, expect, it } from 'vitest';
import { chooseMode } from './dispatch.ts';

describe('chooseMode', () => {
  it.each([
    ['check', [], 'concourse'],
    ['in', ['/tmp/dest'], 'concourse'],
    ['out', ['/tmp/src'], 'concourse'],
    // The invoked name wins over anything in the arguments.
    ['check', ['notes'], 'concourse'],
    ['rune', ['_landlock', '--ro', '/usr', '--', 'true'], 'sandbox'],
    ['rune', ['_seccomp', '--', 'true'], 'sandbox'],
    ['rune', ['_net-guard', '--', 'true'], 'sandbox'],
    ['rune', ['notes', '--port', '1'], 'notes'],
    // `rune sandbox` runs from the small sandbox bundle unless commander is needed (help, odd forms).
    ['rune', ['sandbox', '--', 'true'], 'sandbox'],
    ['rune', ['--sandbox', 'off', 'sandbox', '--layers', '--', 'true'], 'sandbox'],
    ['rune', ['sandbox', '--help'], 'cli'],
    ['rune', ['sandbox', 'true'], 'cli'],
    ['rune', ['--version'], 'version'],
    ['rune', ['-V'], 'version'],
    ['rune', ['doctor'], 'cli'],
    ['rune', [], 'cli'],
    // A prompt that mentions a mode name is still a prompt.
    ['rune', ['explain', 'notes'], 'cli'],
    ['rune', ['help', 'notes'], 'notes'],
    ['rune', ['help', 'notes', 'now'], 'cli'],
    ['rune', ['--version', 'extra'], 'cli'],
    ['checker', [], 'cli'],
  ] as const)('%s %j → %s', (name, args, mode) => {
    expect(chooseMode(name, args).mode).toBe(mode);
  });

  it('rune help notes is rune notes --help', () => {
    expect(chooseMode('rune', ['help', 'notes']).args).toEqual(['--help']);
  });

  it('drops the word notes from the notes arguments', () => {
    expect(chooseMode('rune', ['notes', '--port', '9']).args).toEqual(['--port', '9']);
  });
});
