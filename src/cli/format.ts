// How the CLI shows a run to a person: one readable line per tool call (call, decision, result,
// sandbox layers), in colour only on a terminal without NO_COLOR.
import type { AgentEvent } from '../agent/types.ts';
import { terminalLine, terminalText } from '../core/terminal-text.ts';
import type { PolicyDecision } from '../policy/types.ts';
import type { LayerReport } from '../sandbox/types.ts';

export interface Style {
  color: boolean;
}

const codes = {
  dim: [2, 22],
  red: [31, 39],
  green: [32, 39],
  yellow: [33, 39],
  blue: [34, 39],
  magenta: [35, 39],
  cyan: [36, 39],
  bold: [1, 22],
  italic: [3, 23],
  underline: [4, 24],
  inverse: [7, 27],
  strike: [9, 29],
};
export type Paint = keyof typeof codes;

export function paint(style: Style, what: Paint, text: string): string {
  if (!style.color) return text;
  const [open, close] = codes[what];
  return `\x1b[${open}m${text}\x1b[${close}m`;
}

/** Colour when writing to a terminal, unless NO_COLOR is set (https://no-color.org) or TERM is dumb. */
export function styleFor(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): Style {
  return { color: Boolean(stream.isTTY) && !env.NO_COLOR && env.TERM !== 'dumb' };
}

/** The width to cut one-line output to: a terminal's columns; none when not writing to a terminal. */
export function lineWidth(stream: { isTTY?: boolean; columns?: number }): number | undefined {
  return stream.isTTY && stream.columns && stream.columns > 0 ? stream.columns : undefined;
}

const SGR = /(\x1b\[[0-9;]*m)/;

/**
 * Cuts one line to `width` visible characters with an ellipsis, so a terminal does not wrap it.
 * Colour codes do not count and are all kept, so a cut never leaves a colour switched on.
 */
export function fitLine(line: string, width: number | undefined): string {
  if (width === undefined) return line;
  const parts = line.split(SGR);
  const visible = parts.reduce((n, part, i) => (i % 2 === 1 ? n : n + [...part].length), 0);
  if (visible <= width) return line;
  let room = Math.max(0, width - 1);
  let out = '';
  let cut = false;
  parts.forEach((part, i) => {
    if (i % 2 === 1) {
      out += part;
      return;
    }
    if (cut) return;
    const chars = [...part];
    if (chars.length <= room) {
      out += part;
      room -= chars.length;
      return;
    }
    out += `${chars.slice(0, room).join('')}…`;
    cut = true;
  });
  return out;
}

/** Untrusted text (arguments, results, reasons) as one line without escape sequences, cut at `max`. */
function oneLine(text: string, max: number): string {
  const flat = terminalLine(text).replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

export function formatArguments(raw: string): string {
  try {
    const value = JSON.parse(raw) as unknown;
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      return oneLine(
        Object.entries(value)
          .map(([k, v]) => `${k}=${typeof v === 'string' ? JSON.stringify(v) : JSON.stringify(v)}`)
          .join(' '),
        160,
      );
    }
  } catch {
    // Shown as sent.
  }
  return oneLine(raw, 160);
}

/** A confirm-mode preview (a unified diff), indented, additions green and removals red. */
export function formatPreview(preview: string, style: Style): string {
  return terminalText(preview)
    .split('\n')
    .map((line) => {
      const painted =
        line.startsWith('+') && !line.startsWith('+++')
          ? paint(style, 'green', line)
          : line.startsWith('-') && !line.startsWith('---')
            ? paint(style, 'red', line)
            : line.startsWith('@@')
              ? paint(style, 'cyan', line)
              : line;
      return `  ${painted}`;
    })
    .join('\n');
}

export function formatLayers(layers: readonly LayerReport[] | undefined): string | undefined {
  if (!layers) return undefined;
  const applied = layers.filter((l) => l.applied).map((l) => l.layer);
  return applied.length > 0 ? `sandbox: ${applied.join('+')}` : 'sandbox: no layers applied';
}

/** A refusal's reason is shown whole: cut, it would hide how to allow the call. */
function decisionText(decision: PolicyDecision | undefined, withReason: boolean): string {
  if (!decision) return 'not checked';
  if (decision.kind === 'allow') return `allowed (${decision.rule})`;
  if (decision.kind === 'deny')
    return `blocked (${decision.rule})${withReason ? `: ${terminalLine(decision.reason)}` : ''}`;
  return `needs confirmation (${decision.rule})`;
}

/**
 * Collects a tool call's events and renders one line when its result arrives:
 * `> execute_cmd cmd="ls" | allowed (commands) | ok: exit code: 0 | sandbox: landlock+seccomp`.
 */
export class ToolLine {
  readonly #calls = new Map<string, { name: string; args: string; decision?: PolicyDecision }>();
  constructor(private readonly style: Style) {}

  /** The call as it starts, for the interactive session to show before a long run. */
  start(event: Extract<AgentEvent, { type: 'tool_call' }>): string {
    this.#calls.set(event.id, { name: event.name, args: event.arguments });
    return `${paint(this.style, 'cyan', '>')} ${paint(this.style, 'bold', event.name)} ${formatArguments(event.arguments)}`;
  }

  decide(event: Extract<AgentEvent, { type: 'policy_decision' }>): void {
    const entry = this.#calls.get(event.id);
    if (entry) entry.decision = event.decision;
  }

  finish(event: Extract<AgentEvent, { type: 'tool_result' }>): string {
    return this.finishParts(event, true).line;
  }

  /**
   * The call's line and its decision. `withReason`: a refusal's reason is part of the line (pipe
   * mode's trace); without, the caller shows it on lines of its own (the session).
   */
  finishParts(
    event: Extract<AgentEvent, { type: 'tool_result' }>,
    withReason = false,
  ): { line: string; decision: PolicyDecision | undefined } {
    const entry = this.#calls.get(event.id) ?? { name: event.name, args: '' };
    this.#calls.delete(event.id);
    const decision = decisionText(entry.decision, withReason);
    const decisionPainted =
      entry.decision?.kind === 'allow'
        ? paint(this.style, 'green', decision)
        : paint(this.style, 'red', decision);
    const outcome = event.isError
      ? paint(this.style, 'red', `error: ${oneLine(event.content.replace(/^error:\s*/, ''), 100)}`)
      : `ok: ${oneLine(event.content, 80)}`;
    const parts = [
      `${paint(this.style, 'cyan', '>')} ${paint(this.style, 'bold', entry.name)} ${formatArguments(entry.args)}`,
      decisionPainted,
    ];
    if (entry.decision?.kind === 'allow') parts.push(outcome);
    const layers = formatLayers(event.layers);
    if (layers) parts.push(paint(this.style, 'dim', layers));
    return { line: parts.join(paint(this.style, 'dim', ' | ')), decision: entry.decision };
  }
}
