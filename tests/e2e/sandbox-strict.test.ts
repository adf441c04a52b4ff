// Strict sandbox mode in every mode, where a layer is really missing: rune started under the
// seccomp profile a container runtime gives unprivileged containers (no namespace can be made).
// Each mode refuses before any model call with exit 8, naming each missing layer and its true
// cause; `rune doctor` names that cause too. Only the model is mocked.
import { spawnSync } from 'node:child_process';
import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useMockLlm } from '../helpers/mock-llm.ts';
import { cleanEnv, type RunResult, requireBinary, run, tempDir } from '../helpers/rune.ts';
import { BUILD_ENV } from './concourse-harness.ts';

const HELPER = join(import.meta.dirname, '../helpers/container-seccomp.py');
const KEY = 'sk-proj-strictSecretKey0123456789abcdef';
const available = spawnSync('/usr/bin/python3', ['-c', 'import seccomp']).status === 0;

/** Runs the binary (under `name`, for Concourse) inside the container's seccomp profile. */
function contained(
  args: string[],
  options: { input?: string; env?: NodeJS.ProcessEnv; argv0?: string; cwd?: string } = {},
): Promise<RunResult> {
  let program = requireBinary();
  if (options.argv0) {
    // Concourse's way: a symlink named after the step.
    const dir = tempDir('rune-strict-resource-');
    symlinkSync(program, join(dir, options.argv0));
    program = join(dir, options.argv0);
  }
  return run('/usr/bin/python3', [HELPER, '--', program, ...args], {
    input: options.input ?? '',
    env: { ...cleanEnv(), ...options.env },
    cwd: options.cwd ?? tempDir('rune-strict-cwd-'),
    timeoutMs: 60_000,
  });
}

describe.skipIf(!available)("strict mode under a container runtime's seccomp profile", () => {
  const mock = useMockLlm();
  const missing =
    /\n {2}namespaces: unshare\(CLONE_NEWUSER\) failed with EPERM: a seccomp filter stacked on rune refuses unshare/;

  it('rune doctor names the stacked seccomp filter as the cause, not a sysctl', async () => {
    const result = await contained(['doctor']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /user namespaces +no +unshare\(CLONE_NEWUSER\) failed with EPERM: a seccomp filter stacked on rune refuses unshare/,
    );
    expect(result.stdout).toMatch(/network namespaces +no +needs a user namespace first: .*seccomp filter/);
    expect(result.stdout).toMatch(/namespaces +SKIPPED +unshare\(CLONE_NEWUSER\).*seccomp filter stacked/);
    expect(result.stdout).not.toMatch(/unprivileged_userns_clone is|see kernel\.unprivileged_userns_clone/);
  });

  it('pipe mode: --sandbox strict exits 8 before the model is called, naming each missing layer', async () => {
    mock.script([{ toolCalls: [{ name: 'execute_cmd', arguments: { cmd: 'ls' } }] }, { text: 'done' }]);
    const result = await contained(
      ['--sandbox', 'strict', '--base-url', mock.baseUrl, '--model', 'm', 'list the files'],
      {
        env: { RUNE_API_KEY: KEY },
      },
    );
    expect(result.code).toBe(8);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('--sandbox is strict, but');
    expect(result.stderr).toMatch(missing);
    expect(result.stderr).toContain('pass --sandbox auto');
    expect(result.stderr).not.toContain(KEY);
    expect(mock.requests).toHaveLength(0);
  });

  it('the interactive session (on a terminal) exits 8 before its prompt, naming each missing layer', async () => {
    // script(1) gives rune a terminal, so it starts the session rather than pipe mode.
    const home = tempDir('rune-strict-home-');
    const command = `${requireBinary()} --sandbox strict --base-url ${mock.baseUrl} --model m`;
    const result = await run('/usr/bin/python3', [HELPER, '--', 'script', '-qec', command, '/dev/null'], {
      env: { ...cleanEnv(home), RUNE_API_KEY: KEY, TERM: 'dumb' },
      cwd: home,
      timeoutMs: 60_000,
    });
    expect(result.code).toBe(8);
    expect(result.stdout).toContain('--sandbox is strict, but');
    expect(result.stdout).toMatch(
      /\r?\n {2}namespaces: unshare\(CLONE_NEWUSER\) failed with EPERM: a seccomp filter/,
    );
    expect(result.stdout).not.toContain(KEY);
    expect(mock.requests).toHaveLength(0);
  });

  it('pipe mode: sandbox.mode = "strict" from rune.toml is named as such', async () => {
    const home = tempDir('rune-strict-home-');
    writeFileSync(join(home, 'rune.toml'), '[sandbox]\nmode = "strict"\n');
    const result = await contained(['--base-url', mock.baseUrl, '--model', 'm', 'hi'], {
      env: { RUNE_HOME: home, RUNE_API_KEY: KEY },
    });
    expect(result.code).toBe(8);
    expect(result.stderr).toContain('sandbox.mode in rune.toml is strict, but');
    expect(mock.requests).toHaveLength(0);
  });

  it('the same run in auto mode goes on, and the model is told which layers its command lacked', async () => {
    mock.script([{ toolCalls: [{ name: 'execute_cmd', arguments: { cmd: 'echo hi' } }] }, { text: 'done' }]);
    const result = await contained(['--base-url', mock.baseUrl, '--model', 'm', '--unrestricted', 'say hi'], {
      env: { RUNE_API_KEY: KEY },
    });
    expect(result.code, result.stderr).toBe(0);
    const tool = mock.requests
      .at(-1)!
      .body.messages.find((message: { role: string }) => message.role === 'tool');
    expect(tool.content).toMatch(
      /\[sandbox: this ran without the (.* and )?namespaces layers?, which this machine does not offer/,
    );
    // The network is closed there all the same (seccomp and Landlock): not named as missing.
    expect(tool.content).not.toMatch(/without the [^\]]*network/);
  });

  it('rune notes with sandbox.mode = "strict" does not start: exit 8, each missing layer named', async () => {
    const home = tempDir('rune-strict-home-');
    writeFileSync(join(home, 'rune.toml'), '[sandbox]\nmode = "strict"\n');
    const result = await contained(['notes', '--port', '0'], { env: { RUNE_HOME: home } });
    expect(result.code).toBe(8);
    expect(result.stderr).toContain('sandbox.mode in rune.toml is strict, but');
    expect(result.stderr).toMatch(missing);
    expect(result.stderr).not.toContain('listening on');
  });

  it('Concourse: source.sandbox.mode strict fails check with exit 8 before the model, stdout empty', async () => {
    const input = JSON.stringify({
      source: { api_key: KEY, base_url: mock.baseUrl, model: 'm', prompt: 'hi', sandbox: { mode: 'strict' } },
    });
    const result = await contained([], { argv0: 'check', input, env: BUILD_ENV });
    expect(result.code).toBe(8);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(
      'sandbox layer SKIPPED: namespaces: unshare(CLONE_NEWUSER) failed with EPERM',
    );
    expect(result.stderr).toContain('source.sandbox.mode is strict, but');
    expect(result.stderr).toMatch(missing);
    expect(result.stderr).toContain('set source.sandbox.mode to auto');
    expect(result.stderr).not.toContain(KEY);
    expect(mock.requests).toHaveLength(0);
  });
});
