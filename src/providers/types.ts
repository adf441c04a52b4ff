// The one provider interface every model backend implements (OpenAI-compatible, OpenRouter,
// Copilot, Gemini, Anthropic). Messages are rune's own shape; each provider converts at its edge.
import type { ProviderName } from '../config/schema.ts';

export interface ToolCall {
  id: string;
  name: string;
  /** The arguments exactly as the model sent them (JSON text); validated by the tool, not here. */
  arguments: string;
}

/** An image sent with a prompt (`--image`, an `@picture.png` mention), base64-encoded. */
export interface ImageAttachment {
  mediaType: 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp';
  data: string;
  /** Where it came from, for messages and the transcript. */
  name: string;
}

export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string; images?: ImageAttachment[] }
  | { role: 'assistant'; content: string; toolCalls?: ToolCall[] }
  | { role: 'tool'; toolCallId: string; name: string; content: string; isError?: boolean };

export interface ToolDefinition {
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
}

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
}

export interface ChatRequest {
  model: string;
  messages: readonly ChatMessage[];
  /** Empty on the answer-now round: the model must answer with what it has. */
  tools: readonly ToolDefinition[];
  maxOutputTokens: number;
  signal?: AbortSignal;
  /** Streamed text deltas, for the interactive session and the notes chat. */
  onText?: (delta: string) => void;
}

/**
 * How an answer ended, from the wire's end event (docs/adr/0033-run-outcomes.md). A stream that ends
 * without one is no response at all: the provider throws, and the retry policy treats it as a
 * network failure.
 */
export type FinishReason =
  /** The model finished its answer. */
  | 'stop'
  /** The model asks for tool calls. */
  | 'tool_calls'
  /** The output token limit (max_output_tokens) cut the answer, perhaps inside a tool call. */
  | 'length'
  /** The model, or the provider's filter, refused to answer. */
  | 'refusal'
  /** The model's tool call was malformed and the provider dropped it (Gemini). */
  | 'malformed_call'
  /** An end the wire names but rune does not know; `stopDetail` says which. */
  | 'other';

export interface ChatResponse {
  content: string;
  toolCalls: ToolCall[];
  usage: Usage;
  finishReason: FinishReason;
  /** The wire's own words for the end, for messages: `stop_reason "refusal"`, `finishReason "SAFETY"`. */
  stopDetail?: string;
  /** The model that answered, as the provider names it. */
  model: string;
}

export interface Provider {
  readonly name: ProviderName;
  /** Whether rune sends images on this wire (absent: no). */
  readonly images?: boolean;
  complete(request: ChatRequest): Promise<ChatResponse>;
}
