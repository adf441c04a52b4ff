// An approval grants exactly what its question named (docs/adr/0031-run-outcomes.md), through the
// built binary: a command whose redirection writes outside the writable paths, approved with
// --yes, runs with that file writable (it used to run with the folder read-only); refused, it does
// not run; and an existing file listed in allowed_files_rw is writable to commands too (the sandbox
// took every writable grant for a folder and failed on a file).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { useMockLlm } from '../helpers/mock-llm.ts';
import { cleanEnv, requireBinary, runRune, tempDir } from '../helpers/rune.ts';

const KEY = 'sk-test-approvals-0a1b2c3d4e5f';
const mock = useMockLlm();

beforeAll(() => {
  requireBinary();
});

function makeHome(toml = '') {
  const home = tempDir('rune-approvals-home-');
  const runeHome = join(home, '.rune');
  mkdirSync(runeHome, { recursive: true, mode: 0o700 });
  if (toml) writeFileSync(join(runeHome, 'rune.toml'), toml);
  const cwd = tempDir('rune-approvals-cwd-');
  return { cwd, env: { ...cleanEnv(home), RUNE_HOME: runeHome } };
}

function rune(h: ReturnType<typeof makeHome>, args: string[]) {
  return runRune(['--base-url', mock.baseUrl, '--api-key', KEY, '--model', 'm', ...args, 'write it'], {
    cwd: h.cwd,
    env: h.env,
  });
}

/** The tool result the model read on the second request. */
const toolResult = () =>
  (mock.requests[1]!.body.messages as { role: string; content: string }[]).filter(
    (m) => m.role === 'tool',
  )[0]!.content;

describe('approvals through the binary', () => {
  it('confirm mode with --yes: the approved redirect write succeeds, with exactly that file granted', async () => {
    mock.script([
      { toolCalls: [{ name: 'execute_cmd', arguments: { cmd: 'echo approved > proof.txt' } }] },
      { text: 'done' },
    ]);
    const h = makeHome();
    writeFileSync(join(h.cwd, 'other.txt'), 'untouched\n');
    const result = await rune(h, ['--policy', 'confirm', '--yes', '--output', 'ndjson']);
    expect(result.code, result.stderr).toBe(0);
    expect(toolResult()).toMatch(/^exit code: 0/);
    expect(readFileSync(join(h.cwd, 'proof.txt'), 'utf8')).toBe('approved\n');
    // The decision says what was granted; nothing else in the folder became writable.
    const events = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    const decision = events.find((e) => e.type === 'policy_decision').decision;
    expect(decision).toMatchObject({ kind: 'allow', rule: 'flag.yes' });
    expect(decision.grants).toContainEqual({ list: 'allowed_files_rw', value: join(h.cwd, 'proof.txt') });
    expect(readFileSync(join(h.cwd, 'other.txt'), 'utf8')).toBe('untouched\n');
  });

  it('confirm mode without anyone to ask: the redirect write is refused and nothing is written', async () => {
    mock.script([
      { toolCalls: [{ name: 'execute_cmd', arguments: { cmd: 'echo denied > refused.txt' } }] },
      { text: 'could not' },
    ]);
    const h = makeHome();
    const result = await rune(h, ['--policy', 'confirm']);
    expect(result.code, result.stderr).toBe(0);
    expect(toolResult()).toMatch(/blocked by policy \(command\.redirect\).*nobody can be asked/);
    expect(existsSync(join(h.cwd, 'refused.txt'))).toBe(false);
  });

  it('a file in allowed_files_rw is writable to a command, and only that file', async () => {
    mock.script([
      {
        toolCalls: [
          { name: 'execute_cmd', arguments: { cmd: 'echo listed > listed.txt' } },
          { name: 'execute_cmd', arguments: { cmd: 'echo other > other.txt' } },
        ],
      },
      { text: 'done' },
    ]);
    const h = makeHome();
    writeFileSync(join(h.cwd, 'listed.txt'), 'old\n');
    writeFileSync(
      join(h.env.RUNE_HOME, 'rune.toml'),
      `[policy]\nallowed_commands = ["echo"]\nallowed_files_rw = [${JSON.stringify(join(h.cwd, 'listed.txt'))}]\n`,
    );
    const result = await rune(h, ['--json']);
    expect(result.code, result.stderr).toBe(0);
    const results = (mock.requests[1]!.body.messages as { role: string; content: string }[]).filter(
      (m) => m.role === 'tool',
    );
    expect(results[0]!.content).toMatch(/^exit code: 0/);
    expect(readFileSync(join(h.cwd, 'listed.txt'), 'utf8')).toBe('listed\n');
    expect(results[1]!.content).toMatch(/blocked by policy \(command\.redirect\)/);
    expect(existsSync(join(h.cwd, 'other.txt'))).toBe(false);
  });
});
