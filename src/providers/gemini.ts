// Gemini's native API: streamGenerateContent?alt=sse with functionDeclarations. Converts rune's
// messages to contents/parts, JSON Schemas to the OpenAPI subset Gemini accepts, and gives the
// id-less function calls ids of their own.
import { failureFromResponse, ProviderFailure, streamError, unterminated } from './failure.ts';
import type { FetchLike } from './http-fetch.ts';
import type { Attempt } from './retry.ts';
import { readSse } from './sse.ts';
import type { ChatMessage, ChatResponse, FinishReason, ToolCall, ToolDefinition } from './types.ts';

export interface GeminiOptions {
  baseUrl: string;
  apiKey: string;
  fetch: FetchLike;
  now: () => number;
}

type Part = Record<string, unknown>;
interface Content {
  role: 'user' | 'model';
  parts: Part[];
}

// Gemini usually sends no call id. Ours carry this prefix so they are not echoed back as if Gemini
// had made them up.
const OWN_ID = 'gemini-call-';

export function geminiAttempt(options: GeminiOptions): Attempt {
  let counter = 0;
  // Thinking models sign their function calls and want the signature back with the call.
  const signatures = new Map<string, string>();

  return async (request, signal) => {
    const { system, contents } = toGeminiContents(request.messages, signatures);
    const body: Record<string, unknown> = {
      contents,
      generationConfig: { maxOutputTokens: request.maxOutputTokens },
      ...(system ? { systemInstruction: { parts: [{ text: system }] } } : {}),
      ...(request.tools.length > 0
        ? { tools: [{ functionDeclarations: request.tools.map(toFunctionDeclaration) }] }
        : {}),
    };
    const url = `${options.baseUrl}/models/${encodeURIComponent(request.model)}:streamGenerateContent?alt=sse`;
    const response = await options.fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-goog-api-key': options.apiKey },
      body: JSON.stringify(body),
      signal,
    });
    if (!response.ok) throw await failureFromResponse(response, options.now());
    if (!response.body) throw new ProviderFailure('protocol', 'Gemini sent an empty answer');

    let content = '';
    let model = request.model;
    let finish: { reason: FinishReason; detail: string } | undefined;
    let usage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
    const toolCalls: ToolCall[] = [];
    for await (const event of readSse(response.body)) {
      const chunk = parseJson(event.data) as GeminiChunk | undefined;
      if (!chunk)
        throw new ProviderFailure('protocol', `Gemini sent unreadable data: ${event.data.slice(0, 200)}`);
      if (chunk.error) {
        const code = typeof chunk.error.code === 'number' ? chunk.error.code : undefined;
        throw streamError(chunk.error.status, chunk.error.message ?? 'error in the stream', code);
      }
      if (chunk.modelVersion) model = chunk.modelVersion;
      if (chunk.usageMetadata) {
        const input = chunk.usageMetadata.promptTokenCount ?? 0;
        // Thinking tokens are billed as output.
        const output =
          (chunk.usageMetadata.candidatesTokenCount ?? 0) + (chunk.usageMetadata.thoughtsTokenCount ?? 0);
        usage = {
          inputTokens: input,
          outputTokens: output,
          totalTokens: chunk.usageMetadata.totalTokenCount ?? input + output,
        };
      }
      const candidate = chunk.candidates?.[0];
      if (!candidate) {
        // The prompt itself was blocked: there will be no candidate.
        const blocked = chunk.promptFeedback?.blockReason;
        if (blocked) finish = { reason: 'refusal', detail: `promptFeedback.blockReason "${blocked}"` };
        continue;
      }
      for (const part of candidate.content?.parts ?? []) {
        if (part.thought) continue;
        if (typeof part.text === 'string' && part.text) {
          content += part.text;
          request.onText?.(part.text);
        }
        if (part.functionCall) {
          counter += 1;
          const id = part.functionCall.id || `${OWN_ID}${counter}`;
          if (part.thoughtSignature) signatures.set(id, part.thoughtSignature);
          toolCalls.push({
            id,
            name: part.functionCall.name ?? '',
            arguments: JSON.stringify(part.functionCall.args ?? {}),
          });
        }
      }
      if (candidate.finishReason) {
        finish = {
          reason: mapFinish(candidate.finishReason),
          detail: `finishReason "${candidate.finishReason}"`,
        };
      }
    }
    // The finish reason comes with the last chunk: without it the answer is not whole.
    if (!finish) throw unterminated('a finishReason');
    const finishReason = toolCalls.length > 0 && finish.reason === 'stop' ? 'tool_calls' : finish.reason;
    return {
      content,
      toolCalls,
      usage,
      finishReason,
      stopDetail: finish.detail,
      model,
    } satisfies ChatResponse;
  };
}

interface GeminiChunk {
  candidates?: {
    content?: {
      parts?: {
        text?: string;
        thought?: boolean;
        thoughtSignature?: string;
        functionCall?: { id?: string; name?: string; args?: unknown };
      }[];
    };
    finishReason?: string;
  }[];
  usageMetadata?: {
    promptTokenCount?: number;
    candidatesTokenCount?: number;
    thoughtsTokenCount?: number;
    totalTokenCount?: number;
  };
  promptFeedback?: { blockReason?: string };
  modelVersion?: string;
  error?: { code?: number; message?: string; status?: string };
}

// Gemini's finish reasons (FinishReason in its API reference) as rune's.
const REFUSALS = new Set([
  'SAFETY',
  'RECITATION',
  'BLOCKLIST',
  'PROHIBITED_CONTENT',
  'SPII',
  'LANGUAGE',
  'IMAGE_SAFETY',
  'IMAGE_PROHIBITED_CONTENT',
  'IMAGE_RECITATION',
]);
const MALFORMED = new Set(['MALFORMED_FUNCTION_CALL', 'UNEXPECTED_TOOL_CALL', 'TOO_MANY_TOOL_CALLS']);

function mapFinish(reason: string): FinishReason {
  if (reason === 'STOP') return 'stop';
  if (reason === 'MAX_TOKENS') return 'length';
  if (REFUSALS.has(reason)) return 'refusal';
  if (MALFORMED.has(reason)) return 'malformed_call';
  return 'other';
}

/** rune's messages as Gemini contents: system text apart, tool results as functionResponse parts. */
export function toGeminiContents(
  messages: readonly ChatMessage[],
  signatures: ReadonlyMap<string, string> = new Map(),
): { system: string; contents: Content[] } {
  const system: string[] = [];
  const contents: Content[] = [];
  const push = (role: Content['role'], parts: Part[]) => {
    if (parts.length === 0) return;
    const last = contents[contents.length - 1];
    // Gemini wants turns to alternate; consecutive same-role messages become one turn.
    if (last && last.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };
  for (const message of messages) {
    switch (message.role) {
      case 'system':
        system.push(message.content);
        break;
      case 'user':
        push('user', [
          { text: message.content },
          ...(message.images ?? []).map((image) => ({
            inlineData: { mimeType: image.mediaType, data: image.data },
          })),
        ]);
        break;
      case 'assistant': {
        const parts: Part[] = message.content ? [{ text: message.content }] : [];
        for (const call of message.toolCalls ?? []) {
          const signature = signatures.get(call.id);
          parts.push({
            functionCall: {
              ...(ownId(call.id) ? {} : { id: call.id }),
              name: call.name,
              args: argsObject(call.arguments),
            },
            ...(signature ? { thoughtSignature: signature } : {}),
          });
        }
        push('model', parts);
        break;
      }
      case 'tool':
        push('user', [
          {
            functionResponse: {
              ...(ownId(message.toolCallId) ? {} : { id: message.toolCallId }),
              name: message.name,
              response: message.isError ? { error: message.content } : { content: message.content },
            },
          },
        ]);
        break;
    }
  }
  return { system: system.join('\n\n'), contents };
}

function ownId(id: string): boolean {
  return id.startsWith(OWN_ID);
}

function argsObject(text: string): Record<string, unknown> {
  const parsed = parseJson(text);
  return parsed && typeof parsed === 'object' && !Array.isArray(parsed)
    ? (parsed as Record<string, unknown>)
    : {};
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function toFunctionDeclaration(tool: ToolDefinition): Record<string, unknown> {
  const parameters = toGeminiSchema(tool.parameters);
  const empty = !parameters.properties || Object.keys(parameters.properties as object).length === 0;
  // Gemini rejects an object schema without properties; a tool without arguments omits them.
  return { name: tool.name, description: tool.description, ...(empty ? {} : { parameters }) };
}

const KEEP = new Set([
  'type',
  'description',
  'enum',
  'properties',
  'required',
  'items',
  'minItems',
  'maxItems',
  'minimum',
  'maximum',
  'minLength',
  'maxLength',
  'pattern',
  'nullable',
  'anyOf',
  'title',
  'format',
  'propertyOrdering',
]);
const FORMATS: Record<string, readonly string[]> = {
  string: ['enum', 'date-time'],
  integer: ['int32', 'int64'],
  number: ['float', 'double'],
};

/**
 * A JSON Schema reduced to what Gemini's function declarations accept: unknown keywords dropped
 * ($schema, additionalProperties, default, examples…), `type: [x, "null"]` → `nullable`, `const`
 * → a one-value enum, `oneOf` → `anyOf`, enum values as strings, `required` limited to real properties.
 */
export function toGeminiSchema(schema: unknown): Record<string, unknown> {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return {};
  const input = schema as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  let type = input.type;
  if (Array.isArray(type)) {
    const real = type.filter((t) => t !== 'null');
    if (real.length < type.length) out.nullable = true;
    type = real[0];
  }
  if (typeof type === 'string') out.type = type;
  if (input.const !== undefined) out.enum = [String(input.const)];
  for (const [key, value] of Object.entries(input)) {
    if (!KEEP.has(key) || key === 'type' || value === undefined) continue;
    if (key === 'properties' && value && typeof value === 'object') {
      out.properties = Object.fromEntries(
        Object.entries(value).map(([name, inner]) => [name, toGeminiSchema(inner)]),
      );
    } else if (key === 'items') {
      out.items = toGeminiSchema(value);
    } else if (key === 'anyOf' && Array.isArray(value)) {
      out.anyOf = value.map(toGeminiSchema);
    } else if (key === 'enum' && Array.isArray(value)) {
      out.enum = value.filter((v) => v !== null).map(String);
      out.type ??= 'string';
    } else if (key === 'format') {
      if (typeof out.type === 'string' && FORMATS[out.type]?.includes(String(value))) out.format = value;
    } else {
      out[key] = value;
    }
  }
  if (Array.isArray(input.oneOf)) out.anyOf = input.oneOf.map(toGeminiSchema);
  if (Array.isArray(out.required)) {
    const names = new Set(Object.keys((out.properties as object | undefined) ?? {}));
    out.required = (out.required as unknown[]).filter((name) => typeof name === 'string' && names.has(name));
    if ((out.required as unknown[]).length === 0) delete out.required;
  }
  if (out.enum && out.type !== 'string') out.type = 'string';
  return out;
}
