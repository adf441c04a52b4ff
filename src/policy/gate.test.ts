import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULTS, type RuneConfig } from '../config/schema.ts';
import { createLogger, silentLogger } from '../core/logger.ts';
import { createPolicyGate } from './gate.ts';
import { resolveRunPolicy } from './project.ts';
import { toolAccess, useShellAssetsFromNodeModules } from './test-helpers.ts';
import type { ApprovalAnswer, ApprovalRequest, Confirmer, PolicyGate } from './types.ts';

beforeAll(() => useShellAssetsFromNodeModules());

function setup(
  policy: Partial<RuneConfig['policy']> = {},
  extra: { interactive?: boolean; yes?: boolean; confirmer?: Confirmer } = {},
) {
  const root = mkdtempSync(join(tmpdir(), 'rune-gate-'));
  const home = join(root, 'home');
  const project = join(home, 'proj');
  mkdirSync(join(home, '.ssh'), { recursive: true });
  mkdirSync(project, { recursive: true });
  writeFileSync(join(home, '.ssh/id_rsa'), 'secret');
  const env = { HOME: home, RUNE_HOME: join(home, '.rune') };
  const config = { ...DEFAULTS, mcp: [], policy: { ...DEFAULTS.policy, ...policy } } as unknown as RuneConfig;
  const gate = createPolicyGate({
    config,
    cwd: project,
    env,
    interactive: extra.interactive ?? false,
    yes: extra.yes ?? false,
    ...(extra.confirmer ? { confirmer: extra.confirmer } : {}),
    sessionId: 's1',
    logger: silentLogger,
    now: () => new Date('2026-01-02T03:04:05Z'),
  });
  return { root, home, project, env, gate };
}

const cmd = (gate: PolicyGate, text: string) =>
  gate.check({
    tool: 'execute_cmd',
    args: { cmd: text },
    source: 'builtin',
    access: toolAccess('execute_cmd'),
  });

describe('policy gate', () => {
  it('reads in the working directory and refuses a symlink to a secret', async () => {
    const { gate, project, home } = setup();
    writeFileSync(join(project, 'a.txt'), 'x');
    symlinkSync(join(home, '.ssh/id_rsa'), join(project, 'innocent.txt'));
    expect(
      (
        await gate.check({
          tool: 'read_file',
          args: { path: 'a.txt' },
          source: 'builtin',
          access: toolAccess('read_file'),
        })
      ).kind,
    ).toBe('allow');
    const secret = await gate.check({
      tool: 'read_file',
      args: { path: 'innocent.txt' },
      source: 'builtin',
      access: toolAccess('read_file'),
    });
    expect(secret).toMatchObject({ kind: 'deny', rule: 'floor' });
  });

  it('refuses ../../.ssh style escapes, sibling prefixes and ~ in allowed_paths_ro for secrets', async () => {
    const { gate, home } = setup({ allowed_paths_ro: ['~'] });
    mkdirSync(join(home, 'proj-evil'));
    const dotdot = await gate.check({
      tool: 'read_file',
      args: { path: '../.ssh/id_rsa' },
      source: 'builtin',
      access: toolAccess('read_file'),
    });
    expect(dotdot).toMatchObject({ kind: 'deny', rule: 'floor' });
    const tilde = await gate.check({
      tool: 'read_file',
      args: { path: '~/.ssh/id_rsa' },
      source: 'builtin',
      access: toolAccess('read_file'),
    });
    expect(tilde).toMatchObject({ kind: 'deny', rule: 'floor' });
    const { gate: narrow, home: home2 } = setup();
    mkdirSync(join(home2, 'proj-evil'));
    writeFileSync(join(home2, 'proj-evil/x'), 'x');
    const sibling = await narrow.check({
      tool: 'read_file',
      args: { path: '../proj-evil/x' },
      source: 'builtin',
      access: toolAccess('read_file'),
    });
    expect(sibling).toMatchObject({ kind: 'deny', rule: 'path.not-allowed' });
  });

  it('resolves a symlinked folder for a file that does not exist yet', async () => {
    const { gate, project, home } = setup({ allowed_paths_rw: ['.'] });
    symlinkSync(join(home, '.ssh'), join(project, 'keys'));
    const write = await gate.check({
      tool: 'write_file',
      args: { path: 'keys/new_key', content: 'x' },
      source: 'builtin',
      access: toolAccess('write_file'),
    });
    expect(write).toMatchObject({ kind: 'deny', rule: 'floor' });
    const fine = await gate.check({
      tool: 'write_file',
      args: { path: 'out/new.txt', content: 'x' },
      source: 'builtin',
      access: toolAccess('write_file'),
    });
    expect(fine).toMatchObject({ kind: 'allow', rule: 'allowed_paths_rw' });
  });

  it('allows an allowlisted pipeline and refuses chaining', async () => {
    const { gate } = setup({ allowed_commands: ['ls', 'grep'] });
    expect(await cmd(gate, 'ls -la | grep x')).toMatchObject({ kind: 'allow', rule: 'allowed_commands' });
    expect(await cmd(gate, 'ls; rm -rf /')).toMatchObject({ kind: 'deny', rule: 'command.not-allowed' });
  });

  it('in confirm mode without anyone to ask, denies and says why; --yes allows', async () => {
    const { gate } = setup({ mode: 'confirm' });
    const denied = await cmd(gate, 'df -h');
    expect(denied.kind).toBe('deny');
    expect(denied.kind === 'deny' && denied.reason).toMatch(/nobody can be asked/);
    const { gate: yes } = setup({ mode: 'confirm' }, { yes: true });
    expect(await cmd(yes, 'df -h')).toMatchObject({ kind: 'allow', rule: 'flag.yes' });
  });

  it('"always" persists the suggestion and allows the next call without asking', async () => {
    let asked = 0;
    const confirmer: Confirmer = {
      confirm: async () => {
        asked += 1;
        return 'always';
      },
    };
    const { gate, env } = setup({ mode: 'confirm' }, { interactive: true, confirmer });
    mkdirSync(env.RUNE_HOME, { recursive: true });
    writeFileSync(join(env.RUNE_HOME, 'rune.toml'), '# mine\n[policy]\nmode = "confirm" # keep\n');
    expect(await cmd(gate, 'df -h')).toMatchObject({ kind: 'allow', rule: 'confirm.always' });
    expect(await cmd(gate, 'df')).toMatchObject({ kind: 'allow', rule: 'allowed_commands' });
    expect(asked).toBe(1);
    expect(readFileSync(join(env.RUNE_HOME, 'rune.toml'), 'utf8')).toBe(
      '# mine\n[policy]\nallowed_commands = ["df"]\nmode = "confirm" # keep\n',
    );
  });

  it('an approval grants exactly what the question named: a redirect target outside the writable paths', async () => {
    const requests: ApprovalRequest[] = [];
    const answers: (ApprovalAnswer | 'yes')[] = ['yes', { kind: 'allow', scope: 'always' }];
    const confirmer: Confirmer = {
      async confirm(_call, request) {
        requests.push(request);
        return answers.shift() ?? { kind: 'deny' };
      },
    };
    const { gate, env, project } = setup({ mode: 'confirm' }, { interactive: true, confirmer });
    const proof = join(project, 'proof.txt');
    const once = await cmd(gate, 'echo hi > proof.txt');
    expect(once).toEqual({
      kind: 'allow',
      rule: 'confirm.yes',
      grants: [
        { list: 'allowed_files_rw', value: proof },
        { list: 'allowed_commands', value: 'echo' },
      ],
    });
    expect(gate.granted?.()).toEqual([]);
    // The question named the file and the program: "always" is offered and saves both.
    expect(requests[0]).toMatchObject({
      rule: 'command.redirect',
      grants: [
        { list: 'allowed_files_rw', value: proof },
        { list: 'allowed_commands', value: 'echo' },
      ],
      scopes: ['once', 'session', 'always'],
    });
    // Once is once: the next call asks again; "always" writes both entries to rune.toml.
    expect(await cmd(gate, 'echo hi > proof.txt')).toMatchObject({ kind: 'allow', rule: 'confirm.always' });
    const toml = readFileSync(join(env.RUNE_HOME, 'rune.toml'), 'utf8');
    expect(toml).toContain(`allowed_files_rw = [${JSON.stringify(proof)}]`);
    expect(toml).toContain('allowed_commands = ["echo"]');
    expect(await cmd(gate, 'echo again > proof.txt')).toMatchObject({
      kind: 'allow',
      rule: 'allowed_commands',
    });
    expect(requests).toHaveLength(2);
    // Later calls' sandbox plans get what "always" added to the lists.
    expect(gate.granted?.()).toContainEqual({ list: 'allowed_files_rw', value: proof });
  });

  it('a call no list entry can cover is approved once or for the session (that exact call), never always', async () => {
    const requests: ApprovalRequest[] = [];
    const confirmer: Confirmer = {
      async confirm(_call, request) {
        requests.push(request);
        return requests.length === 1
          ? { kind: 'allow', scope: 'session' }
          : { kind: 'deny', instead: 'use date alone' };
      },
    };
    const { gate, project } = setup({ mode: 'confirm' }, { interactive: true, confirmer });
    const text = 'echo $(date) > stamp.txt';
    const grants = [{ list: 'allowed_files_rw', value: join(project, 'stamp.txt') }];
    expect(await cmd(gate, text)).toEqual({ kind: 'allow', rule: 'confirm.session', grants });
    expect(requests[0]).toMatchObject({ rule: 'command.construct', grants, scopes: ['once', 'session'] });
    // The same call again: allowed for the session without asking, with the same grants.
    expect(await cmd(gate, text)).toEqual({ kind: 'allow', rule: 'confirm.session', grants: [] });
    expect(gate.granted?.()).toEqual(grants);
    expect(requests).toHaveLength(1);
    // Another call is asked; a refusal tells the model what to do instead.
    const refused = await cmd(gate, 'echo $(id) > stamp.txt');
    expect(refused).toMatchObject({ kind: 'deny', rule: 'confirm.no' });
    expect(refused.kind === 'deny' && refused.reason).toMatch(/instead, the user says: use date alone$/);
    // An "always" the question did not offer is taken as once: nothing is written.
    const legacy = setup(
      { mode: 'confirm' },
      { interactive: true, confirmer: { confirm: async () => 'always' } },
    );
    expect(await cmd(legacy.gate, text)).toMatchObject({ kind: 'allow', rule: 'confirm.yes' });
    expect(() => readFileSync(join(legacy.env.RUNE_HOME, 'rune.toml'))).toThrow();
  });

  it('--yes gives the call the grants the question named', async () => {
    const { gate, project } = setup({ mode: 'confirm', allowed_commands: ['echo'] }, { yes: true });
    expect(await cmd(gate, 'echo hi >> log.txt 2>/dev/null')).toEqual({
      kind: 'allow',
      rule: 'flag.yes',
      grants: [{ list: 'allowed_files_rw', value: join(project, 'log.txt') }],
    });
  });

  it('writes one audit line per decision with a digest, never the arguments', async () => {
    const { gate, env } = setup();
    await cmd(gate, 'echo sk-secret-value');
    const lines = readFileSync(join(env.RUNE_HOME, 'audit.jsonl'), 'utf8').trim().split('\n');
    expect(lines).toHaveLength(1);
    const record = JSON.parse(lines[0]!);
    expect(record).toMatchObject({ session: 's1', tool: 'execute_cmd', decision: 'deny', mode: 'allowlist' });
    expect(record.args_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(lines[0]).not.toContain('sk-secret-value');
  });

  it('audits the calling process of a call made through rune mount, and only then', async () => {
    const { gate, env } = setup();
    await gate.check({
      tool: 'list_dir',
      args: { path: '.' },
      source: 'builtin',
      access: toolAccess('list_dir'),
      caller: { pid: 42, sid: 40 },
    });
    await gate.check({
      tool: 'list_dir',
      args: { path: '.' },
      source: 'builtin',
      access: toolAccess('list_dir'),
    });
    const [mounted, model] = readFileSync(join(env.RUNE_HOME, 'audit.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(mounted).toMatchObject({ tool: 'list_dir', decision: 'allow', caller_pid: 42, caller_sid: 40 });
    expect(model).not.toHaveProperty('caller_pid');
  });

  it('a project config that is invalid stops the gate with a clear error; a valid one narrows', async () => {
    const { project, env } = setup();
    mkdirSync(join(project, '.rune'));
    writeFileSync(join(project, '.rune/rune.toml'), '[policy]\nallowed_domains = ["*.com"]\n');
    const make = () =>
      createPolicyGate({
        config: {
          ...DEFAULTS,
          mcp: [],
          policy: { ...DEFAULTS.policy, allowed_commands: ['ls', 'cat'] },
        } as unknown as RuneConfig,
        cwd: project,
        env,
        interactive: false,
        yes: false,
        sessionId: 's',
        logger: silentLogger,
      });
    expect(make).toThrow(/invalid project configuration/);
    writeFileSync(join(project, '.rune/rune.toml'), '[policy]\nallowed_commands = ["ls", "rm"]\n');
    const gate = make();
    expect(await cmd(gate, 'ls')).toMatchObject({ kind: 'allow' });
    expect(await cmd(gate, 'cat x')).toMatchObject({ kind: 'deny', rule: 'command.not-allowed' });
    expect(await cmd(gate, 'rm x')).toMatchObject({ kind: 'deny', rule: 'command.not-allowed' });
  });

  it('globs are expanded by the gate, so a symlinked secret cannot hide behind one', async () => {
    const { gate, project, home } = setup({ allowed_commands: ['ls', 'cat'] });
    writeFileSync(join(project, 'a.txt'), 'x');
    expect(await cmd(gate, 'ls *.txt')).toMatchObject({ kind: 'allow' });
    expect(await cmd(gate, 'cat ~/.ssh/*')).toMatchObject({ kind: 'deny', rule: 'floor' });
    expect(await cmd(gate, 'cat ~/.ss?/id_rsa')).toMatchObject({ kind: 'deny', rule: 'command.construct' });
    expect(await cmd(gate, 'cat ~root/.ssh/id_rsa')).toMatchObject({
      kind: 'deny',
      rule: 'command.construct',
    });
    expect(await cmd(gate, 'ls > *.txt')).toMatchObject({ kind: 'deny', rule: 'command.construct' });
    symlinkSync(join(home, '.ssh/id_rsa'), join(project, 'innocent'));
    expect(await cmd(gate, 'cat *')).toMatchObject({ kind: 'deny', rule: 'floor' });
    expect(await cmd(gate, 'cat inno[c]ent')).toMatchObject({ kind: 'deny', rule: 'floor' });
  });

  it('resolveRunPolicy narrows the config itself, and the gate then does not narrow twice', async () => {
    const { project, env } = setup();
    mkdirSync(join(project, '.rune'));
    writeFileSync(
      join(project, '.rune/rune.toml'),
      '[policy]\nmode = "unrestricted"\nallowed_commands = ["ls -la", "rm"]\nallowed_paths_rw = ["out", "/etc"]\ndenied_paths = ["secret"]\nmax_pids = 9999\nallowed_domains = ["api.github.com"]\n',
    );
    const base = {
      ...DEFAULTS,
      mcp: [],
      policy: {
        ...DEFAULTS.policy,
        mode: 'confirm',
        allowed_commands: ['ls'],
        allowed_paths_rw: [project],
        allowed_domains: ['*.github.com'],
      },
    } as unknown as RuneConfig;
    const lines: string[] = [];
    const logger = createLogger({ write: (line) => lines.push(line) });
    const narrowed = resolveRunPolicy(base, project, env, logger);
    expect(narrowed.policy).toMatchObject({
      mode: 'confirm',
      allowed_commands: ['ls -la'],
      allowed_paths_rw: [join(project, 'out')],
      denied_paths: [join(project, 'secret')],
      allowed_domains: ['api.github.com'],
      max_pids: DEFAULTS.policy.max_pids,
    });
    expect(lines.join('')).toMatch(/ignored: allowed_commands: rm; allowed_paths_rw: \/etc/);
    lines.length = 0;
    const gate = createPolicyGate({
      config: narrowed,
      cwd: project,
      env,
      interactive: false,
      yes: false,
      sessionId: 's',
      logger,
    });
    expect(lines).toEqual([]);
    expect(await cmd(gate, 'ls -la')).toMatchObject({ kind: 'allow' });
    expect(await cmd(gate, 'ls')).toMatchObject({ kind: 'deny' });
  });

  it('unrestricted lifts the floor', async () => {
    const { gate } = setup({ mode: 'unrestricted' });
    expect(
      await gate.check({
        tool: 'read_file',
        args: { path: '~/.ssh/id_rsa' },
        source: 'builtin',
        access: toolAccess('read_file'),
      }),
    ).toMatchObject({
      kind: 'allow',
      rule: 'mode.unrestricted',
    });
  });

  it('computes a call preview only for a person being asked, and hands it to the confirmer', async () => {
    const seen: Array<string | undefined> = [];
    const confirmer: Confirmer = {
      async confirm(_call, decision) {
        seen.push(decision.preview);
        return 'no';
      },
    };
    let previews = 0;
    const preview = async () => {
      previews++;
      return '--- a/x\n+++ b/x';
    };
    const asked = setup({ mode: 'confirm' }, { interactive: true, confirmer });
    const edit = {
      tool: 'edit_file',
      args: { path: 'x', edits: [] },
      source: 'builtin',
      access: toolAccess('edit_file'),
      preview,
    } as const;
    expect(await asked.gate.check(edit)).toMatchObject({ kind: 'deny', rule: 'confirm.no' });
    expect(seen).toEqual(['--- a/x\n+++ b/x']);
    // Refused outright (the floor) or nobody to ask: the preview never runs, nothing is read.
    expect(await asked.gate.check({ ...edit, args: { path: '~/.ssh/id_rsa', edits: [] } })).toMatchObject({
      rule: 'floor',
    });
    const pipe = setup({ mode: 'confirm' });
    expect(await pipe.gate.check(edit)).toMatchObject({ kind: 'deny' });
    expect(previews).toBe(1);
  });

  it('tells in-process tools the floor (lexical and canonical) and denied_paths, the project config included', () => {
    const { gate, home, project } = setup({ denied_paths: ['secret'] });
    const paths = gate.protectedPaths?.();
    expect(paths?.floor).toContain(join(home, '.ssh'));
    expect(paths?.denied).toEqual([join(project, 'secret')]);
    expect(paths?.unrestricted).toBe(false);
  });
});
