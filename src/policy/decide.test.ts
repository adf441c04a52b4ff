// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the tables are shell text, not templates
import { describe, expect, it } from 'vitest';
import type { PolicyMode } from '../config/schema.ts';
import { parseDomainPattern } from '../core/domains.ts';
import type { EffectiveLists } from './decide.ts';
import { decide } from './decide.ts';
import { CWD, decideCall, HOME, lists } from './test-decide.ts';
import { toolAccess } from './test-helpers.ts';
import type { PolicyDecision, ToolCallForPolicy } from './types.ts';

function run(call: ToolCallForPolicy, mode: PolicyMode = 'allowlist', over: Partial<EffectiveLists> = {}) {
  return decideCall(call, { mode, lists: over });
}

const cmd = (text: string): ToolCallForPolicy => ({
  tool: 'execute_cmd',
  args: { cmd: text },
  source: 'builtin',
  access: toolAccess('execute_cmd'),
});

describe('commands (decide-command.test.ts has the tables)', () => {
  it('asks in confirm mode, suggesting the one missing program', async () => {
    const decision = await run(cmd('df -h'), 'confirm');
    expect(decision).toMatchObject({
      kind: 'ask',
      question: 'Execute: df -h',
      suggestion: { list: 'allowed_commands', value: 'df' },
    });
    const denied = (await run(cmd('df -h'))) as Extract<PolicyDecision, { kind: 'deny' }>;
    expect(denied.reason).toContain("add 'df' to [policy] allowed_commands");
  });

  it('the floor is never asked about, even in confirm mode', async () => {
    expect(await run(cmd('cat ~/.ssh/id_rsa'), 'confirm')).toMatchObject({ kind: 'deny', rule: 'floor' });
  });

  it('matches command prefixes as whole words', async () => {
    const over = { commands: ['git status'] };
    expect(await run(cmd('git status --short'), 'allowlist', over)).toMatchObject({ kind: 'allow' });
    expect(await run(cmd('git statusx'), 'allowlist', over)).toMatchObject({ kind: 'deny' });
    expect(await run(cmd('git push'), 'allowlist', over)).toMatchObject({ kind: 'deny' });
  });

  it('unrestricted allows without looking', async () => {
    expect(await run(cmd('cat ~/.ssh/id_rsa; rm -rf /'), 'unrestricted')).toEqual({
      kind: 'allow',
      rule: 'mode.unrestricted',
    });
  });
});

describe('paths', () => {
  const read = (path: string): ToolCallForPolicy => ({
    tool: 'read_file',
    args: { path },
    source: 'builtin',
    access: toolAccess('read_file'),
  });
  it.each([
    ['../../.aws/credentials', 'deny', 'path.not-allowed'],
    ['../.aws/credentials', 'deny', 'floor'],
    ['/home/u/proj-evil/x', 'deny', 'path.not-allowed'],
    ['~/.ssh/id_rsa', 'deny', 'floor'],
    ['/etc/shadow', 'deny', 'floor'],
    ['/proc/1/environ', 'deny', 'floor'],
    // A thread's view of the same environment and command line (/proc/self/task/N, /proc/thread-self).
    ['/proc/1/task/1/environ', 'deny', 'floor'],
    ['/proc/1/task/7/cmdline', 'deny', 'floor'],
    ['private/x', 'deny', 'denied_paths'],
    ['src/a.ts', 'allow', 'allowed_paths_ro'],
    ['./src/../README.md', 'allow', 'allowed_paths_ro'],
    ['out/x', 'allow', 'allowed_paths_ro'],
  ])('read %s → %s %s', async (path, kind, rule) => {
    expect(await run(read(path))).toMatchObject({ kind, rule });
  });

  it('~ in allowed_paths_ro does not open the secrets', async () => {
    expect(await run(read('~/.ssh/id_rsa'), 'allowlist', { pathsRo: [HOME] })).toMatchObject({
      kind: 'deny',
      rule: 'floor',
    });
    expect(await run(read('~/notes.txt'), 'allowlist', { pathsRo: [HOME] })).toMatchObject({ kind: 'allow' });
  });

  it('writes need allowed_paths_rw; confirm mode suggests the file', async () => {
    const write = {
      tool: 'write_file',
      args: { path: 'src/a.ts', content: '' },
      source: 'builtin',
      access: toolAccess('write_file'),
    } as const;
    expect(await run(write)).toMatchObject({ kind: 'deny', rule: 'path.not-allowed' });
    expect(await run(write, 'confirm')).toMatchObject({
      kind: 'ask',
      suggestion: { list: 'allowed_files_rw', value: `${CWD}/src/a.ts` },
    });
    expect(await run({ ...write, args: { path: 'out/a', content: '' } })).toMatchObject({ kind: 'allow' });
  });

  it.each([
    '.git/hooks/pre-commit',
    '.git/config',
    'sub/.git/hooks/post-checkout',
    'out/.bashrc',
    'out/.envrc',
    '.gitmodules',
    // A .git *file* (gitdir: elsewhere) makes git run the hooks and config of a folder the agent wrote.
    'sub/.git',
    'out/.git',
    'out/.zshenv',
    'out/.config/autostart/evil.desktop',
    'out/.config/systemd/user/evil.service',
    'out/.config/fish/config.fish',
  ])('writing %s (run later by git or a shell) is never auto-allowed, even in rw paths', async (path) => {
    const write = {
      tool: 'write_file',
      args: { path, content: 'x' },
      source: 'builtin',
      access: toolAccess('write_file'),
    } as const;
    expect(await run(write, 'allowlist', { pathsRw: [CWD] })).toMatchObject({
      kind: 'deny',
      rule: 'path.runs-later',
    });
    expect(await run(write, 'confirm', { pathsRw: [CWD] })).toMatchObject({
      kind: 'ask',
      rule: 'path.runs-later',
    });
    expect(await run(cmd(`echo x > ${path}`), 'allowlist', { pathsRw: [CWD] })).toMatchObject({
      kind: 'deny',
      rule: 'path.runs-later',
    });
  });

  it.each([
    ['search_files', {}, 'allow', 'allowed_paths_ro'],
    ['find_files', { pattern: '**/*.ts' }, 'allow', 'allowed_paths_ro'],
    ['search_files', { path: 'src' }, 'allow', 'allowed_paths_ro'],
    // A walk from the home folder is the tool's business: it skips ~/.ssh entry by entry.
    ['search_files', { path: '~' }, 'deny', 'path.not-allowed'],
    ['search_files', { path: '~/.ssh' }, 'deny', 'floor'],
    ['find_files', { path: 'private', pattern: '*' }, 'deny', 'denied_paths'],
    ['find_files', { path: '/etc', pattern: '*' }, 'deny', 'path.not-allowed'],
  ])('%s %j → %s %s (read tools; no path means the working directory)', async (tool, args, kind, rule) => {
    const call = {
      tool,
      args: { pattern: 'x', ...args },
      source: 'builtin',
      access: toolAccess(tool),
    } as const;
    expect(await run(call)).toMatchObject({ kind, rule });
  });

  it('a walk outside the read paths is asked in confirm mode, suggesting the folder', async () => {
    const call = {
      tool: 'search_files',
      args: { pattern: 'x', path: '/srv/data' },
      source: 'builtin',
      access: toolAccess('search_files'),
    } as const;
    expect(await run(call, 'confirm')).toMatchObject({
      kind: 'ask',
      question: 'Search /srv/data?',
      suggestion: { list: 'allowed_paths_ro', value: '/srv/data' },
    });
    expect(await run(call, 'allowlist', { pathsRo: [CWD, '/srv'] })).toMatchObject({ kind: 'allow' });
  });

  it('edit_file is a write: allowed_paths_rw, asked in confirm mode, never auto-allowed into .git', async () => {
    const edit = (path: string) =>
      ({
        tool: 'edit_file',
        args: { path, edits: [] },
        source: 'builtin',
        access: toolAccess('edit_file'),
      }) as const;
    expect(await run(edit('src/a.ts'))).toMatchObject({ kind: 'deny', rule: 'path.not-allowed' });
    expect(await run(edit('src/a.ts'), 'confirm')).toMatchObject({
      kind: 'ask',
      question: `Edit ${CWD}/src/a.ts?`,
      suggestion: { list: 'allowed_files_rw', value: `${CWD}/src/a.ts` },
    });
    expect(await run(edit('out/a.ts'))).toMatchObject({ kind: 'allow', rule: 'allowed_paths_rw' });
    expect(await run(edit('out/.git/config'))).toMatchObject({ kind: 'deny', rule: 'path.runs-later' });
    expect(await run(edit('~/.ssh/authorized_keys'), 'allowlist', { pathsRw: [HOME] })).toMatchObject({
      kind: 'deny',
      rule: 'floor',
    });
  });

  it('a path the gate did not canonicalise is denied', async () => {
    const decision = decide({
      call: read('src/a.ts'),
      mode: 'allowlist',
      lists: lists(),
      floor: [],
      cwd: CWD,
      home: HOME,
      canonical: {},
    });
    expect(decision).toMatchObject({ kind: 'deny', rule: 'path.unresolved' });
  });
});

describe('domains', () => {
  const fetchUrl = (url: string): ToolCallForPolicy => ({
    tool: 'fetch_url',
    args: { url },
    source: 'builtin',
    access: toolAccess('fetch_url'),
  });
  it.each([
    ['https://api.github.com/repos', 'allow'],
    ['https://API.GitHub.com./x', 'allow'],
    ['https://github.com/', 'deny'],
    ['https://malicious-github.com/', 'deny'],
    ['https://github.com.evil.io/', 'deny'],
    ['http://1.1.1.1/', 'deny'],
    ['http://10.0.0.1/', 'allow'],
    ['https://example.org:8443/', 'allow'],
    ['https://example.org/', 'deny'],
    ['file:///etc/passwd', 'deny'],
    ['not a url', 'deny'],
    // Review attacks: userinfo and fragment tricks, other spellings of an address.
    ['http://api.github.com@evil.com/', 'deny'],
    ['http://evil.com#@api.github.com/', 'deny'],
    ['http://evil.com\\@api.github.com/', 'deny'],
    ['http://[::ffff:127.0.0.1]/', 'deny'],
    ['http://2130706433/', 'deny'],
    ['http://0x7f.1/', 'deny'],
    ['http://017700000001/', 'deny'],
    ['http://167772161/', 'allow'],
    ['https://api.github.com:443/', 'allow'],
  ])('%s → %s', async (url, kind) => {
    expect((await run(fetchUrl(url))).kind).toBe(kind);
  });

  it('an empty list allows nothing', async () => {
    expect(await run(fetchUrl('https://api.github.com/'), 'allowlist', { domains: [] })).toMatchObject({
      kind: 'deny',
    });
  });

  it.each(['*', '*.com', '*.*.com', 'a.*.com', 'https://x.com', 'x.com/path', '*.'])(
    'rejects the pattern %s',
    (entry) => {
      expect(typeof parseDomainPattern(entry)).toBe('string');
    },
  );
});

describe('MCP and other tools', () => {
  it.each([
    [{ tool: 'read', server: 'fs', source: 'mcp' }, 'allow', 'allowed_mcp_tools'],
    [{ tool: 'search', server: 'web', source: 'mcp' }, 'allow', 'allowed_mcp_tools'],
    [{ tool: 'list', server: 'db', source: 'mcp', readOnly: true }, 'allow', 'mcp.read-only'],
    [{ tool: 'drop', server: 'db', source: 'mcp' }, 'deny', 'mcp.not-allowed'],
    [{ tool: 'nuke', source: 'builtin' }, 'deny', 'tool.unknown'],
    [{ tool: 'read_markdown', source: 'builtin', access: { kind: 'own-files' } }, 'allow', 'notes.own-files'],
    [
      { tool: 'inspect_process', source: 'builtin', access: toolAccess('inspect_process') },
      'allow',
      'tool.inspect_process',
    ],
  ] as const)('%o → %s', async (call, kind, rule) => {
    expect(await run({ args: {}, ...call } as ToolCallForPolicy)).toMatchObject({ kind, rule });
  });

  it('judges a rune tool by the access it declares, not by its name', async () => {
    // A tool added tomorrow that reads a file gets read_file's rules with no change here.
    const peek = (path: string): ToolCallForPolicy => ({
      tool: 'peek_file',
      args: { path },
      source: 'builtin',
      access: { kind: 'read', target: 'file' },
    });
    expect(await run(peek('src/a.ts'))).toMatchObject({ kind: 'allow', rule: 'allowed_paths_ro' });
    expect(await run(peek('~/.ssh/id_rsa'))).toMatchObject({ kind: 'deny', rule: 'floor' });
    expect(await run(peek('/srv/x'), 'confirm')).toMatchObject({ kind: 'ask', question: 'Read /srv/x?' });
    const shell = {
      tool: 'sh',
      args: { cmd: 'cat ~/.ssh/id_rsa' },
      source: 'builtin',
      access: { kind: 'command' },
    };
    expect(await run(shell as ToolCallForPolicy)).toMatchObject({ kind: 'deny', rule: 'floor' });
    // A built-in name without the access its tool declares is no read tool.
    const bare = { tool: 'read_file', args: { path: 'src/a.ts' }, source: 'builtin' } as const;
    expect(await run(bare)).toMatchObject({ kind: 'deny', rule: 'tool.unknown' });
  });
});
