// Pipe mode of the built binary against the scripted mock model: answers, --json, tool round trips,
// the step and token limits, every stop reason's exit code, and the API key never leaking.
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { useMockLlm } from '../helpers/mock-llm.ts';
import { cleanEnv, requireBinary, runRune, tempDir } from '../helpers/rune.ts';

const KEY = 'sk-test-e2e-9f8e7d6c5b4a39281706';
const mock = useMockLlm();

beforeAll(() => {
  requireBinary();
});

interface Home {
  home: string;
  runeHome: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
}

function makeHome(toml = ''): Home {
  const home = tempDir('rune-e2e-home-');
  const runeHome = join(home, '.rune');
  mkdirSync(runeHome, { recursive: true, mode: 0o700 });
  if (toml) writeFileSync(join(runeHome, 'rune.toml'), toml);
  const cwd = tempDir('rune-e2e-cwd-');
  return { home, runeHome, cwd, env: { ...cleanEnv(home), RUNE_HOME: runeHome } };
}

function rune(h: Home, args: string[], input = '', extraEnv: NodeJS.ProcessEnv = {}) {
  return runRune(['--base-url', mock.baseUrl, '--api-key', KEY, '--model', 'm', ...args], {
    input,
    cwd: h.cwd,
    env: { ...h.env, ...extraEnv },
  });
}

/** Every file under a folder, with its text. */
function allFiles(dir: string): { path: string; text: string }[] {
  const out: { path: string; text: string }[] = [];
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    if (statSync(path).size > 5_000_000) continue;
    out.push({ path, text: readFileSync(path, 'latin1') });
  }
  return out;
}

const toolMessages = (index: number) =>
  // biome-ignore lint/suspicious/noExplicitAny: wire JSON
  (mock.requests[index]!.body.messages as any[]).filter((m) => m.role === 'tool');

describe('pipe mode', () => {
  it('prints the answer alone on stdout and exits 0', async () => {
    mock.script([{ text: 'The answer is 4.' }]);
    const h = makeHome();
    const result = await rune(h, [], 'what is 2+2\n');
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('The answer is 4.\n');
    expect(result.code).toBe(0);
    const last = mock.requests[0]!.body.messages.at(-1);
    expect(last).toMatchObject({ role: 'user', content: 'what is 2+2' });
    expect(mock.requests[0]!.body.max_tokens ?? mock.requests[0]!.body.max_completion_tokens).toBe(8192);
  });

  it('--json prints one object with answer, status, steps, usage and tool_calls', async () => {
    mock.script([{ toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }] }, { text: '4' }]);
    const h = makeHome();
    const result = await rune(h, ['--json', 'what is 2+2']);
    expect(result.code).toBe(0);
    const json = JSON.parse(result.stdout);
    expect(json).toMatchObject({ answer: '4', status: 'FinalAnswer', steps: 2 });
    expect(json.usage).toEqual({ input_tokens: 20, output_tokens: 10, total_tokens: 30 });
    expect(json.tool_calls).toHaveLength(1);
    expect(json.tool_calls[0]).toMatchObject({ name: 'list_dir', decision: 'allow', is_error: false });
  });

  it('joins the prompt from arguments and stdin', async () => {
    mock.script([{ text: 'looks fine' }]);
    const h = makeHome();
    const result = await rune(h, ['review', 'this'], 'diff --git a/x b/x\n+new line\n');
    expect(result.code).toBe(0);
    expect(mock.requests[0]!.body.messages.at(-1).content).toBe(
      'review this\n\ndiff --git a/x b/x\n+new line',
    );
  });

  it('an execute_cmd round trip puts the command output into the next request', async () => {
    mock.script([
      { toolCalls: [{ name: 'execute_cmd', arguments: { cmd: 'echo hi' } }] },
      { text: 'it said hi' },
    ]);
    const h = makeHome('[policy]\nallowed_commands = ["echo"]\n');
    const result = await rune(h, ['run echo hi']);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('it said hi\n');
    const tool = toolMessages(1)[0];
    expect(tool.content, result.stderr).toContain('exit code: 0');
    expect(tool.content).toContain('stdout:\nhi');
    // The tool trace went to stderr, one line for the call.
    expect(result.stderr).toMatch(/execute_cmd cmd="echo hi" \| allowed/);
  });

  it('an execute_cmd round trip under --unrestricted: the sandboxed output reaches the model', async () => {
    mock.script([
      { toolCalls: [{ name: 'execute_cmd', arguments: { cmd: 'echo hi; echo err >&2; exit 3' } }] },
      { text: 'ok' },
    ]);
    const h = makeHome();
    const result = await rune(h, ['--unrestricted', '--json', 'run it']);
    expect(result.code).toBe(0);
    const tool = toolMessages(1)[0];
    expect(tool.content, result.stderr).toContain('exit code: 3');
    expect(tool.content).toContain('stdout:\nhi');
    expect(tool.content).toContain('stderr:\nerr');
    const call = JSON.parse(result.stdout).tool_calls[0];
    expect(call).toMatchObject({ name: 'execute_cmd', decision: 'allow', is_error: true });
    // Each result says which sandbox layers were applied, applied or not.
    expect(call.layers.length).toBeGreaterThan(0);
  });

  it('fetch_url reads a local page only when its host is listed, as text', async () => {
    const { createServer } = await import('node:http');
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html><body><h1>Docs</h1><p>The port is <b>8080</b>.</p><script>x()</script></body></html>');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/page`;
    try {
      const step = { toolCalls: [{ name: 'fetch_url', arguments: { url } }] };
      mock.script([step, { text: 'blocked' }, step, { text: '8080' }]);
      const closed = await rune(makeHome(), ['--json', 'read the docs']);
      expect(JSON.parse(closed.stdout).tool_calls[0].decision).toBe('deny');
      const open = await rune(makeHome('[policy]\nallowed_domains = ["127.0.0.1"]\n'), ['read the docs']);
      expect(open.code).toBe(0);
      const tool = toolMessages(3)[0];
      expect(tool.content, open.stderr).toMatch(/The port is 8080\./);
      expect(tool.content).not.toContain('x()');
    } finally {
      server.close();
    }
  });

  it('a command outside allowed_commands is blocked and the model is told why', async () => {
    mock.script([
      { toolCalls: [{ name: 'execute_cmd', arguments: { cmd: 'touch /tmp/rune-should-not-exist' } }] },
      { text: 'blocked' },
    ]);
    const h = makeHome();
    const result = await rune(h, ['--json', 'touch a file']);
    expect(result.code).toBe(0);
    expect(toolMessages(1)[0].content).toMatch(/blocked by policy/);
    expect(JSON.parse(result.stdout).tool_calls[0].decision).toBe('deny');
  });

  it('--verbose makes stderr NDJSON only: the tool trace and the stop message are records too', async () => {
    mock.setFallback({ toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }] });
    const h = makeHome();
    const result = await rune(h, ['--verbose', '--max-steps', '2', 'list']);
    expect(result.code).toBe(4);
    const records = result.stderr
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(records.find((r) => r.event === 'cli.tool_call').message).toMatch(
      /^> list_dir path="\." \| allowed/,
    );
    expect(records.at(-1)).toMatchObject({ level: 'error', event: 'cli.run_end', status: 'MaxSteps' });
    // A usage error is a record as well.
    const usage = await rune(h, ['--verbose', '--max-steps', 'many', 'list']);
    expect(usage.code).toBe(2);
    expect(JSON.parse(usage.stderr.trim())).toMatchObject({
      level: 'error',
      event: 'cli.failed',
      code: 'USAGE',
    });
  });

  it('--yes under the default allowlist approves what the lists do not cover; the floor still holds', async () => {
    const h = makeHome();
    mkdirSync(join(h.home, '.ssh'), { recursive: true });
    writeFileSync(join(h.home, '.ssh', 'id_rsa'), 'PRIVATE');
    const calls = {
      toolCalls: [
        { name: 'write_file', arguments: { path: 'out.txt', content: 'written' } },
        { name: 'read_file', arguments: { path: join(h.home, '.ssh', 'id_rsa') } },
      ],
    };
    mock.script([calls, { text: 'done' }, calls, { text: 'done' }]);
    const without = await rune(h, ['--json', 'write it']);
    expect(JSON.parse(without.stdout).tool_calls.map((c: { rule: string }) => c.rule)).toEqual([
      'path.not-allowed',
      'floor',
    ]);
    const approved = await rune(h, ['--json', '--yes', 'write it']);
    expect(JSON.parse(approved.stdout).tool_calls.map((c: { rule: string }) => c.rule)).toEqual([
      'flag.yes',
      'floor',
    ]);
    expect(readFileSync(join(h.cwd, 'out.txt'), 'utf8')).toBe('written');
    const contradiction = await rune(h, ['--policy', 'allowlist', '--yes', 'write it']);
    expect(contradiction.code).toBe(2);
    expect(contradiction.stderr).toContain(
      '--yes approves what confirm mode would ask, and --policy allowlist asks nothing',
    );
  });

  it('a malformed tool call is an error the model reads, not a crash', async () => {
    mock.script([
      { toolCalls: [{ name: 'read_file', arguments: '{"path": ' }] },
      { toolCalls: [{ name: 'read_file', arguments: { path: 42 } }] },
      { text: 'gave up' },
    ]);
    const h = makeHome();
    const result = await rune(h, ['read it']);
    expect(result.code).toBe(0);
    expect(toolMessages(1)[0].content).toMatch(/not valid JSON/);
    expect(toolMessages(2).at(-1).content).toMatch(/invalid arguments: path/);
  });

  it('--output ndjson prints one event per line, ending with run_end', async () => {
    mock.script([{ toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }] }, { text: 'done' }]);
    const h = makeHome();
    const result = await rune(h, ['--output', 'ndjson', 'list']);
    expect(result.code).toBe(0);
    const events = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(events.map((e) => e.type)).toEqual([
      'run_start',
      'model_usage',
      'tool_call',
      'policy_decision',
      'tool_result',
      'text',
      'model_usage',
      'run_end',
    ]);
    expect(events.at(-1)).toMatchObject({ status: 'FinalAnswer', answer: 'done' });
    // One spelling for every event (camelCase, as run_start and usage have it).
    expect(events.at(-1).sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(events.at(-1).sessionId).toBe(events[0].sessionId);
  });

  it('--output ndjson streams the answer as text events that join to it, a key split across them redacted', async () => {
    const answer = `The answer is 4.\nThe key you gave is ${KEY} and stays secret.`;
    mock.script([{ text: answer, chunkSize: 3 }]);
    const h = makeHome();
    const result = await rune(h, ['--output', 'ndjson', 'what is 2+2']);
    expect(result.code).toBe(0);
    const events = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    const texts = events.filter((e) => e.type === 'text');
    // Streamed as it arrived, not as one block at the end.
    expect(texts.length).toBeGreaterThan(5);
    for (const e of texts) expect(Object.keys(e).sort()).toEqual(['delta', 'type']);
    const joined = texts.map((e) => e.delta).join('');
    const end = events.at(-1);
    expect(end).toMatchObject({ type: 'run_end', status: 'FinalAnswer' });
    expect(joined).toBe(end.answer);
    expect(joined).toMatch(/^The answer is 4\.\nThe key you gave is \S+ and stays secret\.$/);
    // Every text event comes before the step's model_usage and the run_end.
    expect(events.findLastIndex((e) => e.type === 'text')).toBeLessThan(
      events.findIndex((e) => e.type === 'model_usage'),
    );
    expect(result.stdout).not.toContain(KEY);
    expect(result.stdout).not.toContain(KEY.slice(0, 12));
  });
});

describe('limits and stop reasons', () => {
  const alwaysTool = { toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }] };

  it('--max-steps 3 against a model that always calls a tool: exactly 3 calls, the last without tools, exit 4', async () => {
    mock.setFallback(alwaysTool);
    const h = makeHome();
    const result = await rune(h, ['--max-steps', '3', 'loop forever'], '');
    expect(result.code).toBe(4);
    // Two tool steps, then the third and last step withdraws the tools and asks for an answer: a
    // limit that stopped early (or never) fails here, not only one that overshoots 4 calls.
    expect(mock.requests).toHaveLength(3);
    expect(mock.requests[1]!.body.tools.length).toBeGreaterThan(0);
    expect(mock.requests.at(-1)!.body.tools ?? []).toEqual([]);
    expect(result.stderr).toMatch(/step limit/);
  });

  it('--max-steps 3: an answer in the answer-now round ends with exit 0', async () => {
    mock.script([alwaysTool, alwaysTool, { text: 'best effort answer' }]);
    const h = makeHome();
    const result = await rune(h, ['--max-steps', '3', 'loop']);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('best effort answer\n');
  });

  it('--token-budget against a model that always calls a tool: exit 5 without hanging', async () => {
    mock.setFallback({ ...alwaysTool, usage: { input: 400, output: 100 } });
    const h = makeHome();
    const result = await rune(h, ['--token-budget', '1000', 'spend tokens']);
    expect(result.code).toBe(5);
    // 500 tokens a call: the second call reaches the budget of 1000, then the answer-now round.
    expect(mock.requests).toHaveLength(3);
    expect(mock.requests.at(-1)!.body.tools ?? []).toEqual([]);
  });

  it('a provider that refuses the key exits 7 and names the provider, not the key', async () => {
    mock.setFallback({ status: 401, text: 'invalid api key' });
    const h = makeHome();
    const result = await rune(h, ['hi']);
    expect(result.code).toBe(7);
    expect(result.stderr).not.toContain(KEY);
    expect(result.stderr.length).toBeGreaterThan(0);
  });

  it('a provider that keeps failing exits 6', async () => {
    mock.setFallback({ status: 400, text: 'bad request' });
    const h = makeHome();
    const result = await rune(h, ['hi']);
    expect(result.code).toBe(6);
  });

  it('the whole-run timeout exits 10', async () => {
    mock.setFallback({ hang: true });
    const h = makeHome();
    const result = await rune(h, ['--timeout', '1', 'hang']);
    expect(result.code).toBe(10);
    expect(result.stderr).toMatch(/did not finish within 1 s/);
  });

  it('Ctrl-C (SIGINT) during a model call exits 130', async () => {
    mock.setFallback({ hang: true });
    const h = makeHome();
    const child = spawn(
      requireBinary(),
      ['--base-url', mock.baseUrl, '--api-key', KEY, '--model', 'm', 'hang'],
      { cwd: h.cwd, env: h.env, stdio: ['pipe', 'pipe', 'pipe'] },
    );
    child.stdin.end();
    // Wait until the request reached the model, then interrupt.
    for (let i = 0; i < 200 && mock.requests.length === 0; i++) await new Promise((r) => setTimeout(r, 25));
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.kill('SIGINT');
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
    expect(code).toBe(130);
    expect(stderr).toMatch(/interrupted|cancelled/);
  });

  it('SIGTERM during a model call exits 143', async () => {
    mock.setFallback({ hang: true });
    const h = makeHome();
    const child = spawn(
      requireBinary(),
      ['--base-url', mock.baseUrl, '--api-key', KEY, '--model', 'm', 'hang'],
      {
        cwd: h.cwd,
        env: h.env,
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    child.stdin.end();
    for (let i = 0; i < 200 && mock.requests.length === 0; i++) await new Promise((r) => setTimeout(r, 25));
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.kill('SIGTERM');
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
    expect(code).toBe(143);
    // Said as what happened: a SIGTERM is not a person's Ctrl-C.
    expect(stderr).toMatch(/stopped by SIGTERM/);
    expect(stderr).not.toMatch(/interrupted|cancelled/);
  });

  it('no prompt on a non-terminal stdin is a usage error (exit 2), never a hang', async () => {
    const h = makeHome();
    const result = await rune(h, [], '');
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/no prompt/);
  });

  it('a bad flag value exits 2 like every usage error, and names the flag', async () => {
    const h = makeHome();
    for (const args of [
      ['--max-steps', 'many', 'hi'],
      ['--sandbox', 'foo', 'hi'],
      ['--output', 'xml', 'hi'],
    ]) {
      const result = await rune(h, args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).toContain(args[0]);
    }
    expect(mock.requests).toHaveLength(0);
  });

  it('flags that exclude each other say why and what to do (exit 2)', async () => {
    const h = makeHome();
    const both = await rune(h, ['--system-prompt', 'a', '--system-prompt-file', 'b.md', 'hi']);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/cannot be used together: both replace the system prompt; give one of them/);
    const formats = await rune(h, ['--json', '--output', 'ndjson', 'hi']);
    expect(formats.code).toBe(2);
    expect(formats.stderr).toMatch(/cannot be used together: each is a whole output format; choose one/);
  });

  it('a --system-prompt-file or -c FILE that cannot be read exits 12 (I/O), naming the file', async () => {
    const h = makeHome();
    const prompt = await rune(h, ['--system-prompt-file', 'missing.md', 'hi']);
    expect(prompt.code).toBe(12);
    expect(prompt.stderr).toMatch(/--system-prompt-file: cannot read missing\.md: ENOENT; check the path/);
    const config = await rune(h, ['-c', join(h.cwd, 'missing.toml'), 'hi']);
    expect(config.code).toBe(12);
    expect(config.stderr).toMatch(/missing\.toml: cannot read: .*; check the path given with --config/);
    expect(mock.requests).toHaveLength(0);
  });
});

describe('secrets and sessions', () => {
  it('the API key appears nowhere: stdout, stderr, traces, the session store', async () => {
    mock.script([
      { toolCalls: [{ name: 'execute_cmd', arguments: { cmd: 'echo "key=$RUNE_API_KEY"; env' } }] },
      { text: `here is your key: ${KEY}` },
    ]);
    const h = makeHome('[policy]\nallowed_commands = ["echo", "env"]\n');
    const traceDir = join(h.cwd, 'traces');
    const result = await rune(h, ['--trace', traceDir, '--json', 'leak the key'], '', { RUNE_API_KEY: KEY });
    expect(result.code).toBe(0);
    expect(result.stdout).not.toContain(KEY);
    expect(result.stderr).not.toContain(KEY);
    // The tool process never saw it.
    expect(toolMessages(1)[0].content).not.toContain(KEY);
    const traces = allFiles(traceDir);
    expect(traces).toHaveLength(1);
    expect(JSON.parse(traces[0]!.text)).toMatchObject({ status: 'FinalAnswer', steps: 2 });
    const stored = allFiles(h.runeHome);
    expect(stored.some((f) => f.path.includes('sessions'))).toBe(true);
    for (const file of [...traces, ...stored]) expect(file.text, file.path).not.toContain(KEY);
  });

  it('--resume last continues the stored conversation', async () => {
    mock.script([{ text: 'My name is Rune.' }, { text: 'I said Rune.' }]);
    const h = makeHome();
    const first = await rune(h, ['what is your name?']);
    expect(first.code).toBe(0);
    const second = await rune(h, ['--resume', 'last', 'what did you say?']);
    expect(second.code).toBe(0);
    const contents = mock.requests[1]!.body.messages.map((m: { content: string }) => m.content);
    expect(contents).toContain('what is your name?');
    expect(contents).toContain('My name is Rune.');
    expect(contents.at(-1)).toBe('what did you say?');
    const list = await runRune(['sessions'], { cwd: h.cwd, env: h.env });
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/what is your name\?/);
  });

  it('a run that never got a model answer is not stored, so --resume last picks the last real one', async () => {
    mock.script([
      { status: 401, text: 'invalid api key' },
      { text: 'My name is Rune.' },
      { status: 401, text: 'invalid api key' },
      { text: 'I said Rune.' },
    ]);
    const h = makeHome();
    // A failed first run leaves nothing to resume.
    const failed = await rune(h, ['first try']);
    expect(failed.code).not.toBe(0);
    const none = await runRune(['sessions', '--json'], { cwd: h.cwd, env: h.env });
    expect(JSON.parse(none.stdout)).toEqual([]);

    expect((await rune(h, ['what is your name?'])).code).toBe(0);
    expect((await rune(h, ['second try'])).code).not.toBe(0);
    const resumed = await rune(h, ['--resume', 'last', 'what did you say?']);
    expect(resumed.code).toBe(0);
    const contents = mock.requests[3]!.body.messages.map((m: { content: string }) => m.content);
    expect(contents).toContain('My name is Rune.');
    expect(contents).not.toContain('second try');
    const list = await runRune(['sessions', '--json'], { cwd: h.cwd, env: h.env });
    const sessions = JSON.parse(list.stdout) as { title: string; status: string; runs: number }[];
    expect(sessions).toHaveLength(1);
    expect(sessions[0]).toMatchObject({ title: 'what is your name?', status: 'FinalAnswer', runs: 2 });
  });

  it('compacts a resumed conversation that nears context_window before the next request', async () => {
    mock.script([{ text: 'A'.repeat(3000) }, { text: 'SHORT SUMMARY' }, { text: 'after compaction' }]);
    const h = makeHome();
    expect((await rune(h, ['tell me a long story'])).code).toBe(0);
    const second = await rune(h, ['--resume', 'last', '--output', 'ndjson', 'and now?'], '', {
      RUNE_CONTEXT_WINDOW: '1000',
    });
    expect(second.code).toBe(0);
    const events = second.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(events.find((e) => e.type === 'compaction')).toMatchObject({ type: 'compaction' });
    // The summary request offers no tools; the next request carries the summary, not the story.
    expect(mock.requests[1]!.body.tools ?? []).toEqual([]);
    const contents = mock.requests[2]!.body.messages.map((m: { content: string }) => m.content).join('\n');
    expect(contents).toContain('SHORT SUMMARY');
    expect(contents).not.toContain('A'.repeat(3000));
  });

  it('--resume with an unknown id exits 13 and shows how to resume the last one with a prompt', async () => {
    const h = makeHome();
    const result = await rune(h, ['--resume', 'deadbeef', 'hi']);
    expect(result.code).toBe(13);
    expect(result.stderr).toContain('no stored session "deadbeef"');
    expect(result.stderr).toContain('rune --resume last "PROMPT"');
    expect(mock.requests).toHaveLength(0);
  });

  it('--resume "a prompt" resumes the last session with that prompt, not as a session id', async () => {
    mock.script([{ text: 'My name is Rune.' }, { text: 'I said Rune.' }]);
    const h = makeHome();
    expect((await rune(h, ['what is your name?'])).code).toBe(0);
    const second = await rune(h, ['--resume', 'what did you say?']);
    expect(second.stderr).toBe('');
    expect(second.code).toBe(0);
    expect(second.stdout).toBe('I said Rune.\n');
    const contents = mock.requests[1]!.body.messages.map((m: { content: string }) => m.content);
    expect(contents).toContain('My name is Rune.');
    expect(contents.at(-1)).toBe('what did you say?');
  });
});
