// cd DIR and git -C DIR, decided through decide() with the lists of decide.test.ts: /home/u/proj is
// readable (the working directory), /home/u/proj/out writable.
import { beforeAll, describe, expect, it } from 'vitest';
import type { PolicyMode } from '../config/schema.ts';
import { callGlobs, callPaths, decide, type EffectiveLists } from './decide.ts';
import { floorPaths } from './paths.ts';
import { parseShell } from './shell-parser.ts';
import { toolAccess, useShellAssetsFromNodeModules } from './test-helpers.ts';

beforeAll(() => useShellAssetsFromNodeModules());

const HOME = '/home/u';
const CWD = '/home/u/proj';

async function decideCmd(text: string, mode: PolicyMode = 'allowlist', over: Partial<EffectiveLists> = {}) {
  const call = {
    tool: 'execute_cmd',
    args: { cmd: text },
    source: 'builtin' as const,
    access: toolAccess('execute_cmd'),
  };
  const shell = await parseShell(text);
  const canonical = Object.fromEntries(callPaths(call, CWD, HOME, shell).map((path) => [path, path]));
  return decide({
    call,
    mode,
    lists: {
      commands: ['ls', 'cat', 'git'],
      domains: [],
      pathsRo: [CWD],
      pathsRw: [`${CWD}/out`],
      filesRo: [],
      filesRw: [],
      denied: [`${CWD}/private`],
      mcpTools: [],
      ...over,
    },
    floor: floorPaths(HOME, `${HOME}/.rune`),
    cwd: CWD,
    home: HOME,
    canonical,
    // Globs match nothing here, as in decide.test.ts.
    globs: Object.fromEntries(callGlobs(call, CWD, HOME, shell).map((pattern) => [pattern, []])),
    shell,
  });
}

describe('cd DIR: a builtin that needs no allow-list entry when DIR is readable', () => {
  it.each([
    'cd repo && git log -p -1',
    'cd repo; ls',
    'cd -- repo && ls',
    'cd -P repo && cat README.md',
    `cd ${CWD} && git status`,
    'cd out && ls',
    'cd repo | ls',
  ])('%s → allow', async (text) => {
    expect(await decideCmd(text)).toMatchObject({ kind: 'allow', rule: 'allowed_commands' });
  });

  it.each([
    ['cd /etc && ls', 'command.directory', '/etc is outside the readable paths'],
    ['cd .. && ls', 'command.directory', '/home/u is outside the readable paths'],
    // A pipeline's cd does not chain, so `..` is judged from the working directory too.
    ['cd repo/sub && cd .. && ls', 'command.directory', 'cd ..: /home/u is outside the readable paths'],
    ['cd && ls', 'command.directory', 'goes to $HOME'],
    ['cd - && ls', 'command.directory', 'cd - goes back'],
    ['cd a b', 'command.directory', 'more than one folder'],
    ['cd -e repo', 'command.directory', 'unknown option'],
    ['cd re* && ls', 'command.directory', 'a glob'],
    ['cd private && ls', 'denied_paths', 'private'],
    ['cd ~/.ssh && ls', 'floor', '.ssh'],
    ['cd ~ && cat .ssh/id_rsa', 'floor', '.ssh'],
    // Chained cds: the file is /home/u/.ssh/id_rsa, which only the chained folder reveals.
    ['cd repo && cd sub && cat ../../../.ssh/id_rsa', 'floor', '.ssh'],
    ['cd a && cd b && cd c && cd d && cd e && cd f && ls', 'command.directory', 'too often'],
    ['cd repo && rm -rf x', 'command.not-allowed', "'rm' is not in allowed_commands"],
  ])('%s → %s', async (text, rule, reason) => {
    const decision = await decideCmd(text);
    expect(decision).toMatchObject({ kind: 'deny', rule });
    expect(decision.kind === 'deny' && decision.reason).toContain(reason);
  });

  it('offers the folder for allowed_paths_ro, as a hint or a confirm question', async () => {
    const denied = await decideCmd('cd /srv/data && ls');
    expect(denied.kind === 'deny' && denied.reason).toContain("add '/srv/data' to [policy] allowed_paths_ro");
    expect(await decideCmd('cd /srv/data && ls', 'confirm')).toMatchObject({
      kind: 'ask',
      suggestion: { list: 'allowed_paths_ro', value: '/srv/data' },
    });
  });
});

describe('git -C DIR: judged as the git command without it, when DIR is readable', () => {
  it.each([
    ['git -C repo log -p -1', {}],
    ['git -C repo -C sub status', {}],
    [`git -C ${CWD}/repo show --stat HEAD`, {}],
    ['git -C repo log --oneline', { commands: ['git log'] }],
    ["git -C '' status", {}],
  ])('%s → allow', async (text, over) => {
    expect(await decideCmd(text, 'allowlist', over)).toMatchObject({ kind: 'allow' });
  });

  it.each([
    ['git -C /etc log', 'command.directory', '/etc is outside the readable paths'],
    ['git -C repo -C /var/lib status', 'command.directory', 'git -C repo -C /var/lib: /var/lib is outside'],
    // A writable folder's .git config and hooks could have been planted by the agent.
    ['git -C out log', 'command.directory', 'writable folder'],
    ['git -C out/nested status', 'command.directory', 'writable folder'],
    ['cd out && git log', 'command.directory', 'writable folder'],
    ['git -C repo -c core.pager=sh log', 'command.dangerous', '-c can change'],
    ['git -C repo --git-dir=/tmp/x log', 'command.dangerous', '--git-dir'],
    ['git -C repo config core.fsmonitor x', 'command.dangerous', 'config'],
    ['git -C', 'command.dangerous', '-C can change'],
    ['git -C rep* log', 'command.dangerous', '-C can change'],
    ['git -C ~/.ssh log', 'floor', '.ssh'],
    ['git -C repo diff --no-index ../../.ssh/id_rsa x', 'floor', '.ssh'],
    ['git -C repo push', 'command.not-allowed', 'allowed_commands'],
  ])('%s → %s', async (text, rule, reason) => {
    const over = text.endsWith('push') ? { commands: ['git log'] } : {};
    const decision = await decideCmd(text, 'allowlist', over);
    expect(decision).toMatchObject({ kind: 'deny', rule });
    expect(decision.kind === 'deny' && decision.reason).toContain(reason);
  });
});
