// The OpenAI chat-completions wire through the openai SDK: OpenAI itself, any compatible server,
// OpenRouter and (after the token exchange) GitHub Copilot. The only file that imports `openai`.
import OpenAI from 'openai';
import type {
  ChatCompletionChunk,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import { failureFromThrown, ProviderFailure, parseRetryAfter, streamError, unterminated } from './failure.ts';
import type { FetchLike, FetchResponse } from './http-fetch.ts';
import type { Attempt } from './retry.ts';
import { watchDone } from './sse.ts';
import type { ChatMessage, ChatResponse, FinishReason, ToolCall, ToolDefinition } from './types.ts';

type SdkFetch = NonNullable<NonNullable<ConstructorParameters<typeof OpenAI>[0]>['fetch']>;

export interface OpenAiEndpoint {
  baseUrl: string;
  /** Sent as `Authorization: Bearer …`; undefined: no Authorization header at all (a local server). */
  apiKey: string | undefined;
  headers?: Record<string, string>;
}

export interface OpenAiWireOptions {
  /** Resolved before every attempt, so Copilot can hand out a fresh token. */
  endpoint: (signal: AbortSignal) => Promise<OpenAiEndpoint>;
  timeoutMs: number;
  fetch?: FetchLike;
  now: () => number;
}

/**
 * The fetch the SDK gets: the answer's body goes through watchDone, so the run knows whether the
 * stream reached its `[DONE]` (the SDK drops that marker silently, and a stream cut short ends the
 * same way as a whole one).
 */
const DONE_SEEN = new WeakMap<object, { done: boolean }>();

function watchedFetch(fetch: FetchLike): FetchLike {
  return async (url, init) => {
    const response = await fetch(url, init);
    if (!response.ok || !response.body) return response;
    const seen = { done: false };
    const body = watchDone(response.body, seen);
    const watched = new Proxy(response, {
      get(target, key) {
        if (key === 'body') return body;
        const value = Reflect.get(target, key, target) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    }) as FetchResponse;
    DONE_SEEN.set(watched, seen);
    return watched;
  };
}

export function openAiAttempt(options: OpenAiWireOptions): Attempt {
  const clients = new Map<string, OpenAI>();
  const clientFor = (endpoint: OpenAiEndpoint): OpenAI => {
    const cacheKey = `${endpoint.baseUrl}\n${endpoint.apiKey}`;
    let client = clients.get(cacheKey);
    if (!client) {
      client = new OpenAI({
        // The SDK insists on a key; without one the header it would make from it is removed.
        apiKey: endpoint.apiKey ?? 'unused',
        ...(endpoint.apiKey === undefined ? { defaultHeaders: { Authorization: null } } : {}),
        baseURL: endpoint.baseUrl,
        // One retry policy (retry.ts) for every provider: the SDK's own is off.
        maxRetries: 0,
        timeout: options.timeoutMs,
        organization: null,
        project: null,
        logLevel: 'off',
        // The SDK reads status, headers.get/entries, body as an async iterable, text and json.
        ...(options.fetch ? { fetch: watchedFetch(options.fetch) as unknown as SdkFetch } : {}),
      });
      clients.clear(); // a new Copilot token replaces the old client
      clients.set(cacheKey, client);
    }
    return client;
  };

  return async (request, signal) => {
    const endpoint = await options.endpoint(signal);
    const client = clientFor(endpoint);
    const params: ChatCompletionCreateParamsStreaming = {
      model: request.model,
      messages: request.messages.map(toOpenAiMessage),
      stream: true,
      stream_options: { include_usage: true },
      ...(usesCompletionTokens(endpoint.baseUrl)
        ? { max_completion_tokens: request.maxOutputTokens }
        : { max_tokens: request.maxOutputTokens }),
      ...(request.tools.length > 0 ? { tools: request.tools.map(toOpenAiTool) } : {}),
    };
    let stream: AsyncIterable<ChatCompletionChunk>;
    let raw: object;
    try {
      ({ data: stream, response: raw } = await client.chat.completions
        .create(params, { signal, ...(endpoint.headers ? { headers: endpoint.headers } : {}) })
        .withResponse());
    } catch (error) {
      throw fromSdkError(error, signal, options.now());
    }

    const answer = new StreamedAnswer(request.onText);
    try {
      for await (const chunk of stream) answer.add(chunk);
    } catch (error) {
      throw fromSdkError(error, signal, options.now());
    }
    return answer.result(request.model, DONE_SEEN.get(raw)?.done ?? false);
  };
}

/**
 * One streamed answer put together from its chunks: text, refusal text, tool calls (by index, from
 * every choice: Copilot sends a model's calls in a second choice), usage and the finish reason.
 */
class StreamedAnswer {
  content = '';
  model: string | undefined;
  refused = false;
  finish: string | undefined;
  usage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
  readonly calls: { id: string; name: string; arguments: string }[] = [];

  constructor(private readonly onText: ((delta: string) => void) | undefined) {}

  add(chunk: ChatCompletionChunk): void {
    if (chunk.model) this.model = chunk.model;
    if (chunk.usage) {
      this.usage = {
        inputTokens: chunk.usage.prompt_tokens ?? 0,
        outputTokens: chunk.usage.completion_tokens ?? 0,
        totalTokens:
          chunk.usage.total_tokens ?? (chunk.usage.prompt_tokens ?? 0) + (chunk.usage.completion_tokens ?? 0),
      };
    }
    for (const choice of chunk.choices ?? []) {
      const delta = choice.delta;
      // A refusal (OpenAI's structured refusal) is the answer's text, and how it ended.
      const text = (delta?.content ?? '') + (delta?.refusal ?? '');
      if (delta?.refusal) this.refused = true;
      if (text) {
        this.content += text;
        this.onText?.(text);
      }
      for (const part of delta?.tool_calls ?? []) {
        const index = part.index ?? this.calls.length;
        const call = this.calls[index] ?? { id: '', name: '', arguments: '' };
        this.calls[index] = call;
        if (part.id) call.id = part.id;
        if (part.function?.name) call.name += part.function.name;
        if (part.function?.arguments) call.arguments += part.function.arguments;
      }
      if (choice.finish_reason) this.finish = choice.finish_reason;
    }
  }

  /** The answer, or an unterminated failure when neither a finish_reason nor [DONE] came. */
  result(requested: string, doneSeen: boolean): ChatResponse {
    if (this.finish === undefined && !doneSeen) throw unterminated('a finish_reason or [DONE]');
    const toolCalls: ToolCall[] = this.calls
      .filter((call) => call?.name)
      .map((call, i) => ({ id: call.id || `call_${i}`, name: call.name, arguments: call.arguments || '{}' }));
    let finishReason = this.refused ? 'refusal' : mapFinish(this.finish ?? 'stop');
    if (toolCalls.length > 0 && finishReason === 'stop') finishReason = 'tool_calls';
    const stopDetail = this.refused
      ? 'a refusal (delta.refusal)'
      : this.finish === undefined
        ? '[DONE] without a finish_reason'
        : `finish_reason "${this.finish}"`;
    return {
      content: this.content,
      toolCalls,
      usage: this.usage,
      finishReason,
      stopDetail,
      model: this.model ?? requested,
    };
  }
}

// api.openai.com rejects max_tokens for its reasoning models; compatible servers mostly know only max_tokens.
function usesCompletionTokens(baseUrl: string): boolean {
  try {
    return new URL(baseUrl).hostname === 'api.openai.com';
  } catch {
    return false;
  }
}

function mapFinish(reason: string): FinishReason {
  if (reason === 'stop' || reason === 'tool_calls' || reason === 'length') return reason;
  if (reason === 'function_call') return 'tool_calls';
  // The provider's content filter (OpenAI's moderation, Azure's and Copilot's filters).
  if (reason === 'content_filter') return 'refusal';
  return 'other';
}

export function toOpenAiMessage(message: ChatMessage): ChatCompletionMessageParam {
  switch (message.role) {
    case 'system':
      return { role: 'system', content: message.content };
    case 'user':
      if (!message.images?.length) return { role: 'user', content: message.content };
      return {
        role: 'user',
        content: [
          { type: 'text', text: message.content },
          ...message.images.map((image) => ({
            type: 'image_url' as const,
            image_url: { url: `data:${image.mediaType};base64,${image.data}` },
          })),
        ],
      };
    case 'assistant':
      return {
        role: 'assistant',
        content: message.content || null,
        ...(message.toolCalls && message.toolCalls.length > 0
          ? {
              tool_calls: message.toolCalls.map((call) => ({
                id: call.id,
                type: 'function' as const,
                function: { name: call.name, arguments: call.arguments },
              })),
            }
          : {}),
      };
    case 'tool':
      return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
  }
}

function toOpenAiTool(tool: ToolDefinition): ChatCompletionTool {
  return {
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  };
}

function fromSdkError(error: unknown, signal: AbortSignal, nowMs: number): ProviderFailure {
  if (error instanceof OpenAI.APIError && typeof error.status === 'number') {
    const retryMs = error.headers?.get('retry-after-ms');
    const retryAfterMs =
      retryMs && /^\d+$/.test(retryMs)
        ? Number(retryMs)
        : parseRetryAfter(error.headers?.get('retry-after'), nowMs);
    const body = error.error as { message?: unknown } | undefined;
    // The SDK's own message starts with the status ("404 status code (no body)"), which the caller
    // already prints: keep only what the server said.
    const sdkMessage = error.message
      .replace(/^\d{3} status code \(no body\)$/, 'the server gave no reason')
      .replace(/^\d{3} /, '');
    const message = typeof body?.message === 'string' ? body.message : sdkMessage;
    return new ProviderFailure('http', message, {
      status: error.status,
      cause: error,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    });
  }
  if (error instanceof OpenAI.APIConnectionTimeoutError) {
    return new ProviderFailure('timeout', 'the model did not answer in time', { cause: error });
  }
  if (
    error instanceof OpenAI.APIError &&
    !(error instanceof OpenAI.APIConnectionError) &&
    !(error instanceof OpenAI.APIUserAbortError)
  ) {
    // An error event inside the stream: the server's own words, its type standing for a status.
    const body = error.error as { message?: unknown; type?: unknown; code?: unknown } | undefined;
    const message = typeof body?.message === 'string' ? body.message : error.message;
    const type = typeof body?.type === 'string' ? body.type : undefined;
    return streamError(type, message, typeof body?.code === 'number' ? body.code : undefined);
  }
  return failureFromThrown(error, undefined, signal.aborted);
}
