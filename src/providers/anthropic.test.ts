import { describe, expect, it } from 'vitest';
import { useMockLlm } from '../../tests/helpers/mock-llm.ts';
import { isRuneError } from '../core/errors.ts';
import { createProvider } from './index.ts';
import { memoryLogger, testConfig } from './test-support.ts';
import type { ChatRequest } from './types.ts';

const mock = useMockLlm();

const KEY = 'sk-ant-api03-test-0123456789abcdefghij';
const anthropic = () =>
  createProvider({
    config: testConfig({ base_url: mock.baseUrl, api_key: KEY }),
    apiKeyOrigin: 'flag',
    env: {},
    logger: memoryLogger(),
    sleep: async () => {},
  });

const tools = [
  {
    name: 'read_file',
    description: 'read a file',
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  },
];

function request(extra: Partial<ChatRequest> = {}): ChatRequest {
  return {
    model: 'claude-x',
    messages: [{ role: 'user', content: 'hi' }],
    tools,
    maxOutputTokens: 777,
    ...extra,
  };
}

describe('Anthropic provider', () => {
  it('streams text with usage; the request has max_tokens, the version header and the key header', async () => {
    mock.script([{ text: 'hello from claude', usage: { input: 30, output: 6 } }]);
    const deltas: string[] = [];
    const result = await anthropic().complete(request({ onText: (d) => deltas.push(d) }));
    expect(result).toMatchObject({
      content: 'hello from claude',
      finishReason: 'stop',
      usage: { inputTokens: 30, outputTokens: 6, totalTokens: 36 },
    });
    expect(deltas.length).toBeGreaterThan(1);
    const sent = mock.requests[0]!;
    expect(sent.path).toBe('/v1/messages');
    expect(sent.headers['x-api-key']).toBe(KEY);
    expect(sent.headers['anthropic-version']).toBe('2023-06-01');
    expect(sent.body).toMatchObject({ model: 'claude-x', max_tokens: 777, stream: true });
    expect(sent.body.tools).toEqual([
      { name: 'read_file', description: 'read a file', input_schema: tools[0]!.parameters },
    ]);
  });

  it('assembles tool_use input from input_json_delta pieces', async () => {
    mock.script([
      {
        text: 'let me look',
        toolCalls: [{ id: 'toolu_a', name: 'read_file', arguments: { path: '/etc/hostname' } }],
        chunkSize: 2,
      },
    ]);
    const result = await anthropic().complete(request());
    expect(result.content).toBe('let me look');
    expect(result.finishReason).toBe('tool_calls');
    expect(result.toolCalls).toEqual([
      { id: 'toolu_a', name: 'read_file', arguments: '{"path":"/etc/hostname"}' },
    ]);
  });

  it('sends the system prompt apart and tool results as tool_result blocks in one user turn', async () => {
    mock.script([{ text: 'done' }]);
    await anthropic().complete(
      request({
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'user', content: 'read two files' },
          {
            role: 'assistant',
            content: 'reading',
            toolCalls: [
              { id: 't1', name: 'read_file', arguments: '{"path":"a"}' },
              { id: 't2', name: 'read_file', arguments: '{"path":"b"}' },
            ],
          },
          { role: 'tool', toolCallId: 't1', name: 'read_file', content: 'A' },
          { role: 'tool', toolCallId: 't2', name: 'read_file', content: 'no such file', isError: true },
        ],
      }),
    );
    const body = mock.requests[0]!.body;
    expect(body.system).toBe('be brief');
    expect(body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'read two files' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'reading' },
          { type: 'tool_use', id: 't1', name: 'read_file', input: { path: 'a' } },
          { type: 'tool_use', id: 't2', name: 'read_file', input: { path: 'b' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 't1', content: 'A' },
          { type: 'tool_result', tool_use_id: 't2', content: 'no such file', is_error: true },
        ],
      },
    ]);
  });

  it('retries 529 overloaded, and 401 is PROVIDER_AUTH naming Anthropic, not the key', async () => {
    mock.script([{ status: 529 }, { text: 'ok' }]);
    expect((await anthropic().complete(request())).content).toBe('ok');
    expect(mock.requests).toHaveLength(2);

    mock.script([
      {
        status: 401,
        body: { type: 'error', error: { type: 'authentication_error', message: `bad key ${KEY}` } },
      },
    ]);
    const error = await anthropic()
      .complete(request())
      .catch((e: unknown) => e);
    expect(isRuneError(error) && error.code).toBe('PROVIDER_AUTH');
    const text = [(error as Error).message, ...(isRuneError(error) ? error.details : [])].join('\n');
    expect(text).toContain('Anthropic');
    expect(text).not.toContain(KEY);
  });

  it('a 404 without a message: "HTTP 404: Not Found" and what to check, never "HTTP 404: HTTP 404"', async () => {
    mock.script([{ status: 404, body: {} }]);
    const error = await anthropic()
      .complete(request())
      .catch((e: unknown) => e);
    expect(isRuneError(error) && error.code).toBe('PROVIDER_ERROR');
    expect((error as Error).message).toBe(
      'Anthropic failed: HTTP 404: Not Found; check the model name (--model) and the endpoint (--base-url)',
    );
  });
});
