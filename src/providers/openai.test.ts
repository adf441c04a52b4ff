import { describe, expect, it } from 'vitest';
import { useMockLlm } from '../../tests/helpers/mock-llm.ts';
import { isRuneError } from '../core/errors.ts';
import { createProvider } from './index.ts';
import { memoryLogger, testConfig } from './test-support.ts';
import type { ChatRequest } from './types.ts';

const mock = useMockLlm();

const tools = [
  {
    name: 'execute_cmd',
    description: 'run a command',
    parameters: { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] },
  },
];

function request(extra: Partial<ChatRequest> = {}): ChatRequest {
  return { model: 'm', messages: [{ role: 'user', content: 'hi' }], tools, maxOutputTokens: 321, ...extra };
}

function provider(apiKey = 'sk-test-openai-key-123456', extra: Parameters<typeof testConfig>[0] = {}) {
  return createProvider({
    config: testConfig({ base_url: mock.baseUrl, api_key: apiKey, ...extra }),
    apiKeyOrigin: 'flag',
    env: {},
    logger: memoryLogger(),
    sleep: async () => {},
  });
}

describe('OpenAI-compatible provider', () => {
  it('streams text to onText and returns it with usage and the request carrying max_tokens', async () => {
    mock.script([{ text: 'four, of course', usage: { input: 12, output: 7 } }]);
    const deltas: string[] = [];
    const result = await provider().complete(request({ onText: (delta) => deltas.push(delta) }));
    expect(result.content).toBe('four, of course');
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe('four, of course');
    expect(result.usage).toEqual({ inputTokens: 12, outputTokens: 7, totalTokens: 19 });
    expect(result.finishReason).toBe('stop');
    const sent = mock.requests[0]!;
    expect(sent.body.max_tokens).toBe(321);
    expect(sent.body.stream).toBe(true);
    expect(sent.body.stream_options).toEqual({ include_usage: true });
    expect(sent.headers.authorization).toBe('Bearer sk-test-openai-key-123456');
    expect(sent.body.tools[0]).toEqual({ type: 'function', function: tools[0] && { ...tools[0] } });
  });

  it('assembles tool calls whose arguments arrive split across chunks', async () => {
    mock.script([
      {
        toolCalls: [
          { id: 'call_a', name: 'execute_cmd', arguments: { cmd: 'echo hi && ls -la /tmp' } },
          { id: 'call_b', name: 'list_dir', arguments: { path: '.' } },
        ],
        chunkSize: 3,
      },
    ]);
    const result = await provider().complete(request());
    expect(result.finishReason).toBe('tool_calls');
    expect(result.toolCalls).toEqual([
      { id: 'call_a', name: 'execute_cmd', arguments: '{"cmd":"echo hi && ls -la /tmp"}' },
      { id: 'call_b', name: 'list_dir', arguments: '{"path":"."}' },
    ]);
  });

  it('sends tool results back in the OpenAI shape and omits tools on the answer-now round', async () => {
    mock.script([{ text: 'done' }]);
    await provider().complete(
      request({
        tools: [],
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'user', content: 'run it' },
          {
            role: 'assistant',
            content: '',
            toolCalls: [{ id: 'c1', name: 'execute_cmd', arguments: '{"cmd":"echo hi"}' }],
          },
          { role: 'tool', toolCallId: 'c1', name: 'execute_cmd', content: 'hi\n' },
        ],
      }),
    );
    const body = mock.requests[0]!.body;
    expect(body.tools).toBeUndefined();
    expect(body.messages).toEqual([
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'run it' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'execute_cmd', arguments: '{"cmd":"echo hi"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'hi\n' },
    ]);
  });

  it('retries a 429 exactly once when Retry-After says 1 second', async () => {
    mock.script([{ status: 429, headers: { 'retry-after': '1' } }, { text: 'ok' }]);
    const waits: number[] = [];
    const p = createProvider({
      config: testConfig({ base_url: mock.baseUrl, api_key: 'sk-test-key-aaaaaaaa' }),
      apiKeyOrigin: 'flag',
      env: {},
      logger: memoryLogger(),
      sleep: async (ms) => {
        waits.push(ms);
      },
    });
    const result = await p.complete(request());
    expect(result.content).toBe('ok');
    expect(mock.requests).toHaveLength(2);
    expect(waits).toEqual([1000]);
  });

  it('waits out a real Retry-After: 1 with the default sleep', async () => {
    mock.script([{ status: 429, headers: { 'retry-after': '1' } }, { text: 'later' }]);
    const p = createProvider({
      config: testConfig({ base_url: mock.baseUrl, api_key: 'sk-test-key-aaaaaaaa' }),
      apiKeyOrigin: 'flag',
      env: {},
      logger: memoryLogger(),
    });
    expect((await p.complete(request())).content).toBe('later');
    expect(mock.requests).toHaveLength(2);
  });

  it('gives up after the bounded number of attempts on 5xx and keeps the cause', async () => {
    mock.setFallback({ status: 503, text: 'upstream down' });
    try {
      const error = await provider()
        .complete(request())
        .catch((e: unknown) => e);
      expect(isRuneError(error) && error.code).toBe('PROVIDER_ERROR');
      expect((error as Error).message).toMatch(/after 4 attempts: HTTP 503: upstream down/);
      expect((error as Error).cause).toBeInstanceOf(Error);
      expect(mock.requests).toHaveLength(4);
    } finally {
      mock.setFallback(undefined);
    }
  });

  it('retries a dropped connection', async () => {
    mock.script([{ disconnect: true }, { text: 'back' }]);
    expect((await provider().complete(request())).content).toBe('back');
    expect(mock.requests).toHaveLength(2);
  });

  it('a 404 without a message says the status line once and what to check, not "HTTP 404: HTTP 404"', async () => {
    mock.script([{ status: 404, body: {} }]);
    const error = await provider()
      .complete(request())
      .catch((e: unknown) => e);
    expect(isRuneError(error) && error.code).toBe('PROVIDER_ERROR');
    const message = (error as Error).message;
    expect(message).toMatch(
      /failed: HTTP 404: [^;]+; check the model name \(--model\) and the endpoint \(--base-url\)$/,
    );
    expect(message).not.toMatch(/HTTP 404: HTTP 404/);
  });

  it('does not retry other 4xx errors', async () => {
    mock.script([{ status: 400, text: 'bad tool schema' }]);
    const error = await provider()
      .complete(request())
      .catch((e: unknown) => e);
    expect(isRuneError(error) && error.code).toBe('PROVIDER_ERROR');
    expect((error as Error).message).toContain('bad tool schema');
    expect(mock.requests).toHaveLength(1);
  });

  it('turns 401 into PROVIDER_AUTH naming the provider and the key source, never the key', async () => {
    const key = 'sk-secret-never-show-0123456789';
    mock.script([{ status: 401, text: `Incorrect API key provided: ${key}` }]);
    const error = await provider(key)
      .complete(request())
      .catch((e: unknown) => e);
    expect(isRuneError(error) && error.code).toBe('PROVIDER_AUTH');
    const text = [
      (error as Error).message,
      ...(isRuneError(error) ? error.details : []),
      String((error as Error).cause),
    ].join('\n');
    expect(text).toContain('OpenAI-compatible provider');
    expect(text).toContain('--api-key');
    expect(text).not.toContain(key);
    expect(mock.requests).toHaveLength(1);
  });

  it('times out a request that never answers, retries, then reports the timeout', async () => {
    mock.setFallback({ hang: true });
    try {
      const error = await provider('sk-test-key-aaaaaaaa', { request_timeout_secs: 1 })
        .complete(request())
        .catch((e: unknown) => e);
      expect(isRuneError(error) && error.code).toBe('PROVIDER_ERROR');
      expect((error as Error).message).toMatch(/no answer within 1 s/);
      expect(mock.requests.length).toBe(4);
    } finally {
      mock.setFallback(undefined);
    }
  });

  it('stops at once when the caller aborts, without retrying', async () => {
    mock.script([{ hang: true }]);
    const controller = new AbortController();
    const pending = provider().complete(request({ signal: controller.signal }));
    setTimeout(() => controller.abort(), 50);
    const error = await pending.catch((e: unknown) => e);
    expect(isRuneError(error) && error.code).toBe('INTERRUPTED');
    expect(mock.requests).toHaveLength(1);
  });

  it('does not retry once text has been streamed (it would be shown twice)', async () => {
    mock.script([{ text: 'partial answer', cutAfter: 3 }, { text: 'never asked for' }]);
    const deltas: string[] = [];
    const error = await provider()
      .complete(request({ onText: (d) => deltas.push(d) }))
      .catch((e: unknown) => e);
    expect(isRuneError(error) && error.code).toBe('PROVIDER_ERROR');
    expect(deltas.join('')).toBe('partial ');
    expect(mock.requests).toHaveLength(1);
  });

  it('retries a stream broken before any text', async () => {
    mock.script([{ text: 'whole answer', cutAfter: 1 }, { text: 'whole answer' }]);
    const deltas: string[] = [];
    const result = await provider().complete(request({ onText: (d) => deltas.push(d) }));
    expect(result.content).toBe('whole answer');
    expect(deltas.join('')).toBe('whole answer');
    expect(mock.requests).toHaveLength(2);
  });
});

describe('OpenRouter', () => {
  it('is picked by the sk-or- prefix and speaks the OpenAI wire with its attribution headers', async () => {
    mock.script([{ text: 'routed' }]);
    const p = createProvider({
      config: testConfig({ base_url: mock.baseUrl, api_key: 'sk-or-v1-test-0123456789abcdef' }),
      apiKeyOrigin: 'flag',
      env: {},
      logger: memoryLogger(),
    });
    expect(p.name).toBe('openrouter');
    expect((await p.complete(request())).content).toBe('routed');
    const sent = mock.requests[0]!;
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.headers['x-title']).toBe('rune');
    expect(sent.headers['http-referer']).toMatch(/^https:\/\//);
    expect(sent.body.max_tokens).toBe(321);
  });
});

describe('mock model server, non-streaming', () => {
  const post = async (path: string, body: unknown) => {
    const response = await fetch(`${mock.url}${path}`, { method: 'POST', body: JSON.stringify(body) });
    // biome-ignore lint/suspicious/noExplicitAny: wire JSON read loosely in assertions
    return { status: response.status, json: (await response.json()) as Record<string, any> };
  };

  it('answers each wire in its own JSON shape from the same queue', async () => {
    const step = {
      text: 'hi',
      toolCalls: [{ id: 'x1', name: 'f', arguments: { a: 1 } }],
      usage: { input: 3, output: 2 },
    };
    mock.script([step, step, step]);
    const openai = await post('/v1/chat/completions', { model: 'm' });
    expect(openai.json.choices[0].message).toEqual({
      role: 'assistant',
      content: 'hi',
      tool_calls: [{ id: 'x1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
    });
    expect(openai.json.usage).toEqual({ prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 });
    const gemini = await post('/v1beta/models/g:generateContent', {});
    expect(gemini.json.candidates[0].content.parts).toEqual([
      { text: 'hi' },
      { functionCall: { id: 'x1', name: 'f', args: { a: 1 } } },
    ]);
    const anthropic = await post('/v1/messages', { model: 'c' });
    expect(anthropic.json.content).toEqual([
      { type: 'text', text: 'hi' },
      { type: 'tool_use', id: 'x1', name: 'f', input: { a: 1 } },
    ]);
    expect(mock.requests.map((r) => [r.kind, r.stream, r.model])).toEqual([
      ['openai', false, 'm'],
      ['gemini', false, 'g'],
      ['anthropic', false, 'c'],
    ]);
    expect(mock.pending).toBe(0);
  });

  it('says plainly when the script ran out', async () => {
    const { status, json } = await post('/v1/chat/completions', { model: 'm' });
    expect(status).toBe(400);
    expect(json.error.message).toContain('no scripted step left');
  });
});
