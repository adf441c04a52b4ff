// Anthropic's Messages API, streamed: the system prompt travels apart, tool calls are tool_use
// blocks whose JSON arrives in pieces, and tool results go back as tool_result blocks.
import { failureFromResponse, ProviderFailure, streamError, unterminated } from './failure.ts';
import type { FetchLike } from './http-fetch.ts';
import type { Attempt } from './retry.ts';
import { readSse } from './sse.ts';
import type { ChatMessage, ChatResponse, FinishReason, ToolCall, ToolDefinition } from './types.ts';

export const ANTHROPIC_VERSION = '2023-06-01';

export interface AnthropicOptions {
  baseUrl: string;
  apiKey: string;
  fetch: FetchLike;
  now: () => number;
}

type Block = Record<string, unknown>;
interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: Block[];
}

export function anthropicAttempt(options: AnthropicOptions): Attempt {
  return async (request, signal) => {
    const { system, messages } = toAnthropicMessages(request.messages);
    const body: Record<string, unknown> = {
      model: request.model,
      max_tokens: request.maxOutputTokens,
      stream: true,
      messages,
      ...(system ? { system } : {}),
      ...(request.tools.length > 0 ? { tools: request.tools.map(toAnthropicTool) } : {}),
    };
    const response = await options.fetch(`${options.baseUrl}/messages`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-key': options.apiKey,
        'anthropic-version': ANTHROPIC_VERSION,
      },
      body: JSON.stringify(body),
      signal,
    });
    if (!response.ok) throw await failureFromResponse(response, options.now());
    if (!response.body) throw new ProviderFailure('protocol', 'Anthropic sent an empty answer');

    let content = '';
    let model = request.model;
    let stop: string | undefined;
    let input = 0;
    let output = 0;
    const blocks = new Map<number, { id: string; name: string; json: string }>();
    const toolCalls: ToolCall[] = [];
    for await (const event of readSse(response.body)) {
      let data: AnthropicEvent;
      try {
        data = JSON.parse(event.data);
      } catch {
        throw new ProviderFailure('protocol', `Anthropic sent unreadable data: ${event.data.slice(0, 200)}`);
      }
      switch (data.type) {
        case 'message_start': {
          const usage = data.message?.usage ?? {};
          input =
            (usage.input_tokens ?? 0) +
            (usage.cache_read_input_tokens ?? 0) +
            (usage.cache_creation_input_tokens ?? 0);
          output = usage.output_tokens ?? 0;
          if (data.message?.model) model = data.message.model;
          break;
        }
        case 'content_block_start':
          if (data.content_block?.type === 'tool_use') {
            blocks.set(data.index, { id: data.content_block.id, name: data.content_block.name, json: '' });
          } else if (data.content_block?.type === 'text' && data.content_block.text) {
            content += data.content_block.text;
            request.onText?.(data.content_block.text);
          }
          break;
        case 'content_block_delta':
          if (data.delta?.type === 'text_delta' && data.delta.text) {
            content += data.delta.text;
            request.onText?.(data.delta.text);
          } else if (data.delta?.type === 'input_json_delta') {
            const block = blocks.get(data.index);
            if (block) block.json += data.delta.partial_json ?? '';
          }
          break;
        case 'content_block_stop': {
          const block = blocks.get(data.index);
          if (block) toolCalls.push({ id: block.id, name: block.name, arguments: block.json || '{}' });
          break;
        }
        case 'message_delta':
          if (data.usage?.output_tokens !== undefined) output = data.usage.output_tokens;
          if (data.delta?.stop_reason) stop = data.delta.stop_reason;
          break;
        case 'error':
          // Mid-stream errors (overloaded_error …) carry no HTTP status: their type stands for one.
          throw streamError(data.error?.type, data.error?.message ?? 'error in the stream');
      }
    }
    // The stop reason comes in message_delta, just before message_stop: without it there is no answer.
    if (stop === undefined) throw unterminated('a stop_reason (message_delta)');
    const usage = { inputTokens: input, outputTokens: output, totalTokens: input + output };
    return {
      content,
      toolCalls,
      usage,
      finishReason: mapStop(stop),
      stopDetail: `stop_reason "${stop}"`,
      model,
    } satisfies ChatResponse;
  };
}

// The fields of the stream events rune reads; everything is optional because servers vary.
interface AnthropicEvent {
  type?: string;
  index: number;
  message?: {
    model?: string;
    usage?: {
      input_tokens?: number;
      output_tokens?: number;
      cache_read_input_tokens?: number;
      cache_creation_input_tokens?: number;
    };
  };
  content_block?: { type?: string; id: string; name: string; text?: string };
  delta?: { type?: string; text?: string; partial_json?: string; stop_reason?: string };
  usage?: { output_tokens?: number };
  error?: { type?: string; message?: string };
}

function mapStop(reason: string): FinishReason {
  if (reason === 'end_turn' || reason === 'stop_sequence') return 'stop';
  if (reason === 'tool_use') return 'tool_calls';
  // The context window filled up: the answer is cut as surely as by max_tokens.
  if (reason === 'max_tokens' || reason === 'model_context_window_exceeded') return 'length';
  if (reason === 'refusal') return 'refusal';
  return 'other';
}

/** rune's messages as Anthropic's: system text apart, turns alternating, tool results as user blocks. */
export function toAnthropicMessages(messages: readonly ChatMessage[]): {
  system: string;
  messages: AnthropicMessage[];
} {
  const system: string[] = [];
  const out: AnthropicMessage[] = [];
  const push = (role: AnthropicMessage['role'], blocks: Block[]) => {
    if (blocks.length === 0) return;
    const last = out[out.length - 1];
    if (last && last.role === role) last.content.push(...blocks);
    else out.push({ role, content: blocks });
  };
  for (const message of messages) {
    switch (message.role) {
      case 'system':
        system.push(message.content);
        break;
      case 'user':
        push('user', [
          ...(message.images ?? []).map((image) => ({
            type: 'image',
            source: { type: 'base64', media_type: image.mediaType, data: image.data },
          })),
          { type: 'text', text: message.content },
        ]);
        break;
      case 'assistant': {
        const blocks: Block[] = message.content ? [{ type: 'text', text: message.content }] : [];
        for (const call of message.toolCalls ?? []) {
          blocks.push({ type: 'tool_use', id: call.id, name: call.name, input: argsObject(call.arguments) });
        }
        push('assistant', blocks);
        break;
      }
      case 'tool':
        push('user', [
          {
            type: 'tool_result',
            tool_use_id: message.toolCallId,
            content: message.content,
            ...(message.isError ? { is_error: true } : {}),
          },
        ]);
        break;
    }
  }
  return { system: system.join('\n\n'), messages: out };
}

function argsObject(text: string): Record<string, unknown> {
  try {
    const parsed = JSON.parse(text);
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? parsed : {};
  } catch {
    return {};
  }
}

function toAnthropicTool(tool: ToolDefinition): Record<string, unknown> {
  return {
    name: tool.name,
    description: tool.description,
    input_schema: { type: 'object', properties: {}, ...tool.parameters },
  };
}
