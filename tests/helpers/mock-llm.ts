// A scripted model server for tests: OpenAI chat completions, Gemini generateContent, Anthropic
// Messages and the Copilot token endpoint on 127.0.0.1, all answering from one queue of steps.
//
//   const mock = await startMockLlm();
//   mock.script([{ toolCalls: [{ name: 'execute_cmd', arguments: { cmd: 'echo hi' } }] }, { text: 'done' }]);
//   rune --base-url ${mock.baseUrl} --api-key sk-test …        // OpenAI wire (also OpenRouter, Copilot)
//   provider gemini:    base_url = mock.geminiBaseUrl          // …/v1beta
//   provider anthropic: base_url = mock.baseUrl                // …/v1/messages
//   provider copilot:   RUNE_COPILOT_TOKEN_URL = mock.copilotTokenUrl (the token names mock.url as its API)
//
// Every model call takes the next step (or the fallback when the queue is empty) and renders it in
// the wire format of the endpoint called, streaming (SSE) when the request asks for it. A request
// carrying Copilot's integration header gets Copilot's flavour of the OpenAI stream (filter results,
// the prompt-filter chunk first, tool calls in a second choice, usage with the finish). Each stream
// can end every way a real one does: its end event, a cut at the token limit (inside a tool call's
// arguments too), a refusal, no end event at all, or an error event.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, beforeEach } from 'vitest';

export type WireKind = 'openai' | 'gemini' | 'anthropic';

/** How each wire says a stream ended (docs/adr/0033-run-outcomes.md), as the mock sends it. */
export type MockFinish = 'stop' | 'tool_calls' | 'length' | 'refusal';

export interface MockToolCall {
  /** Default: call_N (OpenAI), toolu_N (Anthropic), none (Gemini, as the real API). */
  id?: string;
  name: string;
  /** An object is JSON-encoded; a string is sent as is (so tests can send broken JSON). */
  arguments: string | Record<string, unknown>;
}

export interface MockStepSpec {
  text?: string;
  toolCalls?: MockToolCall[];
  /** Default { input: 10, output: 5 }. */
  usage?: { input: number; output: number };
  /**
   * Default: tool_calls when there are tool calls, else stop (mapped per wire). `length` with tool
   * calls cuts the last call's arguments in half (Gemini sends no call, as it does when cut);
   * `refusal`: Anthropic's stop_reason refusal, OpenAI's delta.refusal, Copilot's content_filter,
   * Gemini's SAFETY.
   */
  finishReason?: MockFinish;
  /** Streaming only: end the response cleanly without the wire's end event (no finish, no [DONE]). */
  omitEnd?: boolean;
  /** OpenAI wire, streaming: `[DONE]` with no finish_reason before it (Copilot's Claude models do this). */
  omitFinish?: boolean;
  /** Streaming only: the wire's error event in place of the end event, then the response ends. */
  errorEvent?: { message: string; type?: string; code?: number };
  /** An HTTP error status: the body is `body`, or the wire's usual error object carrying `text`. */
  status?: number;
  headers?: Record<string, string>;
  body?: unknown;
  /** Milliseconds to wait before answering. */
  delay?: number;
  /** Never answer (until the client gives up or the mock closes): for timeouts and cancellation. */
  hang?: boolean;
  /** Destroy the connection without an answer: a network error. */
  disconnect?: boolean;
  /** Streaming only: send this many SSE events, then drop the connection (a stream broken midway). */
  cutAfter?: number;
  /** Streaming only: send this many SSE events, then nothing more, keeping the connection open (a model stalled mid-answer). */
  hangAfter?: number;
  /** Characters per streamed text chunk and per tool-argument chunk. Default 4. */
  chunkSize?: number;
  /** Model name reported back. Default: the requested model. */
  model?: string;
}

export type MockStep = MockStepSpec | ((request: RecordedRequest) => MockStepSpec | Promise<MockStepSpec>);

export interface RecordedRequest {
  kind: WireKind | 'copilot-token';
  method: string;
  /** Path with query, e.g. /v1/chat/completions or /v1beta/models/m:streamGenerateContent?alt=sse. */
  path: string;
  /** Lower-cased header names. */
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON body (or the raw text when it is not JSON; undefined when empty). */
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary wire JSON without ceremony
  body: any;
  stream: boolean;
  /** The model asked for (from the body, or the Gemini URL). */
  model: string | undefined;
}

export interface CopilotTokenSpec {
  token?: string;
  /** Seconds until expires_at. Default 1800. */
  expiresIn?: number;
  status?: number;
  body?: unknown;
}

export interface MockLlm {
  /** http://127.0.0.1:PORT */
  url: string;
  /** url + /v1: OpenAI-compatible base URL (and Anthropic's). */
  baseUrl: string;
  /** url + /v1beta: Gemini base URL. */
  geminiBaseUrl: string;
  /** url + /copilot_internal/v2/token */
  copilotTokenUrl: string;
  /** Model calls received, in order (all wires; token requests are in tokenRequests). */
  requests: RecordedRequest[];
  tokenRequests: RecordedRequest[];
  /** Replaces the pending steps. */
  script(steps: MockStep[]): void;
  /** Appends one step. */
  push(step: MockStep): void;
  /** Answers model calls once the queue is empty. Default: HTTP 400 "no scripted step left". */
  setFallback(fallback: MockStep | undefined): void;
  /** How the Copilot token endpoint answers. Default: a fresh token valid for 1800 s. */
  setCopilotToken(spec: CopilotTokenSpec | ((request: RecordedRequest) => CopilotTokenSpec)): void;
  /** Steps not yet used. */
  readonly pending: number;
  /** Back to a fresh server's state: no steps, no fallback, default Copilot token, no recorded calls. */
  reset(): void;
  close(): Promise<void>;
}

/**
 * The usual test-file life cycle: one mock for the file (started in beforeAll, closed in afterAll),
 * reset before each test. The handle forwards to the running mock, so `mock.baseUrl` works in tests.
 */
export function useMockLlm(): MockLlm {
  let current: MockLlm | undefined;
  beforeAll(async () => {
    current = await startMockLlm();
  });
  afterAll(() => current?.close());
  beforeEach(() => current?.reset());
  return new Proxy({} as MockLlm, {
    get(_target, key) {
      if (!current) throw new Error('useMockLlm: the mock is used before beforeAll started it');
      const value = Reflect.get(current, key);
      return typeof value === 'function' ? value.bind(current) : value;
    },
  });
}

const DEFAULT_USAGE = { input: 10, output: 5 };

export async function startMockLlm(): Promise<MockLlm> {
  let queue: MockStep[] = [];
  let fallback: MockStep | undefined;
  let tokenSpec: CopilotTokenSpec | ((request: RecordedRequest) => CopilotTokenSpec) = {};
  let tokenCount = 0;
  let callCount = 0;
  const requests: RecordedRequest[] = [];
  const tokenRequests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `mock-llm failure: ${String(error)}` } }));
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    const path = req.url ?? '/';
    const pathname = path.split('?')[0] ?? path;
    // biome-ignore lint/suspicious/noExplicitAny: parsed wire JSON, read loosely
    let body: any;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {
      body = raw;
    }
    const kind = kindOf(pathname);
    if (!kind) {
      sendJson(res, 404, { error: { message: `mock-llm: no endpoint ${req.method} ${pathname}` } });
      return;
    }
    const geminiModel = /\/models\/([^/:]+):/.exec(pathname)?.[1];
    const record: RecordedRequest = {
      kind,
      method: req.method ?? 'GET',
      path,
      headers: { ...req.headers },
      body,
      stream:
        kind === 'gemini'
          ? pathname.endsWith(':streamGenerateContent')
          : Boolean(body && body.stream === true),
      model: geminiModel ? decodeURIComponent(geminiModel) : body?.model,
    };

    if (kind === 'copilot-token') {
      tokenRequests.push(record);
      const spec = typeof tokenSpec === 'function' ? tokenSpec(record) : tokenSpec;
      if (spec.status && spec.status >= 400) {
        sendJson(res, spec.status, spec.body ?? { message: 'Bad credentials' });
        return;
      }
      tokenCount += 1;
      const expiresAt = Math.floor(Date.now() / 1000) + (spec.expiresIn ?? 1800);
      sendJson(res, 200, {
        token: spec.token ?? `tid=mock-copilot-${tokenCount};exp=${expiresAt};sku=test`,
        expires_at: expiresAt,
        refresh_in: Math.max(0, (spec.expiresIn ?? 1800) - 300),
        endpoints: { api: url },
      });
      return;
    }

    requests.push(record);
    callCount += 1;
    const next = queue.shift() ?? fallback;
    const step: MockStepSpec = next
      ? typeof next === 'function'
        ? await next(record)
        : next
      : { status: 400, text: 'mock-llm: no scripted step left' };

    if (step.delay) await sleep(step.delay);
    if (step.disconnect) {
      req.socket.destroy();
      return;
    }
    if (step.hang) return; // the socket is destroyed on close()
    if (step.status && step.status >= 400) {
      sendJson(res, step.status, step.body ?? errorBody(kind, step.status, step.text), step.headers);
      return;
    }
    const model = step.model ?? record.model ?? 'mock-model';
    const copilot = kind === 'openai' && record.headers['copilot-integration-id'] !== undefined;
    const render = copilot
      ? renderCopilot
      : { openai: renderOpenAi, gemini: renderGemini, anthropic: renderAnthropic }[kind];
    const out = render(step, model, callCount, record);
    if (record.stream) {
      res.writeHead(step.status ?? 200, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache',
        ...step.headers,
      });
      const ending = step.errorEvent
        ? [errorEvent(copilot ? 'openai' : kind, step.errorEvent)]
        : step.omitEnd
          ? []
          : step.omitFinish && kind === 'openai'
            ? ['data: [DONE]\n\n']
            : out.end;
      const all = [...out.events, ...ending];
      const cut = step.cutAfter ?? step.hangAfter;
      const events = cut === undefined ? all : all.slice(0, cut);
      for (const event of events) res.write(event);
      if (step.hangAfter !== undefined) return; // the socket is destroyed on close()
      if (step.cutAfter !== undefined) {
        // Let the written events reach the client before the connection drops.
        await sleep(20);
        res.socket?.destroy();
        return;
      }
      res.end();
    } else {
      sendJson(res, step.status ?? 200, out.json, step.headers);
    }
  }

  return {
    url,
    baseUrl: `${url}/v1`,
    geminiBaseUrl: `${url}/v1beta`,
    copilotTokenUrl: `${url}/copilot_internal/v2/token`,
    requests,
    tokenRequests,
    script(steps) {
      queue = [...steps];
    },
    push(step) {
      queue.push(step);
    },
    setFallback(next) {
      fallback = next;
    },
    setCopilotToken(spec) {
      tokenSpec = spec;
    },
    get pending() {
      return queue.length;
    },
    reset() {
      queue = [];
      fallback = undefined;
      tokenSpec = {};
      requests.length = 0;
      tokenRequests.length = 0;
    },
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function kindOf(pathname: string): RecordedRequest['kind'] | undefined {
  if (pathname.endsWith('/copilot_internal/v2/token')) return 'copilot-token';
  if (pathname.endsWith('/chat/completions')) return 'openai';
  if (/\/models\/[^/]+:(stream)?[gG]enerateContent$/.test(pathname)) return 'gemini';
  if (pathname.endsWith('/messages')) return 'anthropic';
  return undefined;
}

interface Rendered {
  json: unknown;
  /** The stream up to its end: text, tool calls. */
  events: string[];
  /** How the stream ends normally: the finish (with usage) and the end marker. */
  end: string[];
}

/** The calls as sent: with `length`, the last one's arguments are cut in half (the JSON unfinished). */
function sentCalls(step: MockStepSpec): MockToolCall[] {
  const calls = step.toolCalls ?? [];
  if (step.finishReason !== 'length' || calls.length === 0) return calls;
  const last = calls[calls.length - 1]!;
  const text = argsText(last);
  return [
    ...calls.slice(0, -1),
    { ...last, arguments: text.slice(0, Math.max(1, Math.floor(text.length / 2))) },
  ];
}

function argsText(call: MockToolCall): string {
  return typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments);
}

function argsObject(call: MockToolCall): unknown {
  if (typeof call.arguments !== 'string') return call.arguments;
  try {
    return JSON.parse(call.arguments);
  } catch {
    return call.arguments;
  }
}

function pieces(text: string, size: number): string[] {
  if (text === '') return [];
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

function renderOpenAi(step: MockStepSpec, model: string, n: number, request: RecordedRequest): Rendered {
  const usage = step.usage ?? DEFAULT_USAGE;
  const calls = sentCalls(step).map((call, i) => ({ ...call, id: call.id ?? `call_${n}_${i}` }));
  // OpenAI refuses in delta.refusal and ends with "stop"; content_filter is its moderation's cut.
  const refusal = step.finishReason === 'refusal';
  const finish = refusal ? 'stop' : (step.finishReason ?? (calls.length > 0 ? 'tool_calls' : 'stop'));
  const id = `chatcmpl-mock-${n}`;
  const created = Math.floor(Date.now() / 1000);
  const usageJson = {
    prompt_tokens: usage.input,
    completion_tokens: usage.output,
    total_tokens: usage.input + usage.output,
  };
  const json = {
    id,
    object: 'chat.completion',
    created,
    model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: refusal ? null : (step.text ?? (calls.length > 0 ? null : '')),
          ...(refusal ? { refusal: step.text ?? '' } : {}),
          ...(calls.length > 0
            ? {
                tool_calls: calls.map((call) => ({
                  id: call.id,
                  type: 'function',
                  function: { name: call.name, arguments: argsText(call) },
                })),
              }
            : {}),
        },
        finish_reason: finish,
      },
    ],
    usage: usageJson,
  };

  const size = step.chunkSize ?? 4;
  const chunk = (delta: unknown, finishReason: string | null = null) =>
    sse({
      id,
      object: 'chat.completion.chunk',
      created,
      model,
      choices: [{ index: 0, delta, finish_reason: finishReason }],
    });
  const events = [chunk({ role: 'assistant', content: '' })];
  for (const piece of pieces(step.text ?? '', size)) {
    events.push(chunk(refusal ? { refusal: piece } : { content: piece }));
  }
  calls.forEach((call, index) => {
    events.push(
      chunk({
        tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }],
      }),
    );
    // Arguments split across chunks, as real servers do.
    for (const piece of pieces(argsText(call), size)) {
      events.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    }
  });
  const end = [chunk({}, finish)];
  if (request.body?.stream_options?.include_usage) {
    end.push(sse({ id, object: 'chat.completion.chunk', created, model, choices: [], usage: usageJson }));
  }
  end.push('data: [DONE]\n\n');
  return { json, events, end };
}

const FILTER_RESULTS = {
  hate: { filtered: false, severity: 'safe' },
  self_harm: { filtered: false, severity: 'safe' },
  sexual: { filtered: false, severity: 'safe' },
  violence: { filtered: false, severity: 'safe' },
};

/**
 * GitHub Copilot's chat stream: the OpenAI wire as Copilot's proxy sends it — a first chunk with
 * no choices and the prompt's filter results, content filter results on each choice, tool calls in
 * a second choice (its Claude models split text and calls), usage in the chunk with the finish,
 * `content_filter` when its filter stops the answer, then [DONE].
 */
function renderCopilot(step: MockStepSpec, model: string, n: number): Rendered {
  const usage = step.usage ?? DEFAULT_USAGE;
  const calls = sentCalls(step).map((call, i) => ({ ...call, id: call.id ?? `toolu_vrtx_${n}_${i}` }));
  const finish =
    step.finishReason === 'refusal'
      ? 'content_filter'
      : (step.finishReason ?? (calls.length > 0 ? 'tool_calls' : 'stop'));
  const id = `chatcmpl-copilot-${n}`;
  const created = Math.floor(Date.now() / 1000);
  const usageJson = {
    completion_tokens: usage.output,
    prompt_tokens: usage.input,
    total_tokens: usage.input + usage.output,
  };
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    sse({ choices, created, id, model, ...extra });
  const size = step.chunkSize ?? 4;
  const events = [
    sse({
      choices: [],
      created: 0,
      id: '',
      prompt_filter_results: [{ content_filter_results: FILTER_RESULTS, prompt_index: 0 }],
    }),
  ];
  for (const piece of pieces(step.text ?? '', size)) {
    events.push(
      chunk([
        { index: 0, content_filter_results: FILTER_RESULTS, delta: { content: piece, role: 'assistant' } },
      ]),
    );
  }
  calls.forEach((call, index) => {
    events.push(
      chunk([
        {
          index: 1,
          delta: {
            role: 'assistant',
            tool_calls: [
              { index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } },
            ],
          },
        },
      ]),
    );
    for (const piece of pieces(argsText(call), size)) {
      events.push(chunk([{ index: 1, delta: { tool_calls: [{ index, function: { arguments: piece } }] } }]));
    }
  });
  const filtered =
    finish === 'content_filter'
      ? { ...FILTER_RESULTS, violence: { filtered: true, severity: 'high' } }
      : FILTER_RESULTS;
  const end = [
    chunk([{ index: 0, finish_reason: finish, content_filter_results: filtered, delta: { content: null } }], {
      usage: usageJson,
    }),
    'data: [DONE]\n\n',
  ];
  const json = {
    choices: [
      {
        index: 0,
        finish_reason: finish,
        message: { role: 'assistant', content: step.text ?? null },
      },
      ...(calls.length > 0
        ? [
            {
              index: 1,
              finish_reason: finish,
              message: {
                role: 'assistant',
                tool_calls: calls.map((call) => ({
                  id: call.id,
                  type: 'function',
                  function: { name: call.name, arguments: argsText(call) },
                })),
              },
            },
          ]
        : []),
    ],
    created,
    id,
    model,
    usage: usageJson,
  };
  return { json, events, end };
}

const GEMINI_FINISH: Record<MockFinish, string> = {
  stop: 'STOP',
  tool_calls: 'STOP',
  length: 'MAX_TOKENS',
  refusal: 'SAFETY',
};

function renderGemini(step: MockStepSpec, model: string, _n: number): Rendered {
  const usage = step.usage ?? DEFAULT_USAGE;
  // Cut inside a call, Gemini sends no call at all: it streams calls whole.
  const calls = step.finishReason === 'length' ? [] : (step.toolCalls ?? []);
  const finish = GEMINI_FINISH[step.finishReason ?? 'stop'];
  const usageMetadata = {
    promptTokenCount: usage.input,
    candidatesTokenCount: usage.output,
    totalTokenCount: usage.input + usage.output,
  };
  const callParts = calls.map((call) => ({
    functionCall: { ...(call.id ? { id: call.id } : {}), name: call.name, args: argsObject(call) },
  }));
  const safetyRatings =
    finish === 'SAFETY'
      ? [{ category: 'HARM_CATEGORY_DANGEROUS_CONTENT', probability: 'HIGH', blocked: true }]
      : undefined;
  const json = {
    candidates: [
      {
        content: { role: 'model', parts: [...(step.text ? [{ text: step.text }] : []), ...callParts] },
        finishReason: finish,
        index: 0,
        ...(safetyRatings ? { safetyRatings } : {}),
      },
    ],
    usageMetadata,
    modelVersion: model,
  };
  const textPieces = pieces(step.text ?? '', step.chunkSize ?? 4);
  const events: string[] = textPieces.map((text) =>
    sse({ candidates: [{ content: { role: 'model', parts: [{ text }] }, index: 0 }], modelVersion: model }),
  );
  // Gemini streams each function call whole; the finish reason and usage come with the last chunk.
  if (callParts.length > 0) {
    events.push(
      sse({ candidates: [{ content: { role: 'model', parts: callParts }, index: 0 }], modelVersion: model }),
    );
  }
  const end = [
    sse({
      candidates: [
        {
          content: { role: 'model', parts: [{ text: '' }] },
          finishReason: finish,
          index: 0,
          ...(safetyRatings ? { safetyRatings } : {}),
        },
      ],
      usageMetadata,
      modelVersion: model,
    }),
  ];
  return { json, events, end };
}

function renderAnthropic(step: MockStepSpec, model: string, n: number): Rendered {
  const usage = step.usage ?? DEFAULT_USAGE;
  const calls = sentCalls(step).map((call, i) => ({ ...call, id: call.id ?? `toolu_${n}_${i}` }));
  const stopReason =
    step.finishReason === 'length'
      ? 'max_tokens'
      : step.finishReason === 'refusal'
        ? 'refusal'
        : calls.length > 0
          ? 'tool_use'
          : 'end_turn';
  const id = `msg_mock_${n}`;
  const content = [
    ...(step.text ? [{ type: 'text', text: step.text }] : []),
    ...calls.map((call) => ({ type: 'tool_use', id: call.id, name: call.name, input: argsObject(call) })),
  ];
  const json = {
    id,
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    usage: { input_tokens: usage.input, output_tokens: usage.output },
  };
  const size = step.chunkSize ?? 4;
  const events = [
    sseEvent('message_start', {
      type: 'message_start',
      message: {
        ...json,
        content: [],
        stop_reason: null,
        usage: { input_tokens: usage.input, output_tokens: 1 },
      },
    }),
  ];
  let index = 0;
  if (step.text) {
    events.push(
      sseEvent('content_block_start', {
        type: 'content_block_start',
        index,
        content_block: { type: 'text', text: '' },
      }),
    );
    for (const text of pieces(step.text, size)) {
      events.push(
        sseEvent('content_block_delta', {
          type: 'content_block_delta',
          index,
          delta: { type: 'text_delta', text },
        }),
      );
    }
    events.push(sseEvent('content_block_stop', { type: 'content_block_stop', index }));
    index += 1;
  }
  for (const call of calls) {
    events.push(
      sseEvent('content_block_start', {
        type: 'content_block_start',
        index,
        content_block: { type: 'tool_use', id: call.id, name: call.name, input: {} },
      }),
    );
    for (const partial_json of pieces(argsText(call), size)) {
      events.push(
        sseEvent('content_block_delta', {
          type: 'content_block_delta',
          index,
          delta: { type: 'input_json_delta', partial_json },
        }),
      );
    }
    events.push(sseEvent('content_block_stop', { type: 'content_block_stop', index }));
    index += 1;
  }
  const end = [
    sseEvent('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: usage.output },
    }),
    sseEvent('message_stop', { type: 'message_stop' }),
  ];
  return { json, events, end };
}

/** The wire's error event in the middle of a stream. */
function errorEvent(kind: WireKind, spec: NonNullable<MockStepSpec['errorEvent']>): string {
  if (kind === 'anthropic') {
    return sseEvent('error', {
      type: 'error',
      error: { type: spec.type ?? 'overloaded_error', message: spec.message },
    });
  }
  if (kind === 'gemini') {
    return sse({
      error: { code: spec.code ?? 503, message: spec.message, status: spec.type ?? 'UNAVAILABLE' },
    });
  }
  return sse({
    error: { message: spec.message, type: spec.type ?? 'server_error', param: null, code: null },
  });
}

function errorBody(kind: WireKind, status: number, text?: string): unknown {
  const message = text ?? `mock error ${status}`;
  if (kind === 'gemini') return { error: { code: status, message, status: 'ERROR' } };
  if (kind === 'anthropic') return { type: 'error', error: { type: 'api_error', message } };
  return { error: { message, type: 'mock_error', code: status } };
}

function sse(data: unknown): string {
  return `data: ${JSON.stringify(data)}\n\n`;
}

function sseEvent(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      text += chunk;
    });
    req.on('end', () => resolve(text));
    req.on('error', reject);
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
