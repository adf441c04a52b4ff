// The OpenAI chat-completions wire through the openai SDK: OpenAI itself, any compatible server,
// OpenRouter and (after the token exchange) GitHub Copilot. The only file that imports `openai`.
import OpenAI from 'openai';
import type {
  ChatCompletionChunk,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import { failureFromThrown, ProviderFailure, parseRetryAfter } from './failure.ts';
import type { FetchLike } from './http-fetch.ts';
import type { Attempt } from './retry.ts';
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
        ...(options.fetch ? { fetch: options.fetch as unknown as SdkFetch } : {}),
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
    try {
      stream = await client.chat.completions.create(params, {
        signal,
        ...(endpoint.headers ? { headers: endpoint.headers } : {}),
      });
    } catch (error) {
      throw fromSdkError(error, signal, options.now());
    }

    let content = '';
    let model = request.model;
    let finishReason: FinishReason = 'other';
    let usage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
    const calls: { id: string; name: string; arguments: string }[] = [];
    try {
      for await (const chunk of stream) {
        if (chunk.model) model = chunk.model;
        if (chunk.usage) {
          usage = {
            inputTokens: chunk.usage.prompt_tokens ?? 0,
            outputTokens: chunk.usage.completion_tokens ?? 0,
            totalTokens:
              chunk.usage.total_tokens ??
              (chunk.usage.prompt_tokens ?? 0) + (chunk.usage.completion_tokens ?? 0),
          };
        }
        const choice = chunk.choices?.[0];
        if (!choice) continue;
        const delta = choice.delta;
        if (delta?.content) {
          content += delta.content;
          request.onText?.(delta.content);
        }
        for (const part of delta?.tool_calls ?? []) {
          const index = part.index ?? calls.length;
          const call = calls[index] ?? { id: '', name: '', arguments: '' };
          calls[index] = call;
          if (part.id) call.id = part.id;
          if (part.function?.name) call.name += part.function.name;
          if (part.function?.arguments) call.arguments += part.function.arguments;
        }
        if (choice.finish_reason) finishReason = mapFinish(choice.finish_reason);
      }
    } catch (error) {
      throw fromSdkError(error, signal, options.now());
    }

    const toolCalls: ToolCall[] = calls
      .filter((call) => call?.name)
      .map((call, i) => ({ id: call.id || `call_${i}`, name: call.name, arguments: call.arguments || '{}' }));
    if (toolCalls.length > 0 && finishReason === 'stop') finishReason = 'tool_calls';
    return { content, toolCalls, usage, finishReason, model } satisfies ChatResponse;
  };
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
  if (reason === 'stop' || reason === 'tool_calls' || reason === 'length' || reason === 'content_filter') {
    return reason;
  }
  if (reason === 'function_call') return 'tool_calls';
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
    // An error event inside the stream: the server's own words, no status.
    return new ProviderFailure('protocol', error.message, { cause: error });
  }
  return failureFromThrown(error, undefined, signal.aborted);
}
