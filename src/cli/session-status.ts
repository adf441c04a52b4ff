// What the session says about time and tokens: the status row while something runs (elapsed time,
// tokens so far), the line after each turn (tokens used, context left) and `/status` (the session's
// totals and their cost where rune.toml gives prices). Pure text from the state.
import type { AgentRunResult } from '../agent/types.ts';
import type { Activity, SessionState } from './session-context.ts';

/** 1234 → "1.2k", 1234567 → "1.2M". */
export function tokens(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/** 4.2s, 1m 05s. */
export function elapsed(ms: number): string {
  const seconds = Math.max(0, ms) / 1000;
  if (seconds < 60) return `${seconds < 10 ? seconds.toFixed(1) : Math.floor(seconds)}s`;
  const minutes = Math.floor(seconds / 60);
  return `${minutes}m ${String(Math.floor(seconds % 60)).padStart(2, '0')}s`;
}

/** The status row: `thinking · 12s · ↑ 1.2k ↓ 85 tokens · esc to interrupt`. */
export function statusText(activity: Activity, now: number): string {
  // Output tokens of the call still streaming are estimated (4 characters each) until it reports them.
  const out = activity.usage.outputTokens + Math.round(activity.streamed / 4);
  const usage =
    activity.usage.inputTokens > 0 || out > 0
      ? ` · ↑ ${tokens(activity.usage.inputTokens)} ↓ ${tokens(out)} tokens`
      : '';
  return `${activity.label} · ${elapsed(now - activity.since)}${usage} · esc to interrupt`;
}

/** Context used by the last request, and what is left of the window. */
function contextText(state: SessionState): string {
  const window = state.config.context_window;
  const used = Math.min(state.contextUsed, window);
  const left = Math.max(0, Math.round(((window - used) / window) * 100));
  return `context ${tokens(used)}/${tokens(window)} (${left}% left)`;
}

/** The line after a turn: `─ 2 model calls · 1.3k tokens (↑ 1.2k ↓ 85) · context 1.3k/128k (99% left) · 3.4s`. */
export function turnSummary(state: SessionState, result: AgentRunResult, ms: number): string {
  const u = result.usage;
  const calls = result.steps === 1 ? '1 model call' : `${result.steps} model calls`;
  return `─ ${calls} · ${tokens(u.totalTokens)} tokens (↑ ${tokens(u.inputTokens)} ↓ ${tokens(u.outputTokens)}) · ${contextText(state)} · ${elapsed(ms)}`;
}

/** A cost in the configured prices (per million tokens); undefined when rune.toml gives none. */
export function cost(state: SessionState): number | undefined {
  const { input_price: input, output_price: output } = state.config;
  if (input === undefined && output === undefined) return undefined;
  return ((input ?? 0) * state.totals.inputTokens + (output ?? 0) * state.totals.outputTokens) / 1_000_000;
}

/** `/status`. */
export function statusReport(state: SessionState, model: string): string {
  const t = state.totals;
  const price = cost(state);
  return [
    `model:     ${model}`,
    `policy:    ${state.mode}`,
    `session:   ${state.sessionId} (${state.turns} turn${state.turns === 1 ? '' : 's'}, ${state.modelCalls} model call${state.modelCalls === 1 ? '' : 's'}, ${state.messages.length} messages)`,
    `tokens:    ${t.totalTokens} (input ${t.inputTokens}, output ${t.outputTokens})`,
    `context:   ${contextText(state).replace(/^context /, '')}`,
    `cost:      ${
      price === undefined
        ? 'unknown (set input_price and output_price in rune.toml: the price of a million tokens)'
        : `${price.toFixed(4)} (at ${state.config.input_price ?? 0} / ${state.config.output_price ?? 0} per million input / output tokens)`
    }`,
    '',
  ].join('\n');
}
