import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULTS, type RuneConfig } from '../config/schema.ts';
import { silentLogger } from '../core/logger.ts';
import type { SandboxCapabilities } from './capabilities.ts';
import { createSandboxExecutor, expectedLayers } from './executor.ts';
import type { SandboxRequest } from './types.ts';

const config = { ...DEFAULTS, mcp: [] } as unknown as RuneConfig;

function request(argv: string[], extra: Partial<SandboxRequest> = {}): SandboxRequest {
  return {
    argv,
    cwd: process.cwd(),
    env: { PATH: '/usr/bin:/bin' },
    readOnlyPaths: [],
    readWritePaths: [],
    allowedDomains: [],
    timeoutMs: 10_000,
    maxOutputBytes: 1_000_000,
    ...extra,
  };
}

describe('sandbox executor', () => {
  const executor = createSandboxExecutor({ config, logger: silentLogger });

  it('runs a command, passes stdin, and reports the layers the helper applied', async () => {
    const result = await executor.run(request(['/bin/sh', '-c', 'cat; exit 7'], { stdin: 'hello' }));
    expect(result.exitCode).toBe(7);
    expect(result.stdout).toBe('hello');
    const layers = Object.fromEntries(result.layers.map((l) => [l.layer, l]));
    expect(layers.landlock?.applied).toBe(true);
    expect(layers.seccomp?.applied).toBe(true);
    expect(layers.namespaces?.applied).toBe(true);
    expect(layers.network?.applied).toBe(true);
    expect(result.layers.map((l) => l.layer).sort()).toEqual(
      ['cgroups', 'dns', 'landlock', 'namespaces', 'network', 'rlimits', 'seccomp'].sort(),
    );
  });

  it('gives the command ordinary signal semantics (it is not PID 1 of its namespace)', async () => {
    const result = await executor.run(request(['/bin/sh', '-c', 'kill -TERM $$; echo survived']));
    expect(result.stdout).toBe('');
    expect(result.signal).toBe('SIGTERM');
  });

  it('caps output and counts what it dropped', async () => {
    const result = await executor.run(
      request(['/bin/sh', '-c', 'head -c 5000 /dev/zero'], { maxOutputBytes: 1000 }),
    );
    expect(result.stdout.length).toBe(1000);
    expect(result.stdoutDropped).toBe(4000);
  });

  it('kills the whole tree on timeout', async () => {
    const result = await executor.run(request(['/bin/sh', '-c', 'sleep 30 & sleep 30'], { timeoutMs: 300 }));
    expect(result.timedOut).toBe(true);
    expect(result.signal).toBe('SIGKILL');
  });

  it('passes only the allow list, env_passthrough names and the configured env', async () => {
    const withPass = createSandboxExecutor({
      config: { ...config, sandbox: { ...config.sandbox, env_passthrough: ['GH_TOKEN'] } },
      logger: silentLogger,
    });
    const env = {
      PATH: '/usr/bin:/bin',
      LC_TIME: 'C',
      MY_API_KEY: 'k',
      DATABASE_URL: 'postgres://u:pw@h/db',
      GH_TOKEN: 'g',
      PLAIN: 'x',
    };
    const result = await withPass.run(
      request(['/usr/bin/env'], { env, configuredEnv: { FROM_TABLE: 't', API_TOKEN: 'on-purpose' } }),
    );
    const names = result.stdout
      .trim()
      .split('\n')
      .map((line) => line.split('=')[0])
      .sort();
    expect(names).toEqual(['API_TOKEN', 'FROM_TABLE', 'GH_TOKEN', 'LC_TIME', 'PATH']);
  });

  it('lets a writable root be written but keeps its .env and .git/hooks read-only', async () => {
    const root = mkdtempSync(join(tmpdir(), 'rune-exec-'));
    writeFileSync(join(root, '.env'), 'A=1\n');
    mkdirSync(join(root, '.git', 'hooks'), { recursive: true });
    const script = [
      'echo ok > out.txt && cat out.txt',
      'echo B=2 >> .env || echo env-denied',
      'echo x > .git/hooks/pre-commit || echo hooks-denied',
    ].join('; ');
    const result = await executor.run(
      request(['/bin/sh', '-c', script], { cwd: root, readWritePaths: [root] }),
    );
    expect(result.stdout).toBe('ok\nenv-denied\nhooks-denied\n');
  });

  it('spawns a long-lived process with pipes and layers', async () => {
    const proc = executor.spawn({ ...request(['/bin/cat']) });
    const chunks: Buffer[] = [];
    proc.stdout.on('data', (c: Buffer) => chunks.push(c));
    proc.stdin.write('ping\n');
    proc.stdin.end();
    const exit = await proc.exited;
    expect(exit.exitCode).toBe(0);
    expect(Buffer.concat(chunks).toString()).toBe('ping\n');
    expect(proc.layers.find((l) => l.layer === 'landlock')?.applied).toBe(true);
  });

  it("has the helper's report merged into a spawned process's layers once it has exited", async () => {
    // A quick command ends about when its report arrives; `exited` must wait for the report.
    // Several at once, so the order of exit and report events varies as it does in real use.
    const procs = Array.from({ length: 12 }, () => executor.spawn({ ...request(['/bin/true']) }));
    await Promise.all(
      procs.map(async (proc) => {
        proc.stdout.resume();
        proc.stderr.resume();
        await proc.exited;
        expect(proc.layers.find((l) => l.layer === 'landlock')?.detail).toMatch(/read-only \+ \d+ writable/);
      }),
    );
  });

  it('describes the view: what a tool sees and what is absent', async () => {
    const namespaces = executor.describe().find((l) => l.layer === 'namespaces');
    if (!namespaces?.applied) return; // the capability report says why (tested in capabilities)
    expect(namespaces.detail).toMatch(/view built from the grants/);
    expect(namespaces.detail).toMatch(/absent unless granted: \/home, \/root, \/run, \/var/);
    const result = await executor.run(request(['/bin/true']));
    const ran = result.layers.find((l) => l.layer === 'namespaces')?.detail ?? '';
    expect(ran).toMatch(/read-only: \/usr .* writable: \/tmp \(private\)/);
    expect(ran).toMatch(/hidden: .*\/etc\/shadow/);
  });

  it('turns a missing layer into SANDBOX_SETUP in strict mode', async () => {
    const strict = createSandboxExecutor({ config, logger: silentLogger, mode: 'strict' });
    const missing = strict.describe().filter((l) => !l.applied);
    if (missing.length === 0) {
      const result = await strict.run(request(['/bin/true']));
      expect(result.exitCode).toBe(0);
      return;
    }
    await expect(strict.run(request(['/bin/true']))).rejects.toMatchObject({ code: 'SANDBOX_SETUP' });
  });
});

describe('expected layers without a network namespace', () => {
  const on = (detail: string) => ({ available: true, detail });
  const off = { available: false, detail: 'unshare(CLONE_NEWUSER) failed with EPERM: a seccomp filter' };
  const caps = (seccomp: boolean, abi: number): SandboxCapabilities => ({
    landlock: { ...on(`ABI ${abi}`), abi },
    seccomp: seccomp ? on('filter') : { available: false, detail: 'no seccomp' },
    seccompUserNotif: on('yes'),
    userNamespaces: off,
    netNamespaces: off,
    mountNamespaces: off,
    pidNamespaces: off,
    cgroupV2: on('v2'),
    userSystemd: off,
  });
  const layer = (c: SandboxCapabilities, name: string) =>
    expectedLayers(c, { kind: 'none', detail: 'none' } as never, config).find((l) => l.layer === name);

  it.each([
    [
      true,
      7,
      true,
      /seccomp refuses inet and inet6 sockets; Landlock denies TCP bind and connect; allowed domains unreachable/,
    ],
    [true, 3, true, /seccomp refuses inet and inet6 sockets; allowed domains unreachable/],
    [false, 7, false, /^no network namespace: unshare/],
  ])('seccomp %s, Landlock ABI %d: network applied %s', (seccomp, abi, applied, detail) => {
    const network = layer(caps(seccomp, abi), 'network');
    expect(network?.applied).toBe(applied);
    expect(network?.detail).toMatch(detail);
    expect(layer(caps(seccomp, abi), 'dns')?.applied).toBe(applied);
  });
});
