// A Concourse step's result says how the model's answer ended (docs/adr/0033-run-outcomes.md): an
// `out` step of the built binary on each of the four wires, against a server speaking its exact
// stream format — the end, the token limit with text and inside a tool call, a refusal, no end
// event, an error event: the exit code, the build log's message, and stop_reason in the metadata.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type MockLlm, startMockLlm } from '../helpers/mock-llm.ts';
import { tempDir } from '../helpers/rune.ts';
import {
  END_WORDS,
  LENGTH_WORDS,
  REFUSAL_WORDS,
  WIRE_LABELS,
  WIRES,
  type Wire,
  wireSetup,
} from '../helpers/wires.ts';
import { resourceDir } from './concourse-harness.ts';

let mock: MockLlm;
const resource = resourceDir();
beforeAll(async () => {
  mock = await startMockLlm();
});
afterAll(() => mock?.close());
beforeEach(() => mock.reset());

type Output = { version: Record<string, string>; metadata: { name: string; value: string }[] };

/** An `out` step on `wire` whose folder the policy lets the agent write (a call that ran would leave a file). */
async function put(wire: Wire, extra: Record<string, unknown> = {}) {
  const { key, baseUrl, env } = wireSetup(wire, mock);
  const src = tempDir('rune-outcomes-src-');
  const source = {
    api_key: key,
    ...(baseUrl ? { base_url: baseUrl } : {}),
    model: 'mock-model',
    policy: { allowed_paths_rw: [src] },
    ...extra,
  };
  const result = await resource.step('out', { source, params: { prompt: 'Do it.' } }, { folder: src, env });
  const output = () => JSON.parse(result.stdout) as Output;
  return { ...result, src, output };
}

describe.each(WIRES)('a Concourse out step on the %s wire', (wire) => {
  const label = WIRE_LABELS[wire];

  it('the end event: the step succeeds, stop_reason FinalAnswer', async () => {
    mock.script([{ text: 'All done.' }]);
    const result = await put(wire);
    expect(result.code, result.stderr).toBe(0);
    expect(result.output().metadata).toContainEqual({ name: 'stop_reason', value: 'FinalAnswer' });
  });

  it('the token limit with text, still cut after going on: exit 16, the source key named', async () => {
    mock.setFallback({ text: 'and on ', finishReason: 'length' });
    const result = await put(wire, { max_output_tokens: 40 });
    expect(result.code, result.stderr).toBe(16);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(
      `the answer was cut at the output token limit (source.max_output_tokens = 40; ${label}: ${LENGTH_WORDS[wire]}), 3 times in a row; raise source.max_output_tokens`,
    );
    expect(result.stderr).toContain('rune: partial answer:\nand on and on and on');
    expect(result.stderr).toMatch(/rune: OutputLimit after 3 step\(s\)/);
  });

  it('the token limit inside a tool call: the call never runs, the step goes on to its answer', async () => {
    mock.script([
      {
        text: 'Let me do that for you now.',
        toolCalls: [{ name: 'write_file', arguments: { path: 'proof.txt', content: 'x'.repeat(60) } }],
        finishReason: 'length',
      },
      { text: 'Not written.' },
    ]);
    const result = await put(wire);
    expect(result.code, result.stderr).toBe(0);
    expect(existsSync(join(result.src, 'proof.txt'))).toBe(false);
    // The model was told and asked again (Gemini, cut inside a call, sends none: an answer cut).
    expect(mock.requests).toHaveLength(2);
    expect(result.output().metadata).toContainEqual({ name: 'tool_calls', value: '0' });
  });

  it('a refusal: exit 17', async () => {
    mock.script([{ text: 'I cannot help with that.', finishReason: 'refusal' }]);
    const result = await put(wire);
    expect(result.code, result.stderr).toBe(17);
    expect(result.stderr).toContain(`the model refused to answer (${label}: ${REFUSAL_WORDS[wire]})`);
    expect(result.stderr).toMatch(/rune: Refused after 1 step\(s\)/);
  });

  it('no end event: retried, then exit 6 naming what the stream lacked', async () => {
    mock.setFallback({ text: 'Let me do that', omitEnd: true });
    const result = await put(wire);
    expect(result.code, result.stderr).toBe(6);
    expect(result.stderr).toContain(
      `${label} failed after 4 attempts: the answer stream ended without ${END_WORDS[wire]}: the connection was dropped or the server stopped mid-answer`,
    );
    expect(mock.requests).toHaveLength(4);
    expect(result.stderr).toMatch(/rune: Error after 1 step\(s\)/);
  });

  it('an error event: exit 6 with the server’s words', async () => {
    mock.script([
      {
        text: 'Let me',
        errorEvent: { message: 'the request is bad', type: 'invalid_request_error', code: 400 },
      },
    ]);
    const result = await put(wire);
    expect(result.code, result.stderr).toBe(6);
    expect(result.stderr).toMatch(
      new RegExp(`${label} failed: an error event in the answer stream: .*the request is bad`),
    );
  });
});
