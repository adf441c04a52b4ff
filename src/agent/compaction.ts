// Context compaction: when a conversation nears the model's context window, its older part is
// replaced by a summary the model writes, keeping the system prompt and the most recent turns.
import type { ChatMessage, Provider, Usage } from '../providers/types.ts';

export const SUMMARY_PREFIX = '[Summary of the earlier conversation]';

/** A rough token count (4 characters a token): enough to decide when to compact. */
export function estimateTokens(messages: readonly ChatMessage[]): number {
  let chars = 0;
  for (const message of messages) {
    chars += message.content.length + 16;
    if (message.role === 'assistant') {
      for (const call of message.toolCalls ?? []) chars += call.name.length + call.arguments.length + 16;
    }
  }
  return Math.ceil(chars / 4);
}

/**
 * Where the kept tail starts: at most `keep` messages from the end, moved back so it never begins
 * with a tool result (a result must stay with the call that asked for it).
 */
export function compactionCut(messages: readonly ChatMessage[], keep: number): number {
  let prefix = 0;
  while (prefix < messages.length && messages[prefix]!.role === 'system') prefix++;
  let cut = Math.max(prefix, messages.length - keep);
  while (cut > prefix && messages[cut]?.role === 'tool') cut--;
  return cut;
}

function transcript(messages: readonly ChatMessage[]): string {
  return messages
    .map((m) => {
      if (m.role === 'tool')
        return `tool result (${m.name})${m.isError ? ' [error]' : ''}:\n${m.content.slice(0, 4000)}`;
      if (m.role === 'assistant') {
        const calls = (m.toolCalls ?? []).map((c) => `\n-> ${c.name} ${c.arguments.slice(0, 1000)}`).join('');
        return `assistant: ${m.content}${calls}`;
      }
      return `${m.role}: ${m.content}`;
    })
    .join('\n\n');
}

export interface CompactionResult {
  messages: ChatMessage[];
  beforeTokens: number;
  afterTokens: number;
  usage: Usage;
}

/** Summarises everything between the leading system messages and the last `keep` messages. */
export async function compactMessages(options: {
  provider: Provider;
  model: string;
  messages: readonly ChatMessage[];
  keep?: number;
  maxOutputTokens?: number;
  signal?: AbortSignal;
}): Promise<CompactionResult | undefined> {
  const { messages } = options;
  let prefix = 0;
  while (prefix < messages.length && messages[prefix]!.role === 'system') prefix++;
  // A short conversation with one huge turn still compacts: the kept tail shrinks down to the last
  // message (the prompt being answered) until there is something older to summarise.
  let cut = prefix;
  for (let keep = options.keep ?? 6; keep >= 1; keep--) {
    cut = compactionCut(messages, keep);
    if (cut - prefix >= 2) break;
  }
  if (cut - prefix < 1) return undefined;
  const older = messages.slice(prefix, cut);
  const response = await options.provider.complete({
    model: options.model,
    messages: [
      {
        role: 'system',
        content:
          'You compress conversations between a user and an AI agent. Write a concise summary that keeps every fact, decision, file path, command and result the agent still needs, and what is still to do.',
      },
      { role: 'user', content: `Summarise this conversation:\n\n${transcript(older)}` },
    ],
    tools: [],
    maxOutputTokens: Math.min(options.maxOutputTokens ?? 2048, 2048),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const compacted: ChatMessage[] = [
    ...messages.slice(0, prefix),
    { role: 'system', content: `${SUMMARY_PREFIX}\n${response.content.trim()}` },
    ...messages.slice(cut),
  ];
  return {
    messages: compacted,
    beforeTokens: estimateTokens(messages),
    afterTokens: estimateTokens(compacted),
    usage: response.usage,
  };
}
