import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULTS, type RuneConfig } from '../config/schema.ts';
import { silentLogger } from '../core/logger.ts';
import { createPolicyGate } from '../policy/gate.ts';
import { toolAccess } from '../policy/test-helpers.ts';
import type { ApprovalRequest, Grant, ToolCallForPolicy } from '../policy/types.ts';
import { menuConfirmer } from './session-confirm.ts';
import { commandPrefix, coveringGrant, grantFor, type SessionGrant } from './session-grants.ts';

/** A question as the gate asks it: its grants are the suggestion, and `more` (what deciding again adds). */
const ask = (rule: string, suggestion?: Grant, more: Grant[] = []): ApprovalRequest => ({
  kind: 'ask',
  question: 'q',
  reason: 'r',
  rule,
  ...(suggestion ? { suggestion } : {}),
  grants: [...(suggestion ? [suggestion] : []), ...more],
  scopes: ['once', 'session', 'always'],
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

  const program: Grant = { list: 'allowed_commands', value: 'npm' };
  it('a command grant covers that prefix only, as a single simple command', () => {
    const grant = grantFor(cmd('npm test'), ask('command.not-allowed', program), '/w')!;
    expect(grant).toEqual({ kind: 'command', prefix: 'npm test' });
    expect(
      coveringGrant([grant], cmd('npm test -- --watch'), ask('command.not-allowed', program), '/w'),
    ).toBe(grant);
    expect(
      coveringGrant([grant], cmd('npm testing'), ask('command.not-allowed', program), '/w'),
    ).toBeUndefined();
    expect(
      coveringGrant([grant], cmd('npm test && rm -rf /'), ask('command.not-allowed', program), '/w'),
    ).toBeUndefined();
    // Asked for another reason (a redirection, a dangerous flag): never covered.
    expect(coveringGrant([grant], cmd('npm test'), ask('command.redirect', program), '/w')).toBeUndefined();
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

  // Approving a question adds all of its grants to the session's lists: a remembered grant covers a
  // later question only when that adds nothing beyond what the person approved.
  const git: Grant = { list: 'allowed_commands', value: 'git' };
  const write = (value: string): Grant => ({ list: 'allowed_files_rw', value });
  const file = (value: string): Grant => ({ list: 'allowed_files_ro', value });
  const commandGrant: SessionGrant = { kind: 'command', prefix: 'git log' };
  const editsGrant: SessionGrant = { kind: 'edits', folder: '/w' };
  const entryGrant: SessionGrant = { kind: 'entry', tool: 'read_file', suggestion: file('/data/a') };
  const read = (path: string): ToolCallForPolicy => ({
    tool: 'read_file',
    args: { path },
    source: 'builtin',
  });
  it.each<[string, boolean, SessionGrant, ToolCallForPolicy, ApprovalRequest]>([
    ['the command entry only', true, commandGrant, cmd('git log -3'), ask('command.not-allowed', git)],
    [
      'a write outside the writable paths',
      false,
      commandGrant,
      cmd('git log --output=/etc/x'),
      ask('command.not-allowed', git, [write('/etc/x')]),
    ],
    [
      'a read outside the readable paths',
      false,
      commandGrant,
      cmd('git log /srv/other'),
      ask('command.not-allowed', git, [{ list: 'allowed_paths_ro', value: '/srv/other' }]),
    ],
    [
      'another program than the prefix names',
      false,
      { kind: 'command', prefix: 'env' },
      cmd('env rm -rf x'),
      ask('command.not-allowed', { list: 'allowed_commands', value: 'rm' }),
    ],
    ['edits under the folder', true, editsGrant, edit('a.py'), ask('path.not-allowed', write('/w/a.py'))],
    [
      'an edit that also writes outside the folder',
      false,
      editsGrant,
      edit('a.py'),
      ask('path.not-allowed', write('/w/a.py'), [write('/etc/x')]),
    ],
    [
      'an edit that also reads',
      false,
      editsGrant,
      edit('a.py'),
      ask('path.not-allowed', write('/w/a.py'), [file('/w/b')]),
    ],
    ['the one entry', true, entryGrant, read('/data/a'), ask('path.not-allowed', file('/data/a'))],
    [
      'the entry and another',
      false,
      entryGrant,
      read('/data/a'),
      ask('path.not-allowed', file('/data/a'), [file('/data/b')]),
    ],
  ])(
    'a remembered grant and a question that adds %s: covered is %s',
    (_what, covered, grant, call, request) => {
      expect(coveringGrant([grant], call, request, '/w')).toBe(covered ? grant : undefined);
      // Nor is such a question offered as a session grant that would stand for less than it adds.
      expect(grantFor(call, request, '/w') !== undefined).toBe(covered);
    },
  );

  it('through the gate: a prefix approved for the session covers that prefix only, never a write or another subcommand', async () => {
    const root = mkdtempSync(join(tmpdir(), 'rune-grants-'));
    const home = join(root, 'home');
    const project = join(home, 'proj');
    mkdirSync(project, { recursive: true });
    const env = { HOME: home, RUNE_HOME: join(home, '.rune') };
    const config = {
      ...DEFAULTS,
      mcp: [],
      policy: { ...DEFAULTS.policy, mode: 'confirm' },
    } as unknown as RuneConfig;
    // The session's menu: the first question is answered "yes, for this session", every later one no.
    const asked: string[] = [];
    const grants: SessionGrant[] = [];
    const terminal = {
      screen: { endLine: () => {} },
      choose: async ({ choices }: { choices: { label: string }[] }) => {
        asked.push(choices.map((choice) => choice.label).join(' | '));
        return asked.length === 1
          ? choices.findIndex((c) => c.label.startsWith('Yes, for this session'))
          : undefined;
      },
    };
    const confirmer = menuConfirmer(
      () =>
        ({
          terminal,
          style: { color: false },
          write: () => {},
          state: { grants },
          setup: { cwd: project, env },
        }) as never,
    );
    const gate = () =>
      createPolicyGate({
        config,
        cwd: project,
        env,
        interactive: true,
        yes: false,
        confirmer,
        sessionId: 's1',
        logger: silentLogger,
      });
    const one = gate();
    const check = (on: typeof one, text: string) =>
      on.check({
        tool: 'execute_cmd',
        args: { cmd: text },
        source: 'builtin',
        access: toolAccess('execute_cmd'),
      });
    expect(await check(one, 'git log -3')).toMatchObject({ kind: 'allow' });
    expect(asked[0]).toContain('Yes, for this session: commands starting with "git log"');
    expect(grants).toEqual([{ kind: 'command', prefix: 'git log' }]);
    expect(await check(one, 'git log -1')).toMatchObject({ kind: 'allow' });
    expect(asked).toHaveLength(1);
    // Another subcommand of the program is asked about (and refused here): the gate's lists did
    // not get all of git for the session.
    expect(await check(one, 'git push origin main')).toMatchObject({ kind: 'deny', rule: 'confirm.no' });
    expect(asked).toHaveLength(2);
    // The prefix writing outside the writable paths is asked about again, in this gate and in a
    // new one (after /mode, /allow, /trust or /new the session's grants stay).
    const target = join(root, 'outside');
    for (const on of [one, gate()]) {
      const before = asked.length;
      expect(await check(on, `git log --output=${target}`)).toMatchObject({
        kind: 'deny',
        rule: 'confirm.no',
      });
      expect(asked).toHaveLength(before + 1);
    }
    expect(await check(gate(), 'git log -2')).toMatchObject({ kind: 'allow' });
    expect(asked).toHaveLength(4);
  });
});
