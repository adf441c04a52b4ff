// `rune sandbox -- CMD` starts from the small sandbox bundle (no commander, agent or providers),
// and still behaves as the commander subcommand: --help, odd forms and errors go through the cli.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cleanEnv, RUNE_BIN, runRune, tempDir } from '../helpers/rune.ts';

function codeCaches(runeHome: string): string[] {
  return readdirSync(join(runeHome, 'cache', 'code')).map((name) => name.replace(/-.*/, ''));
}

describe('rune sandbox start-up', () => {
  it('runs the command from the sandbox bundle alone', async () => {
    const runeHome = join(tempDir(), 'rune');
    const result = await runRune(
      ['--sandbox', 'auto', 'sandbox', '--layers', '--', '/bin/sh', '-c', 'cat; echo err >&2; exit 7'],
      { env: { RUNE_HOME: runeHome }, input: 'from stdin\n' },
    );
    expect(result.stdout).toBe('from stdin\n');
    expect(result.stderr).toContain('err\n');
    expect(result.stderr).toContain('rune sandbox layers:');
    expect(result.code).toBe(7);
    // Each loaded mode bundle leaves its code cache: only the sandbox one was loaded.
    expect(codeCaches(runeHome)).toEqual(['sandbox']);
  });

  it('prints -v diagnostics, the helper command line among them, from the sandbox bundle alone', async () => {
    for (const args of [
      ['-v', 'sandbox', '--', '/bin/true'],
      ['--verbose', 'sandbox', '--layers', '--allow-write', tempDir(), '--', '/bin/true'],
      ['sandbox', '-v', '--', '/bin/true'],
    ]) {
      const runeHome = join(tempDir(), 'rune');
      const result = await runRune(args, { env: { RUNE_HOME: runeHome } });
      expect(result.code).toBe(0);
      const events = result.stderr
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { event: string; argv?: string[] });
      const logged = events.find((e) => e.event === 'sandbox.helper_argv');
      // bench/sandbox.mjs replays this line: the helper, its layers' flags, then the command.
      expect(logged?.argv?.[0]).toMatch(/rune-sandbox-/);
      expect(logged?.argv?.slice(-2)).toEqual(['--', '/bin/true']);
      expect(codeCaches(runeHome)).toEqual(['sandbox']);
    }
  });

  it("gives the command an empty input when rune's own is /dev/null", () => {
    const runeHome = join(tempDir(), 'rune');
    const result = spawnSync(RUNE_BIN, ['sandbox', '--', '/bin/sh', '-c', 'cat; echo "ended $?"'], {
      env: { ...cleanEnv(), RUNE_HOME: runeHome },
      stdio: ['ignore', 'pipe', 'pipe'],
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(result.stdout).toBe('ended 0\n');
    expect(result.status).toBe(0);
  });

  it("runs the whole call inside its cgroups, which are also the root of the command's cgroup namespace", async (context) => {
    const runeHome = join(tempDir(), 'rune');
    const marker = `rune-cgroup-marker-${process.pid}`;
    const child = spawn(
      RUNE_BIN,
      [
        'sandbox',
        '--layers',
        '--',
        '/bin/sh',
        '-c',
        `cat /proc/self/cgroup; echo ${marker}; sleep 5; : ${marker}`,
      ],
      { env: { ...cleanEnv(), RUNE_HOME: runeHome }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const ended = new Promise((done) => child.on('close', done));
    for (let i = 0; i < 200 && !stdout.includes(marker); i++) await new Promise((r) => setTimeout(r, 50));
    // Seen from the host: the command's shell (found by the marker in its arguments) is in the call's
    // cgroups, which the helper moved its init into before anything of the command started.
    const shell = readdirSync('/proc')
      .filter((name) => /^\d+$/.test(name))
      .find((pid) => {
        try {
          const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
          // rune and the helper carry the same words; the shell is the one they started.
          return cmdline.startsWith('/bin/sh\0') && cmdline.includes(`: ${marker}`);
        } catch {
          return false;
        }
      });
    const hostView = shell ? readFileSync(`/proc/${shell}/cgroup`, 'utf8') : '';
    child.kill('SIGTERM');
    await ended;
    if (/^\s+cgroups\s+SKIPPED/m.test(stderr)) context.skip('no writable cgroups on this machine');
    expect(stderr).toMatch(/^\s+cgroups\s+applied\s+cgroup v1|^\s+cgroups\s+applied\s+delegated/m);
    const calls = hostView.split('\n').filter((line) => line.includes(`/rune-${child.pid}-`));
    expect(calls.length).toBeGreaterThanOrEqual(1);
    // Inside, every hierarchy it joined is the root of its cgroup namespace: nothing of rune's own.
    const inside = stdout.split('\n').filter((line) => /^\d+:[^:]*:/.test(line));
    expect(inside.length).toBeGreaterThan(0);
    for (const line of inside) expect(line).toMatch(/:\/$/);
  });

  it('keeps a sandbox code cache of this path even when a hidden subcommand wrote the first one', async () => {
    const runeHome = join(tempDir(), 'rune');
    const env = { RUNE_HOME: runeHome };
    expect((await runRune(['_seccomp', '--', '/bin/true'], { env })).code).toBe(0);
    const dir = join(runeHome, 'cache', 'code');
    expect(readdirSync(dir).filter((name) => name.endsWith('.partial.v8'))).toHaveLength(1);
    expect((await runRune(['sandbox', '--', '/bin/true'], { env })).code).toBe(0);
    const [cache, ...more] = readdirSync(dir);
    expect(more).toEqual([]);
    expect(cache).toMatch(/^sandbox-.*[^l]\.v8$/);
    const before = statSync(join(dir, cache!)).mtimeMs;
    expect((await runRune(['sandbox', '--', '/bin/true'], { env })).code).toBe(0);
    expect(statSync(join(dir, cache!)).mtimeMs).toBe(before);
  });

  it('keeps the kernel probe for the next run, believing only a private, well-formed file of this context', async () => {
    const runeHome = join(tempDir(), 'rune');
    const env = { RUNE_HOME: runeHome };
    const layers = async () => {
      const result = await runRune(['sandbox', '--layers', '--', '/bin/true'], { env });
      expect(result.code).toBe(0);
      return result.stderr.match(/^\s+namespaces\s+(\S+)/m)?.[1];
    };
    expect(await layers()).toBe('applied');
    const file = join(runeHome, 'cache', 'probe', 'kernel.json');
    const stored = JSON.parse(readFileSync(file, 'utf8'));
    expect(stored.probe.userns).toBe(0);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    // The next run believes the file: a probe saying "no user namespaces" (EPERM) is what auto mode
    // then plans with (the helper itself still applies Landlock and seccomp whatever the probe says).
    writeFileSync(file, JSON.stringify({ ...stored, probe: { ...stored.probe, userns: -1 } }));
    expect(await layers()).toBe('SKIPPED');
    // Not a file others could have written: probed again, and rewritten.
    chmodSync(file, 0o620);
    expect(await layers()).toBe('applied');
    expect(JSON.parse(readFileSync(file, 'utf8')).probe.userns).toBe(0);
    // Not a file made in another context (another kernel, boot, binary or confinement).
    writeFileSync(
      file,
      JSON.stringify({ context: `${stored.context} `, probe: { ...stored.probe, userns: -1 } }),
    );
    expect(await layers()).toBe('applied');
  });

  it('never runs a cached helper that differs from the embedded one', async () => {
    const runeHome = join(tempDir(), 'rune');
    const env = { RUNE_HOME: runeHome };
    expect((await runRune(['sandbox', '--', '/bin/true'], { env })).code).toBe(0);
    const dir = join(runeHome, 'cache', 'native');
    const name = readdirSync(dir).find((n) => n.startsWith('rune-sandbox-') && !n.endsWith('.tmp'))!;
    const helper = join(dir, name);
    const original = readFileSync(helper);
    // Same length, other bytes: a script that would run instead of the sandbox.
    const planted = Buffer.alloc(original.length, 0x0a);
    planted.write('#!/bin/sh\necho PLANTED\nexit 0\n');
    writeFileSync(helper, planted);
    const result = await runRune(['sandbox', '--', '/bin/echo', 'real'], { env });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('real\n');
    expect(result.stdout + result.stderr).not.toContain('PLANTED');
    expect(readFileSync(helper).equals(original)).toBe(true);
  });

  it('leaves help and forms without -- to commander, with the same result as before', async () => {
    const runeHome = join(tempDir(), 'rune');
    const help = await runRune(['sandbox', '--help'], { env: { RUNE_HOME: runeHome } });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: rune sandbox');
    expect(help.stdout).toContain('--allow-domain');
    const top = await runRune(['--help'], { env: { RUNE_HOME: runeHome } });
    expect(top.stdout).toMatch(/\n\s+sandbox \[options\] <command\.\.\.>/);
    const bare = await runRune(['sandbox', 'ls', '-d', '/'], { env: { RUNE_HOME: runeHome } });
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain("unknown option '-d'");
    expect(codeCaches(runeHome)).toEqual(['cli']);
  });

  it('reports a bad --sandbox value as a usage error from either path', async () => {
    const result = await runRune(['sandbox', '--sandbox', 'bad', '--', '/bin/true']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--sandbox must be auto, strict or off, not "bad"');
  });

  it('ships a sandbox bundle without commander, openai or fastify', () => {
    const meta = JSON.parse(readFileSync(join(RUNE_BIN, '..', 'meta.json'), 'utf8')) as {
      outputs: Record<string, { inputs: Record<string, unknown> }>;
    };
    const sandbox = Object.entries(meta.outputs).find(([file]) => file.endsWith('js/sandbox.cjs'));
    const inputs = Object.keys(sandbox![1].inputs);
    expect(inputs).toContain('src/sandbox/command.ts');
    for (const banned of [
      'node_modules/commander',
      'node_modules/openai',
      'node_modules/fastify',
      'src/cli/',
    ])
      expect(inputs.filter((input) => input.includes(banned))).toEqual([]);
  });
});
