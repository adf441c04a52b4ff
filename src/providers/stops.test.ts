// How a stream ended, on each of the four wires (docs/adr/0033-run-outcomes.md): the scripted
// server speaks each wire's stream format; every end is a finish reason with the wire's own words,
// or a failure (no end event, an error event) retried as the network's.
import { describe, expect, it } from 'vitest';
import { useMockLlm } from '../../tests/helpers/mock-llm.ts';
import { LENGTH_WORDS, REFUSAL_WORDS, WIRES, type Wire, wireSetup } from '../../tests/helpers/wires.ts';
import { isRuneError, type RuneError } from '../core/errors.ts';
import { createProvider } from './index.ts';
import { memoryLogger, testConfig } from './test-support.ts';
import type { ChatRequest } from './types.ts';

const mock = useMockLlm();

function provider(wire: Wire) {
  const { key, baseUrl, env } = wireSetup(wire, mock);
  return createProvider({
    config: testConfig({ api_key: key, ...(baseUrl ? { base_url: baseUrl } : {}) }),
    apiKeyOrigin: 'flag',
    env,
    logger: memoryLogger(),
    sleep: async () => {},
  });
}

const request: ChatRequest = {
  model: 'm',
  messages: [{ role: 'user', content: 'hi' }],
  tools: [
    {
      name: 'write_file',
      description: 'write',
      parameters: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } } },
    },
  ],
  maxOutputTokens: 50,
};

const longCall = { name: 'write_file', arguments: { path: 'big.txt', content: 'x'.repeat(40) } };

async function failure(promise: Promise<unknown>): Promise<RuneError> {
  const error = await promise.catch((e: unknown) => e);
  if (!isRuneError(error)) throw new Error(`expected a RuneError, got ${String(error)}`);
  return error;
}

describe.each(WIRES)('%s wire: how the stream ended', (wire) => {
  it('its end event: stop', async () => {
    mock.script([{ text: 'all done' }]);
    expect(await provider(wire).complete(request)).toMatchObject({
      content: 'all done',
      finishReason: 'stop',
    });
  });

  it('the token limit with text: length, the text kept', async () => {
    mock.script([{ text: 'half an ans', finishReason: 'length' }]);
    expect(await provider(wire).complete(request)).toMatchObject({
      content: 'half an ans',
      finishReason: 'length',
      stopDetail: LENGTH_WORDS[wire],
    });
  });

  it('the token limit inside a tool call: length, the call unfinished (Gemini sends none)', async () => {
    mock.script([{ text: 'Let me do that for you now.', toolCalls: [longCall], finishReason: 'length' }]);
    const result = await provider(wire).complete(request);
    expect(result).toMatchObject({ content: 'Let me do that for you now.', finishReason: 'length' });
    if (wire === 'gemini') expect(result.toolCalls).toEqual([]);
    else expect(() => JSON.parse(result.toolCalls[0]!.arguments)).toThrow();
  });

  it('a refusal: refusal, in the wire’s own words', async () => {
    mock.script([{ text: 'I cannot help with that.', finishReason: 'refusal' }]);
    expect(await provider(wire).complete(request)).toMatchObject({
      content: 'I cannot help with that.',
      finishReason: 'refusal',
      stopDetail: REFUSAL_WORDS[wire],
    });
  });

  it('no end event: a failure, retried like the network’s, then PROVIDER_ERROR', async () => {
    mock.setFallback({ text: 'Let me do that for you now.', omitEnd: true });
    const error = await failure(provider(wire).complete(request));
    expect(error.code).toBe('PROVIDER_ERROR');
    expect(error.message).toMatch(
      /after 4 attempts: the answer stream ended without .*: the connection was dropped/,
    );
    expect(mock.requests).toHaveLength(4);
  });

  it('no end event after text reached the caller: not retried (it would be shown twice)', async () => {
    mock.script([{ text: 'Let me do that for you now.', omitEnd: true }, { text: 'never' }]);
    const seen: string[] = [];
    const error = await failure(provider(wire).complete({ ...request, onText: (d) => seen.push(d) }));
    expect(error.message).toMatch(/the answer stream ended without/);
    expect(seen.join('')).toBe('Let me do that for you now.');
    expect(mock.requests).toHaveLength(1);
  });

  it('a dropped connection before any text is retried, and the retry answers', async () => {
    mock.script([{ text: 'whole', cutAfter: 1 }, { text: 'whole' }]);
    expect(await provider(wire).complete(request)).toMatchObject({ content: 'whole', finishReason: 'stop' });
    expect(mock.requests).toHaveLength(2);
  });

  it('an error event: an overload is retried, a refused request is not', async () => {
    mock.script([{ text: 'partial', errorEvent: { message: 'Overloaded' } }, { text: 'second try' }]);
    expect(await provider(wire).complete(request)).toMatchObject({ content: 'second try' });
    expect(mock.requests).toHaveLength(2);
    mock.reset();
    mock.script([
      { errorEvent: { message: 'bad request', type: 'invalid_request_error', code: 400 } },
      { text: 'never' },
    ]);
    const error = await failure(provider(wire).complete(request));
    expect(error.message).toMatch(/: an error event in the answer stream: .*bad request/);
    expect(mock.requests).toHaveLength(1);
  });
});

describe('Copilot stream quirks', () => {
  it('takes tool calls from a second choice, and [DONE] without a finish_reason as the end', async () => {
    mock.script([
      { text: 'Writing.', toolCalls: [longCall] },
      { text: 'Done.', omitFinish: true },
    ]);
    const copilot = provider('copilot');
    const result = await copilot.complete(request);
    expect(mock.requests[0]!.headers['copilot-integration-id']).toBe('vscode-chat');
    expect(result).toMatchObject({ content: 'Writing.', finishReason: 'tool_calls' });
    expect(JSON.parse(result.toolCalls[0]!.arguments)).toEqual(longCall.arguments);
    expect(await copilot.complete(request)).toMatchObject({
      content: 'Done.',
      finishReason: 'stop',
      stopDetail: '[DONE] without a finish_reason',
    });
    expect(mock.requests).toHaveLength(2);
  });
});
