// The stateless resource against the scripted model: check → in → out round trip, digests as
// versions, stdout one JSON value whatever tools print, the API key never in the build log.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type MockLlm, startMockLlm } from '../helpers/mock-llm.ts';
import { cleanEnv, tempDir } from '../helpers/rune.ts';
import { BUILD_ENV, BUILD_URL, protocolValue, resourceDir } from './concourse-harness.ts';

const KEY = 'sk-proj-statelessSecretKey0123456789abcd';
const resource = resourceDir();
let mock: MockLlm;

beforeAll(async () => {
  mock = await startMockLlm();
});
afterAll(async () => {
  await mock?.close();
});
beforeEach(() => {
  mock.script([]);
  mock.setFallback(undefined);
});

function source(extra: Record<string, unknown> = {}) {
  return {
    api_key: KEY,
    base_url: mock.baseUrl,
    model: 'mock-model',
    prompt: 'Summarise the weather.',
    ...extra,
  };
}

const sha = (text: string) => `sha256:${createHash('sha256').update(text).digest('hex')}`;
type Output = { version: Record<string, string>; metadata: { name: string; value: string }[] };
const meta = (output: Output, name: string) => output.metadata.find((m) => m.name === name)?.value;

describe('stateless check', () => {
  it('emits the digest of the answer, and only the given version while the answer stays the same', async () => {
    mock.script([{ text: 'Sunny.' }]);
    const first = await resource.step('check', { source: source(), version: null });
    expect(protocolValue(first)).toEqual([{ ref: sha('Sunny.') }]);
    expect(mock.requests[mock.requests.length - 1]?.body.messages.at(-1).content).toContain(
      'Summarise the weather.',
    );

    mock.script([{ text: 'Sunny.' }]);
    const same = await resource.step('check', { source: source(), version: { ref: sha('Sunny.') } });
    expect(protocolValue(same)).toEqual([{ ref: sha('Sunny.') }]);

    mock.script([{ text: 'Rain.' }]);
    const changed = await resource.step('check', { source: source(), version: { ref: sha('Sunny.') } });
    expect(protocolValue(changed)).toEqual([{ ref: sha('Rain.') }]);
  });

  it('fails the check when the model fails, with nothing on stdout', async () => {
    mock.script([{ status: 401, text: 'bad key' }]);
    const result = await resource.step('check', { source: source() });
    expect(result.code).toBe(7);
    expect(result.stdout).toBe('');
    expect(result.stderr).not.toContain(KEY);
    // The key came from the source, not from a command-line flag.
    expect(result.stderr).toContain('(key from source.api_key)');
    expect(result.stderr).not.toContain('--api-key');
  });

  it('names the source keys to set when the key or the model is missing, not the CLI flags', async () => {
    const { api_key: _key, base_url: _url, ...noKey } = source();
    const keyless = await resource.step('check', { source: noKey });
    expect(keyless.code).toBe(7);
    expect(keyless.stdout).toBe('');
    expect(keyless.stderr).toContain('set source.api_key (or source.base_url');
    expect(keyless.stderr).not.toContain('--api-key');
    const { model: _model, ...noModel } = source();
    const modelless = await resource.step('check', { source: noModel });
    expect(modelless.code).toBe(2);
    expect(modelless.stderr).toContain('no model is set: set source.model in the resource');
    expect(modelless.stderr).not.toContain(KEY);
  });
});

describe('stateless round trip', () => {
  it('check → in → out', async () => {
    mock.script([{ text: 'Answer one.' }]);
    const version = (
      protocolValue(await resource.step('check', { source: source() })) as Record<string, string>[]
    )[0]!;
    expect(version).toEqual({ ref: sha('Answer one.') });

    // in re-runs the prompt and writes the answer only when it is the version's own.
    mock.script([{ text: 'Answer one.' }, { text: 'Answer one.' }, { text: 'Answer two.' }]);
    const dest = tempDir('rune-in-');
    const got = protocolValue(
      await resource.step('in', { source: source(), version }, { folder: dest }),
    ) as Output;
    expect(got.version).toEqual(version);
    expect(meta(got, 'ref')).toBe(version.ref);
    expect(meta(got, 'answer')).toBe('Answer one.');
    expect(meta(got, 'prompt')).toBe('Summarise the weather.');
    expect(meta(got, 'tokens')).toBe('15');
    expect(readFileSync(join(dest, 'response.txt'), 'utf8')).toBe('Answer one.');
    const payload = JSON.parse(readFileSync(join(dest, 'payload.json'), 'utf8'));
    // Only what the version determines: no fresh timestamp, no usage of this particular run.
    expect(payload).toEqual({
      prompt: 'Summarise the weather.',
      response: 'Answer one.',
      ref: sha('Answer one.'),
      model: 'mock-model',
      timestamp: null,
      usage: null,
      stop_reason: 'FinalAnswer',
    });

    // Asked again for the same version: the same bytes, file for file.
    const again = tempDir('rune-in-');
    protocolValue(await resource.step('in', { source: source(), version }, { folder: again }));
    for (const file of ['response.txt', 'payload.json']) {
      expect(readFileSync(join(again, file)), file).toEqual(readFileSync(join(dest, file)));
    }

    // The prompt now answers otherwise: that version cannot be fetched, and in says so and fails.
    const gone = tempDir('rune-in-');
    const changed = await resource.step('in', { source: source(), version }, { folder: gone });
    expect(changed.code).toBe(13);
    expect(changed.stdout).toBe('');
    expect(changed.stderr).toContain(
      `in: version ${version.ref} cannot be fetched: source.prompt now answers ${sha('Answer two.')}, and the stateless resource keeps no answers`,
    );
    expect(changed.stderr).toMatch(/notes store \(source\.notes\)/);
    expect(readdirSync(gone)).toEqual([]);

    // out: cwd = src, prompt from a file of an input, the build's URL in metadata and never in the version.
    const src = tempDir('rune-out-');
    mkdirSync(join(src, 'repo'));
    writeFileSync(join(src, 'repo', 'ask.md'), 'Review this repository.');
    mock.script([{ text: 'Looks good.' }]);
    const put = await resource.step(
      'out',
      { source: source(), params: { prompt_file: 'repo/ask.md', append_system_prompt: 'Be brief.' } },
      { folder: src },
    );
    const out = protocolValue(put) as Output;
    expect(out.version).toEqual({ ref: sha('Looks good.') });
    expect(meta(out, 'build_url')).toBe(BUILD_URL);
    expect(meta(out, 'model')).toBe('mock-model');
    expect(meta(out, 'stop_reason')).toBe('FinalAnswer');
    expect(meta(out, 'steps')).toBe('1');
    expect(meta(out, 'tokens')).toBe('15');
    expect(meta(out, 'tool_calls')).toBe('0');
    expect(meta(out, 'answer')).toBe('Looks good.');
    expect(meta(out, 'prompt')).toBe('repo/ask.md');
    expect(JSON.stringify(out.version)).not.toContain('ci.example.com');
    expect(put.stderr).toContain('Looks good.');
    const request = mock.requests[mock.requests.length - 1]!.body;
    expect(request.messages.at(-1).content).toContain('Review this repository.');
    expect(request.messages[0].content).toContain('Be brief.');
  });
});

describe('stdout discipline', () => {
  it('stays one JSON value while a tool prints to stdout, and the key never reaches stderr', async () => {
    const src = tempDir('rune-out-');
    mock.script([
      {
        toolCalls: [{ name: 'execute_cmd', arguments: { cmd: `echo '{"not":"the answer"}'; echo ${KEY}` } }],
      },
      { text: `Done; the key was ${KEY}.` },
    ]);
    const put = await resource.step(
      'out',
      {
        // unrestricted: this is about where output goes, not about the policy (which still logs).
        source: source({ policy: { mode: 'unrestricted' }, debug: true }),
        params: { prompt: 'Print things.' },
      },
      { folder: src },
    );
    const out = protocolValue(put) as Output;
    expect(Object.keys(out)).toEqual(['version', 'metadata']);
    expect(put.stdout.trimEnd().split('\n')).toHaveLength(1);
    expect(meta(out, 'tool_calls')).toBe('1');
    // The command really ran and printed: the model got its output back.
    const toolMessage = mock.requests[mock.requests.length - 1]!.body.messages.find(
      (m: { role: string }) => m.role === 'tool',
    );
    expect(toolMessage.content).toContain('{"not":"the answer"}');
    expect(put.stderr).toContain('execute_cmd');
    expect(put.stderr).toContain('[REDACTED]');
    expect(put.stderr).not.toContain(KEY);
    expect(put.stdout).not.toContain(KEY);
  });
});

describe('policy in Concourse', () => {
  it.each(['allowlist', 'confirm'])(
    '%s: the put inputs are readable, anything else is refused, and nothing prompts',
    async (mode) => {
      const base = tempDir('rune-put-');
      const src = join(base, 'src');
      mkdirSync(join(src, 'repo'), { recursive: true });
      writeFileSync(join(src, 'repo', 'notes.txt'), 'input content 42');
      writeFileSync(join(base, 'beside.txt'), 'not an input');
      mock.script([
        {
          toolCalls: [
            { name: 'read_file', arguments: { path: 'repo/notes.txt' } },
            { name: 'read_file', arguments: { path: join(base, 'beside.txt') } },
          ],
        },
        { text: 'Read what I could.' },
      ]);
      const put = await resource.step(
        'out',
        { source: source({ policy: { mode } }), params: { prompt: 'Read.' } },
        { folder: src },
      );
      const out = protocolValue(put) as Output;
      expect(meta(out, 'tool_calls')).toBe('2');
      const tools = mock.requests[mock.requests.length - 1]!.body.messages.filter(
        (m: { role: string }) => m.role === 'tool',
      );
      expect(tools[0].content).toContain('input content 42');
      expect(tools[1].content).not.toContain('not an input');
      expect(tools[1].content).toMatch(/block|denied|not allowed/i);
      expect(put.stderr).toMatch(/blocked/);
      // The way out is named as a pipeline author writes it, never as a CLI flag.
      expect(tools[1].content).toContain(
        mode === 'allowlist'
          ? `(add '${join(base, 'beside.txt')}' to source.policy.allowed_files_ro to allow it)`
          : 'nobody can be asked in this mode (allow it in source.policy instead)',
      );
      expect(put.stderr).not.toMatch(/--yes|\[policy\]/);
    },
  );
});

describe('stopping a step', () => {
  it('SIGTERM ends a running check with 143 and nothing on stdout', async () => {
    mock.script([{ hang: true }]);
    const calls = mock.requests.length;
    const child = spawn(join(resource.dir, 'check'), [], {
      cwd: tempDir('rune-cwd-'),
      env: { ...cleanEnv(resource.home), ...BUILD_ENV },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    child.stdin.end(JSON.stringify({ source: source() }));
    while (mock.requests.length === calls) await new Promise((resolve) => setTimeout(resolve, 50));
    child.kill('SIGTERM');
    expect(await exited).toBe(143);
    expect(stdout).toBe('');
  });
});
