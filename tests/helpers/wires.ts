// The four wires rune speaks, pointed at the scripted mock: how the CLI and a Concourse source name
// each, and the words each wire uses for how an answer ended (docs/adr/0033-run-outcomes.md).
import type { MockLlm } from './mock-llm.ts';

export type Wire = 'openai' | 'anthropic' | 'gemini' | 'copilot';
export const WIRES: Wire[] = ['openai', 'anthropic', 'gemini', 'copilot'];

export const WIRE_LABELS: Record<Wire, string> = {
  openai: 'OpenAI-compatible provider',
  anthropic: 'Anthropic',
  gemini: 'Gemini',
  copilot: 'GitHub Copilot',
};

const KEYS: Record<Wire, string> = {
  openai: 'sk-test-outcomes-0123456789abcdef',
  anthropic: 'sk-ant-api03-outcomes-0123456789abcd',
  gemini: 'AIzaSyOutcomes0123456789abcdefghijklm',
  copilot: 'ghu_outcomesGithubToken0123456789ab',
};

/** The key, the endpoint and the environment of one wire against the mock. */
export function wireSetup(
  wire: Wire,
  mock: MockLlm,
): { key: string; baseUrl: string | undefined; env: Record<string, string> } {
  switch (wire) {
    case 'gemini':
      return { key: KEYS.gemini, baseUrl: mock.geminiBaseUrl, env: {} };
    case 'copilot':
      // The token exchange names the mock as Copilot's API.
      return { key: KEYS.copilot, baseUrl: undefined, env: { RUNE_COPILOT_TOKEN_URL: mock.copilotTokenUrl } };
    default:
      return { key: KEYS[wire], baseUrl: mock.baseUrl, env: {} };
  }
}

/** How each wire says the token limit cut the answer, and that it refused. */
export const LENGTH_WORDS: Record<Wire, string> = {
  openai: 'finish_reason "length"',
  anthropic: 'stop_reason "max_tokens"',
  gemini: 'finishReason "MAX_TOKENS"',
  copilot: 'finish_reason "length"',
};
export const REFUSAL_WORDS: Record<Wire, string> = {
  openai: 'a refusal (delta.refusal)',
  anthropic: 'stop_reason "refusal"',
  gemini: 'finishReason "SAFETY"',
  copilot: 'finish_reason "content_filter"',
};
/** What a stream without its end event lacked, in each wire's terms. */
export const END_WORDS: Record<Wire, string> = {
  openai: 'a finish_reason or [DONE]',
  anthropic: 'a stop_reason (message_delta)',
  gemini: 'a finishReason',
  copilot: 'a finish_reason or [DONE]',
};
