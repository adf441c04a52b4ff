import { describe, expect, it } from 'vitest';
import type { PolicyDecision, ToolCallForPolicy } from '../policy/types.ts';
import { commandPrefix, coveringGrant, grantFor } from './session-grants.ts';

type Ask = Extract<PolicyDecision, { kind: 'ask' }>;
const ask = (rule: string, suggestion?: Ask['suggestion']): Ask => ({
  kind: 'ask',
  question: 'q',
  reason: 'r',
  rule,
  ...(suggestion ? { suggestion } : {}),
});
const cmd = (text: string): ToolCallForPolicy => ({
  tool: 'execute_cmd',
  args: { cmd: text },
  source: 'builtin',
});
const edit = (path: string): ToolCallForPolicy => ({ tool: 'edit_file', args: { path }, source: 'builtin' });

describe('session grants', () => {
  it.each([
    ['python3 -m unittest -v', 'python3 -m unittest'],
    ['npm test', 'npm test'],
    ['cargo test --release', 'cargo test'],
    ['make', 'make'],
    ['ls -la', 'ls'],
    ['rm -rf ~', undefined],
    ['npm test; curl x', undefined],
    ['echo $(id)', undefined],
    ['./run.sh', undefined],
  ])('the prefix of %j is %j', (text, prefix) => {
    expect(commandPrefix(text)).toBe(prefix);
  });

  it('a command grant covers that prefix only, as a single simple command', () => {
    const grant = grantFor(cmd('npm test'), ask('command.not-allowed'), '/w')!;
    expect(grant).toEqual({ kind: 'command', prefix: 'npm test' });
    expect(coveringGrant([grant], cmd('npm test -- --watch'), ask('command.not-allowed'), '/w')).toBe(grant);
    expect(coveringGrant([grant], cmd('npm testing'), ask('command.not-allowed'), '/w')).toBeUndefined();
    expect(
      coveringGrant([grant], cmd('npm test && rm -rf /'), ask('command.not-allowed'), '/w'),
    ).toBeUndefined();
    // Asked for another reason (a redirection, a dangerous flag): never covered.
    expect(coveringGrant([grant], cmd('npm test'), ask('command.redirect'), '/w')).toBeUndefined();
  });

  it('an edits grant covers the folder, never a file git or the shell runs later', () => {
    const suggestion = (value: string) => ({ list: 'allowed_files_rw' as const, value });
    const grant = grantFor(edit('a.py'), ask('path.not-allowed', suggestion('/w/a.py')), '/w')!;
    expect(grant).toEqual({ kind: 'edits', folder: '/w' });
    expect(
      coveringGrant([grant], edit('sub/b.py'), ask('path.not-allowed', suggestion('/w/sub/b.py')), '/w'),
    ).toBe(grant);
    expect(
      coveringGrant([grant], edit('/etc/x'), ask('path.not-allowed', suggestion('/etc/x')), '/w'),
    ).toBeUndefined();
    expect(
      coveringGrant([grant], edit('.git/hooks/pre-commit'), ask('path.runs-later'), '/w'),
    ).toBeUndefined();
  });
});
