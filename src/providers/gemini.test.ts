import { describe, expect, it } from 'vitest';
import { useMockLlm } from '../../tests/helpers/mock-llm.ts';
import { isRuneError } from '../core/errors.ts';
import { toGeminiSchema } from './gemini.ts';
import { createProvider } from './index.ts';
import { memoryLogger, testConfig } from './test-support.ts';
import type { ChatRequest } from './types.ts';

const mock = useMockLlm();

const KEY = 'AIzaSyTest0123456789abcdefghijklmnopq';
const gemini = () =>
  createProvider({
    config: testConfig({ base_url: mock.geminiBaseUrl, api_key: KEY }),
    apiKeyOrigin: 'flag',
    env: {},
    logger: memoryLogger(),
    sleep: async () => {},
  });

const tools = [
  {
    name: 'execute_cmd',
    description: 'run a command',
    parameters: {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      additionalProperties: false,
      properties: { cmd: { type: 'string', default: 'ls' }, timeout: { type: ['integer', 'null'] } },
      required: ['cmd', 'ghost'],
    },
  },
  { name: 'inspect_process', description: 'no arguments', parameters: { type: 'object', properties: {} } },
];

function request(extra: Partial<ChatRequest> = {}): ChatRequest {
  return {
    model: 'gemini-2.5-flash',
    messages: [{ role: 'user', content: 'hi' }],
    tools,
    maxOutputTokens: 500,
    ...extra,
  };
}

describe('Gemini provider', () => {
  it('streams text through streamGenerateContent?alt=sse with the key in a header, not the URL', async () => {
    mock.script([{ text: 'hello from gemini', usage: { input: 20, output: 4 } }]);
    const deltas: string[] = [];
    const result = await gemini().complete(request({ onText: (d) => deltas.push(d) }));
    expect(result).toMatchObject({
      content: 'hello from gemini',
      finishReason: 'stop',
      usage: { inputTokens: 20, outputTokens: 4, totalTokens: 24 },
    });
    expect(deltas.length).toBeGreaterThan(1);
    const sent = mock.requests[0]!;
    expect(sent.path).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
    expect(sent.headers['x-goog-api-key']).toBe(KEY);
    expect(sent.path).not.toContain(KEY);
    expect(sent.body.generationConfig).toEqual({ maxOutputTokens: 500 });
  });

  it('sends functionDeclarations with schemas Gemini accepts', async () => {
    mock.script([{ text: 'ok' }]);
    await gemini().complete(request());
    const declarations = mock.requests[0]!.body.tools[0].functionDeclarations;
    expect(declarations).toEqual([
      {
        name: 'execute_cmd',
        description: 'run a command',
        parameters: {
          type: 'object',
          properties: { cmd: { type: 'string' }, timeout: { type: 'integer', nullable: true } },
          required: ['cmd'],
        },
      },
      { name: 'inspect_process', description: 'no arguments' },
    ]);
  });

  it('round-trips a function call: ids given, system apart, functionResponse by name', async () => {
    mock.script([
      { toolCalls: [{ name: 'execute_cmd', arguments: { cmd: 'echo hi' } }] },
      { text: 'it said hi' },
    ]);
    const provider = gemini();
    const first = await provider.complete(
      request({
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'user', content: 'run echo hi' },
        ],
      }),
    );
    expect(first.finishReason).toBe('tool_calls');
    expect(first.toolCalls).toHaveLength(1);
    const call = first.toolCalls[0]!;
    expect(call.id).toMatch(/\S/);
    expect(call).toMatchObject({ name: 'execute_cmd', arguments: '{"cmd":"echo hi"}' });

    const second = await provider.complete(
      request({
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'user', content: 'run echo hi' },
          { role: 'assistant', content: '', toolCalls: [call] },
          { role: 'tool', toolCallId: call.id, name: 'execute_cmd', content: 'hi\n' },
        ],
      }),
    );
    expect(second.content).toBe('it said hi');
    const body = mock.requests[1]!.body;
    expect(body.systemInstruction).toEqual({ parts: [{ text: 'be brief' }] });
    expect(body.contents).toEqual([
      { role: 'user', parts: [{ text: 'run echo hi' }] },
      { role: 'model', parts: [{ functionCall: { name: 'execute_cmd', args: { cmd: 'echo hi' } } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'execute_cmd', response: { content: 'hi\n' } } }] },
    ]);
  });

  it('keeps ids Gemini sent and gives two parallel calls distinct ids', async () => {
    mock.script([
      {
        toolCalls: [
          { id: 'g-1', name: 'list_dir', arguments: { path: 'a' } },
          { name: 'list_dir', arguments: { path: 'b' } },
          { name: 'list_dir', arguments: { path: 'c' } },
        ],
      },
    ]);
    const result = await gemini().complete(request());
    const ids = result.toolCalls.map((c) => c.id);
    expect(ids[0]).toBe('g-1');
    expect(new Set(ids).size).toBe(3);
  });

  it('retries 429 and maps 403 to PROVIDER_AUTH without the key', async () => {
    mock.script([{ status: 429, headers: { 'retry-after': '1' } }, { text: 'fine' }]);
    expect((await gemini().complete(request())).content).toBe('fine');
    expect(mock.requests).toHaveLength(2);

    mock.script([{ status: 403, text: `API key not valid: ${KEY}` }]);
    const error = await gemini()
      .complete(request())
      .catch((e: unknown) => e);
    expect(isRuneError(error) && error.code).toBe('PROVIDER_AUTH');
    const text = [(error as Error).message, ...(isRuneError(error) ? error.details : [])].join('\n');
    expect(text).toContain('Gemini');
    expect(text).not.toContain(KEY);
  });
});

describe('toGeminiSchema', () => {
  it('drops keywords Gemini rejects and rewrites the ones it spells differently', () => {
    expect(
      toGeminiSchema({
        type: 'object',
        properties: {
          mode: { const: 'fast' },
          level: { enum: [1, 2, null] },
          when: { type: 'string', format: 'uri' },
          stamp: { type: 'string', format: 'date-time' },
          list: { type: 'array', items: { oneOf: [{ type: 'string' }, { type: 'number', examples: [1] }] } },
        },
        $defs: {},
      }),
    ).toEqual({
      type: 'object',
      properties: {
        mode: { enum: ['fast'], type: 'string' },
        level: { enum: ['1', '2'], type: 'string' },
        when: { type: 'string' },
        stamp: { type: 'string', format: 'date-time' },
        list: { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'number' }] } },
      },
    });
  });
});
