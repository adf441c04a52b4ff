import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  entryFromName,
  entryName,
  gitFileTarget,
  hooksPathOf,
  includePaths,
  isGitBoolean,
  looksLikeGitDir,
  parseGitConfig,
  programRunningReason,
  sanitizeConfig,
} from './git-config.ts';

const names = (text: string) =>
  parseGitConfig(text).entries.map((e) =>
    e.value === undefined ? entryName(e) : `${entryName(e)}=${e.value}`,
  );

// Configs written to catch a parser that reads them differently from git.
const TRICKY = [
  '[core]\n\tfsmonitor = x\n',
  '[core] fsmonitor = on-the-header-line\n',
  '[Core]\n\tFsMonitor = CaseFolded\n',
  '[alias "X.Y"]\n\tk = !sh -c "a b"\n',
  '[alias.Old]\n\tk = v\n',
  '[filter "lfs"]\n\tclean = a \\\n  b\n',
  '[diff "x"]\n\ttextconv = "quoted ; not a comment" ; a comment\n',
  '[core]\n\tpager = "less\\t-R"\n\tsshCommand\n',
  '\xEF\xBB\xBF[core]\r\n\teditor = vi\r\n',
  'k = before-any-section\n[core]\n\tk = v\n',
  '[core]\n# comment\n; comment\n  editor = a   b  \n',
  '[include]\n\tpath = ../other\n[includeIf "gitdir:/x/"]\n\tpath = ~/y\n',
  '[section "sub\\"quoted\\\\"]\n\tkey = v\n',
  '[a]k=1\n[b]\nk2 =\n',
  '[core]\n\thooksPath = .husky/_\n\thooksPath = .hooks\n',
];

function gitList(text: string): string[] | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'rune-gitcfg-'));
  const file = join(dir, 'config');
  writeFileSync(file, text, 'latin1');
  const result = spawnSync('git', ['config', '--file', file, '--no-includes', '--null', '--list'], {
    encoding: 'latin1',
    cwd: dir,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', GIT_CONFIG_NOSYSTEM: '1', HOME: dir },
  });
  if (result.error) return undefined;
  if (result.status !== 0) return ['<error>'];
  return result.stdout
    .split('\0')
    .filter(Boolean)
    .map((item) => {
      const nl = item.indexOf('\n');
      return nl < 0 ? item : `${item.slice(0, nl)}=${item.slice(nl + 1)}`;
    });
}

describe('parseGitConfig reads what git reads', () => {
  it.each(TRICKY)('%j', (text) => {
    const fromGit = gitList(text);
    if (!fromGit) return; // git is not installed: the tables below still hold
    const mine = parseGitConfig(text);
    if (fromGit[0] === '<error>') expect(mine.errorAt).toBeDefined();
    else expect(names(text)).toEqual(fromGit);
  });

  it.each([
    '[core\n]\nk = v\n',
    '[]\nk = v\n',
    '[core]\n\tk = "unterminated\n',
    '[core]\n\tk = bad \\q escape\n',
    '[core]\n\t1k = v\n',
    '[core]\n\tk v\n',
  ])('refuses %j where git does', (text) => {
    expect(parseGitConfig(text).errorAt).toBeDefined();
    const fromGit = gitList(text);
    if (fromGit) expect(fromGit).toEqual(['<error>']);
  });

  it('keeps the spans of each entry, through continuation lines', () => {
    const text = '[filter "x"]\n\tclean = a \\\n  b\n\tother = 1\n';
    const [clean] = parseGitConfig(text).entries;
    expect(text.slice(clean!.start, clean!.end)).toBe('clean = a \\\n  b');
  });
});

describe('programRunningReason', () => {
  const reason = (text: string) => {
    const [entry] = parseGitConfig(text).entries;
    return programRunningReason(entry!);
  };
  it.each([
    '[core]\n\tfsmonitor = /tmp/x',
    '[core]\n\tpager = less',
    '[core]\n\teditor = vi',
    '[core]\n\tsshCommand = ssh -i k',
    '[core]\n\taskPass = x',
    '[core]\n\tgitProxy = x',
    '[core]\n\thooksPath = .hooks',
    '[core]\n\talternateRefsCommand = x',
    '[sequence]\n\teditor = x',
    '[alias]\n\tst = !sh -c evil',
    '[alias]\n\tst =   !evil',
    '[pager]\n\tlog = evil',
    '[filter "lfs"]\n\tclean = x',
    '[filter "lfs"]\n\tsmudge = x',
    '[filter "lfs"]\n\tprocess = x',
    '[diff "bin"]\n\ttextconv = x',
    '[diff "bin"]\n\tcommand = x',
    '[diff]\n\texternal = x',
    '[merge "m"]\n\tdriver = x',
    '[difftool "t"]\n\tcmd = x',
    '[difftool "t"]\n\tpath = x',
    '[mergetool "t"]\n\tcmd = x',
    '[credential]\n\thelper = x',
    '[credential "https://h"]\n\thelper = x',
    '[gpg]\n\tprogram = x',
    '[gpg "ssh"]\n\tprogram = x',
    '[gpg "ssh"]\n\tdefaultKeyCommand = x',
    '[web]\n\tbrowser = x',
    '[browser "b"]\n\tcmd = x',
    '[man "m"]\n\tpath = x',
    '[remote "origin"]\n\tuploadpack = x',
    '[remote "origin"]\n\treceivepack = x',
    '[remote "origin"]\n\tvcs = x',
    '[uploadpack]\n\tpackObjectsHook = x',
    '[submodule "s"]\n\tupdate = !evil',
    '[sendemail]\n\tsmtpServer = /usr/bin/evil',
    '[sendemail]\n\ttoCmd = x',
    '[trailer "t"]\n\tcommand = x',
    '[interactive]\n\tdiffFilter = x',
    '[tar "tgz"]\n\tcommand = x',
    '[guitool "g"]\n\tcmd = x',
    '[include]\n\tpath = x',
    '[includeIf "gitdir:/x/"]\n\tpath = x',
    '[protocol]\n\tallow = always',
    '[protocol "ext"]\n\tallow = always',
    '[lfs "customtransfer.x"]\n\tpath = x',
    '[imap]\n\ttunnel = x',
    '[init]\n\ttemplateDir = x',
  ])('flags %j', (text) => {
    expect(reason(text)).toBeTruthy();
  });

  it.each([
    '[core]\n\tfsmonitor = true',
    '[core]\n\tfsmonitor = false',
    '[core]\n\tbare = false',
    '[alias]\n\tst = status -sb',
    '[pager]\n\tlog = false',
    '[remote "origin"]\n\turl = https://x',
    '[submodule "s"]\n\tpath = lib/s',
    '[submodule "s"]\n\tupdate = rebase',
    '[protocol "ext"]\n\tallow = never',
    '[user]\n\tname = x',
    '[sendemail]\n\tsmtpServer = smtp.example.com',
  ])('leaves %j', (text) => {
    expect(reason(text)).toBeUndefined();
  });
});

describe('sanitizeConfig', () => {
  it('removes what runs programs and keeps everything else as written', () => {
    const text =
      '[core]\n\trepositoryformatversion = 0\n\tfsmonitor = /tmp/evil\n[alias]\n\tst = status\n\tx = !evil\n[core] pager = evil\n\tbare = false\n';
    const result = sanitizeConfig(text);
    expect(result.text).toBe(
      '[core]\n\trepositoryformatversion = 0\n\t\n[alias]\n\tst = status\n\t\n[core] \n\tbare = false\n',
    );
    expect(result.removed.map((r) => r.name)).toEqual(['core.fsmonitor', 'alias.x', 'core.pager']);
    expect(names(result.text)).toEqual([
      'core.repositoryformatversion=0',
      'alias.st=status',
      'core.bare=false',
    ]);
  });

  it('judges only the entries the caller calls new', () => {
    const text = '[core]\n\tpager = less\n\teditor = evil\n';
    const result = sanitizeConfig(text, (e) => e.key === 'editor');
    expect(result.removed.map((r) => r.name)).toEqual(['core.editor']);
    expect(result.text).toContain('pager = less');
  });

  it('cuts a config at the first line git would refuse', () => {
    const result = sanitizeConfig('[core]\n\tbare = false\n!!! junk\n[core]\n\tfsmonitor = evil\n');
    expect(result.cutAt).toBeDefined();
    expect(result.text).toBe('[core]\n\tbare = false\n');
  });
});

describe('small readers', () => {
  it('reads includes, the last hooksPath and .git files', () => {
    const { entries } = parseGitConfig(
      '[include]\n\tpath = a\n[includeIf "x"]\n\tpath = b\n[core]\n\thooksPath = 1\n\thooksPath = 2\n',
    );
    expect(includePaths(entries)).toEqual(['a', 'b']);
    expect(hooksPathOf(entries)).toBe('2');
    expect(gitFileTarget('gitdir: ../.git/modules/sub\n')).toBe('../.git/modules/sub');
    expect(gitFileTarget('not a gitfile')).toBeUndefined();
  });

  it('knows git booleans and git folders', () => {
    expect(['true', 'FALSE', 'yes', 'off', '1', '0', '', undefined].every(isGitBoolean)).toBe(true);
    expect(isGitBoolean('/usr/bin/x')).toBe(false);
    expect(looksLikeGitDir(new Set(['HEAD', 'objects', 'refs']))).toBe(true);
    expect(looksLikeGitDir(new Set(['HEAD', 'commondir']))).toBe(true);
    expect(looksLikeGitDir(new Set(['HEAD', 'objects']))).toBe(false);
  });
});

describe('entryFromName reads back the names git config --list prints', () => {
  it.each([
    ['core.hooksPath', '/x', { section: 'core', key: 'hooksPath', value: '/x' }],
    ['remote.origin.url', 'u', { section: 'remote', subsection: 'origin', key: 'url', value: 'u' }],
    ['url.a.b.c.insteadOf', 'v', { section: 'url', subsection: 'a.b.c', key: 'insteadOf', value: 'v' }],
    ['core.bare', undefined, { section: 'core', key: 'bare' }],
    ['nodot', undefined, { section: '', key: 'nodot' }],
  ])('%s', (name, value, expected) => {
    const entry = entryFromName(name, value);
    expect(entry).toEqual({ ...expected, start: 0, end: 0 });
    expect(entryName(entry)).toBe(name);
  });
});
