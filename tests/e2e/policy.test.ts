// The policy through the built binary: the tree-sitter parser loads from the SEA's own assets,
// pipe mode never hangs on a call that needs confirmation (the model is told), the audit log and
// `rune audit`, config refusal of `*.com`, and a project config that can only narrow.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { useMockLlm } from '../helpers/mock-llm.ts';
import { cleanEnv, requireBinary, runRune, tempDir } from '../helpers/rune.ts';

const KEY = 'sk-test-policy-0a1b2c3d4e5f';
const mock = useMockLlm();

beforeAll(() => {
  requireBinary();
});

function makeHome(toml = '') {
  const home = tempDir('rune-policy-home-');
  const runeHome = join(home, '.rune');
  mkdirSync(runeHome, { recursive: true, mode: 0o700 });
  if (toml) writeFileSync(join(runeHome, 'rune.toml'), toml);
  const cwd = tempDir('rune-policy-cwd-');
  return { home, runeHome, cwd, env: { ...cleanEnv(home), RUNE_HOME: runeHome } };
}
type Home = ReturnType<typeof makeHome>;

function rune(h: Home, args: string[], input = '') {
  return runRune(['--base-url', mock.baseUrl, '--api-key', KEY, '--model', 'm', ...args], {
    input,
    cwd: h.cwd,
    env: h.env,
  });
}

type WireMessage = { role: string; content: string };
const toolMessages = (index: number): WireMessage[] =>
  (mock.requests[index]!.body.messages as WireMessage[]).filter((m) => m.role === 'tool');

describe('policy in the built binary', () => {
  it('allows an allowlisted pipeline (parser loaded from the binary) and refuses a substitution', async () => {
    mock.script([
      { toolCalls: [{ name: 'execute_cmd', arguments: { cmd: 'ls -la | grep marker' } }] },
      { toolCalls: [{ name: 'execute_cmd', arguments: { cmd: 'echo $(id)' } }] },
      { text: 'done' },
    ]);
    const h = makeHome('[policy]\nallowed_commands = ["ls", "grep", "echo"]\n');
    writeFileSync(join(h.cwd, 'marker.txt'), 'x');
    const result = await rune(h, ['--json', 'list']);
    expect(result.code, result.stderr).toBe(0);
    expect(toolMessages(1)[0]!.content, result.stderr).toContain('marker.txt');
    expect(toolMessages(2).at(-1)!.content).toMatch(/command substitution/);
    const calls = JSON.parse(result.stdout).tool_calls;
    expect(calls.map((c: { decision: string }) => c.decision)).toEqual(['allow', 'deny']);
  });

  it('pipe mode in confirm mode: a call needing confirmation does not hang, the model is told why', async () => {
    mock.script([
      { toolCalls: [{ name: 'execute_cmd', arguments: { cmd: 'df -h' } }] },
      { text: 'could not run df' },
    ]);
    const h = makeHome('[policy]\nmode = "confirm"\n');
    const result = await rune(h, ['disk usage?'], '');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('could not run df\n');
    const told = toolMessages(1)[0]!.content;
    expect(told).toMatch(/not in allowed_commands/);
    expect(told).toMatch(/nobody can be asked/);
    // With --yes the same call runs.
    mock.script([{ toolCalls: [{ name: 'execute_cmd', arguments: { cmd: 'echo ran' } }] }, { text: 'ok' }]);
    mock.requests.length = 0;
    const yes = await rune(h, ['--yes', 'echo'], '');
    expect(yes.code, yes.stderr).toBe(0);
    expect(toolMessages(1)[0]!.content).toContain('ran');
  });

  it('writes every decision to the audit log; rune audit filters it', async () => {
    mock.script([
      { toolCalls: [{ name: 'read_file', arguments: { path: 'a.txt' } }] },
      { toolCalls: [{ name: 'read_file', arguments: { path: '~/.ssh/id_rsa' } }] },
      { text: 'done' },
    ]);
    const h = makeHome();
    writeFileSync(join(h.cwd, 'a.txt'), 'hello');
    expect((await rune(h, ['read'])).code).toBe(0);
    const lines = readFileSync(join(h.runeHome, 'audit.jsonl'), 'utf8').trim().split('\n');
    expect(lines.map((line) => JSON.parse(line).decision)).toEqual(['allow', 'deny']);
    expect(JSON.parse(lines[1]!)).toMatchObject({ tool: 'read_file', rule: 'floor', mode: 'allowlist' });

    const denied = await runRune(['audit', '--decision', 'deny', '--json'], { env: h.env });
    expect(denied.code, denied.stderr).toBe(0);
    const records = JSON.parse(denied.stdout);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ decision: 'deny', rule: 'floor' });
    const text = await runRune(['audit', '--since', '1h'], { env: h.env });
    expect(text.stdout.trim().split('\n')).toHaveLength(2);
    const future = await runRune(['audit', '--since', '2999-01-01'], { env: h.env });
    expect(future.stdout).toBe('no decisions match\n');
    const bad = await runRune(['audit', '--since', 'soonish'], { env: h.env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/neither a duration/);
  });

  it('refuses *.com in allowed_domains at load with a clear message', async () => {
    const h = makeHome('[policy]\nallowed_domains = ["*.com"]\n');
    const result = await rune(h, ['hi']);
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(
      /policy\.allowed_domains\.0: "\*\.com" would allow a whole top-level domain/,
    );
  });

  it('a project .rune/rune.toml narrows the policy and cannot widen it', async () => {
    mock.script([
      { toolCalls: [{ name: 'execute_cmd', arguments: { cmd: 'echo narrowed' } }] },
      { toolCalls: [{ name: 'execute_cmd', arguments: { cmd: 'rm -f x' } }] },
      { text: 'done' },
    ]);
    const h = makeHome('[policy]\nallowed_commands = ["echo", "ls"]\n');
    mkdirSync(join(h.cwd, '.rune'));
    writeFileSync(
      join(h.cwd, '.rune/rune.toml'),
      '[policy]\nallowed_commands = ["ls", "rm"]\nmode = "unrestricted"\n',
    );
    const result = await rune(h, ['--json', 'go']);
    expect(result.code, result.stderr).toBe(0);
    const decisions = JSON.parse(result.stdout).tool_calls.map((c: { decision: string }) => c.decision);
    expect(decisions).toEqual(['deny', 'deny']);
    expect(result.stderr).toMatch(/can only narrow the policy; ignored: allowed_commands: rm/);
  });

  it('a call after a command in the same turn is decided after that command ran (symlink swap)', async () => {
    // Attack: one turn holds a command that turns a writable folder into a symlink to a folder the
    // policy never allowed, then a write through it. Decided up front, the write went outside.
    const h = makeHome('[policy]\nallowed_commands = ["ln", "cat"]\nallowed_paths_rw = ["."]\n');
    const outside = tempDir('rune-policy-outside-');
    writeFileSync(join(outside, 'secret.txt'), 'outside-secret-7f3a');
    mock.script([
      {
        toolCalls: [
          { name: 'execute_cmd', arguments: { cmd: `ln -s ${outside} d` } },
          { name: 'write_file', arguments: { path: 'd/planted.txt', content: 'pwned' } },
          { name: 'read_file', arguments: { path: 'd/secret.txt' } },
        ],
      },
      { text: 'done' },
    ]);
    const result = await rune(h, ['--json', 'swap']);
    expect(result.code, result.stderr).toBe(0);
    expect(existsSync(join(outside, 'planted.txt'))).toBe(false);
    const told = toolMessages(1);
    expect(told[1]!.content).toMatch(/blocked by policy \(path\.not-allowed\)/);
    expect(told[2]!.content).not.toContain('outside-secret-7f3a');
    const decisions = JSON.parse(result.stdout).tool_calls.map((c: { decision: string }) => c.decision);
    expect(decisions).toEqual(['allow', 'deny', 'deny']);
  });
});

// An approval grants exactly what its question named (docs/adr/0033-run-outcomes.md): a command
// whose redirection writes outside the writable paths, approved with --yes, runs with that file
// writable (it used to run with the folder read-only); refused, it does not run; and an existing
// file in allowed_files_rw is writable to commands too (the sandbox took every writable grant for a
// folder and failed on a file).
/** The tool result the model read on the second request. */
const toolResult = () => toolMessages(1)[0]!.content;

describe('approvals through the binary', () => {
  it('confirm mode with --yes: the approved redirect write succeeds, with exactly that file granted', async () => {
    mock.script([
      { toolCalls: [{ name: 'execute_cmd', arguments: { cmd: 'echo approved > proof.txt' } }] },
      { text: 'done' },
    ]);
    const h = makeHome();
    writeFileSync(join(h.cwd, 'other.txt'), 'untouched\n');
    const result = await rune(h, ['--policy', 'confirm', '--yes', '--output', 'ndjson', 'write it']);
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
    const result = await rune(h, ['--policy', 'confirm', 'write it']);
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
      join(h.runeHome, 'rune.toml'),
      `[policy]\nallowed_commands = ["echo"]\nallowed_files_rw = [${JSON.stringify(join(h.cwd, 'listed.txt'))}]\n`,
    );
    const result = await rune(h, ['--json', 'write it']);
    expect(result.code, result.stderr).toBe(0);
    const results = toolMessages(1);
    expect(results[0]!.content).toMatch(/^exit code: 0/);
    expect(readFileSync(join(h.cwd, 'listed.txt'), 'utf8')).toBe('listed\n');
    expect(results[1]!.content).toMatch(/blocked by policy \(command\.redirect\)/);
    expect(existsSync(join(h.cwd, 'other.txt'))).toBe(false);
  });
});
