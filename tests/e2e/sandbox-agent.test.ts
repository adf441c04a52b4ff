// The agent's tools run inside the kernel sandbox: under --unrestricted the policy lets
// `cat ~/.ssh/id_rsa` through, and the kernel (Landlock) refuses it — the model reads the kernel's
// permission error, not a policy message. Also the acceptance items of `rune sandbox` itself.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MockLlm, startMockLlm } from '../helpers/mock-llm.ts';
import { cleanEnv, requireBinary, run, runRune } from '../helpers/rune.ts';

const KEY = 'sk-test-sandbox-e2e-5a4b3c2d1e';
let mock: MockLlm;
let server: Server;
let port = 0;
// Outside /tmp: the sandbox's private /tmp would hide a home under /tmp before Landlock is asked.
const root = mkdtempSync('/var/tmp/rune-sandbox-e2e-');
const home = join(root, 'home');
const cwd = join(root, 'project');

beforeAll(async () => {
  requireBinary();
  mock = await startMockLlm();
  mkdirSync(join(home, '.ssh'), { recursive: true });
  writeFileSync(join(home, '.ssh', 'id_rsa'), 'FAKE-PRIVATE-KEY-e2e-777\n', { mode: 0o600 });
  mkdirSync(cwd, { recursive: true });
  server = createServer((socket) => socket.end('HOST-LOOPBACK\n'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as { port: number }).port;
});

afterAll(async () => {
  await mock.close();
  server.close();
  rmSync(root, { recursive: true, force: true });
});

const env = () => ({ ...cleanEnv(home), RUNE_HOME: join(home, '.rune') });

describe('the agent under --unrestricted', () => {
  it('cat ~/.ssh/id_rsa gets the kernel error, not a policy message', async () => {
    mock.script([
      { toolCalls: [{ name: 'execute_cmd', arguments: { cmd: 'cat ~/.ssh/id_rsa' } }] },
      { text: 'could not read it' },
    ]);
    const result = await runRune(
      [
        '--base-url',
        mock.baseUrl,
        '--api-key',
        KEY,
        '--model',
        'm',
        '--unrestricted',
        '--json',
        'read my key',
      ],
      { cwd, env: env() },
    );
    expect(result.code, result.stderr).toBe(0);
    // biome-ignore lint/suspicious/noExplicitAny: wire JSON
    const tool = (mock.requests[1]!.body.messages as any[]).filter((m) => m.role === 'tool')[0];
    // The kernel's answer: not in the sandbox's view (or refused by Landlock where there is none).
    expect(tool.content).toMatch(/No such file or directory|Permission denied/);
    expect(tool.content).not.toMatch(/policy/i);
    expect(tool.content).not.toContain('FAKE-PRIVATE-KEY');
    expect(result.stdout).not.toContain('FAKE-PRIVATE-KEY');
    expect(JSON.parse(result.stdout).tool_calls[0].decision).toBe('allow');
  });
});

describe('rune sandbox', () => {
  it('--allow-domain example.invalid: getent hosts other.invalid fails', async () => {
    // The acceptance item as written; .invalid never resolves, so the test below is the real proof.
    const result = await runRune(
      ['sandbox', '--allow-domain', 'example.invalid', '--', 'getent', 'hosts', 'other.invalid'],
      {
        cwd,
        env: env(),
      },
    );
    expect(result.code).not.toBe(0);
    expect(result.stdout).toBe('');
  });

  it('only allowed names resolve inside, although the host resolves both', async (context) => {
    // The host's name service is replaced, in a user+mount namespace of the test's own, by a hosts
    // file that knows two names; the sandbox must answer only the allowed one.
    const hosts = join(root, 'hosts');
    writeFileSync(hosts, '127.0.0.1 localhost\n10.1.2.3 other.test\n93.184.216.34 allowed.test\n');
    const inNamespace = (command: string) =>
      run(
        'unshare',
        [
          '--user',
          '--map-root-user',
          '--mount',
          'sh',
          '-c',
          `mount --bind ${hosts} /etc/hosts && ${command}`,
        ],
        {
          cwd,
          env: env(),
        },
      );
    const outside = await inNamespace('getent hosts other.test');
    if (outside.code !== 0) context.skip(`cannot set up a test name service (${outside.stderr.trim()})`);
    expect(outside.stdout).toContain('10.1.2.3');
    const sandbox = `"${requireBinary()}" sandbox --allow-domain allowed.test --`;
    const denied = await inNamespace(`${sandbox} getent hosts other.test`);
    expect(denied.code).not.toBe(0);
    expect(denied.stdout).toBe('');
    const allowed = await inNamespace(`${sandbox} getent hosts allowed.test`);
    expect(allowed.code).toBe(0);
    expect(allowed.stdout).toContain('93.184.216.34');
  });

  it("a connection to a server on the host's loopback fails from inside, and works outside", async () => {
    const inside = await runRune(
      ['sandbox', '--', 'curl', '--http0.9', '-sS', '-m', '3', `http://127.0.0.1:${port}/`],
      {
        cwd,
        env: env(),
      },
    );
    expect(inside.code).not.toBe(0);
    expect(inside.stdout).not.toContain('HOST-LOOPBACK');
    const outside = await runRune(
      [
        '--sandbox',
        'off',
        'sandbox',
        '--',
        'curl',
        '--http0.9',
        '-sS',
        '-m',
        '3',
        `http://127.0.0.1:${port}/`,
      ],
      { cwd, env: env() },
    );
    expect(outside.stdout).toContain('HOST-LOOPBACK');
  });

  it('refuses a grant into the secrets floor (exit 2, nothing runs) unless --unrestricted', async () => {
    const key = join(home, '.ssh', 'id_rsa');
    for (const args of [
      ['--allow-read', join(home, '.ssh')],
      ['--allow-write', key],
    ]) {
      const refused = await runRune(['sandbox', ...args, '--', 'cat', key], { cwd, env: env() });
      expect(refused.code, args.join(' ')).toBe(2);
      expect(refused.stdout).toBe('');
      expect(refused.stderr).toContain(`${args[0]} ${args[1]}: lies inside ${join(home, '.ssh')}`);
      expect(refused.stderr).toMatch(/pass --unrestricted to grant it anyway/);
    }
    const granted = await runRune(
      ['sandbox', '--unrestricted', '--allow-read', join(home, '.ssh'), '--', 'cat', key],
      { cwd, env: env() },
    );
    expect(granted.code).toBe(0);
    expect(granted.stdout).toContain('FAKE-PRIVATE-KEY-e2e-777');
    // A grant around the secret is fine: the view hides the secret folder under it.
    const around = await runRune(['sandbox', '--allow-read', home, '--', 'cat', key], { cwd, env: env() });
    expect(around.code).not.toBe(0);
    expect(around.stdout).not.toContain('FAKE-PRIVATE-KEY');
  });

  it("a literal '~' given to --allow-read is the home folder, as the floor check takes it, never <cwd>/~", async () => {
    writeFileSync(join(home, 'home-marker.txt'), 'in the home folder\n');
    const read = await runRune(['sandbox', '--allow-read', '~', '--', 'cat', join(home, 'home-marker.txt')], {
      cwd,
      env: env(),
    });
    expect(read.stderr).toBe('');
    expect(read.stdout).toBe('in the home folder\n');
  });

  it('refuses a secret granted by rune.toml, naming the key; says so when the sandbox is off', async () => {
    const runeHome = join(root, 'home-toml', '.rune');
    mkdirSync(runeHome, { recursive: true });
    writeFileSync(join(runeHome, 'rune.toml'), `[policy]\nallowed_paths_ro = ["~/.ssh"]\n`);
    const tomlEnv = { ...env(), RUNE_HOME: runeHome };
    const refused = await runRune(['sandbox', '--', 'true'], { cwd, env: tomlEnv });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('policy.allowed_paths_ro ~/.ssh: lies inside');
    const off = await runRune(['sandbox', '--sandbox', 'off', '--', 'true'], { cwd, env: env() });
    expect(off.code).toBe(0);
    expect(off.stderr).toMatch(/the sandbox is off \(--sandbox off\): the command runs with no layer/);
  });

  it('exits with the command code and passes stdin and stdout through', async () => {
    const result = await runRune(['sandbox', '--', '/bin/sh', '-c', 'cat; exit 5'], {
      cwd,
      env: env(),
      input: 'piped',
    });
    expect(result.code).toBe(5);
    expect(result.stdout).toBe('piped');
  });

  it('--layers lists every layer with applied or the reason it was skipped', async () => {
    const result = await runRune(['sandbox', '--layers', '--', '/bin/true'], { cwd, env: env() });
    expect(result.code).toBe(0);
    for (const layer of ['cgroups', 'network', 'dns', 'seccomp', 'landlock', 'namespaces', 'rlimits'])
      expect(result.stderr).toMatch(new RegExp(`^ {2}${layer}\\s+(applied|SKIPPED)\\s+\\S`, 'm'));
  });

  it('the hidden _landlock subcommand applies Landlock alone', async () => {
    const denied = await runRune(
      [
        '_landlock',
        '--ro',
        '/usr',
        '--ro',
        '/lib',
        '--ro',
        '/lib64',
        '--ro',
        '/bin',
        '--',
        'cat',
        '/etc/hostname',
      ],
      {
        cwd,
        env: env(),
      },
    );
    expect(denied.code).not.toBe(0);
    expect(denied.stderr).toMatch(/Permission denied/);
    const allowed = await runRune(['_landlock', '--ro', '/', '--', 'cat', join(home, '.ssh', 'id_rsa')], {
      cwd,
      env: env(),
    });
    expect(allowed.stdout).toContain('FAKE-PRIVATE-KEY');
  });

  it('the hidden _seccomp and _net-guard subcommands', async () => {
    const seccomp = await runRune(['_seccomp', '--', 'unshare', '-U', 'true'], { cwd, env: env() });
    expect(seccomp.code).not.toBe(0);
    expect(seccomp.stderr).toMatch(/Operation not permitted/);
    const guard = await runRune(
      [
        '_net-guard',
        '--allow-domain',
        'localhost',
        '--',
        'curl',
        '--http0.9',
        '-sS',
        '-m',
        '3',
        `http://localhost:${port}/`,
      ],
      { cwd, env: env() },
    );
    expect(guard.stdout).toContain('HOST-LOOPBACK');
    const blocked = await runRune(
      ['_net-guard', '--', 'curl', '--http0.9', '-sS', '-m', '3', `http://127.0.0.1:${port}/`],
      {
        cwd,
        env: env(),
      },
    );
    expect(blocked.stdout).not.toContain('HOST-LOOPBACK');
  });
});
