// One turn of the interactive session: the prompt goes to the agent, its answer streams in as
// rendered Markdown (secrets held back until they can be masked), each tool call gets its line (a
// refusal its whole reason and how to allow it, an edit its diff, a command a few lines of
// output), and the turn ends with its tokens and the context left. The session is saved once the
// turn has an answer.

import { runAgent } from '../agent/run.ts';
import type { AgentEvent, AgentRunResult } from '../agent/types.ts';
import { redact } from '../core/redact.ts';
import { terminalText } from '../core/terminal-text.ts';
import type { ImageAttachment } from '../providers/types.ts';
import { renderDiff } from './diff-view.ts';
import { fitLine, paint, ToolLine } from './format.ts';
import { allowHint } from './session-allow.ts';
import type { SessionContext } from './session-context.ts';
import { turnSummary } from './session-status.ts';
import { answeredInRun, saveSession } from './sessions.ts';
import { StreamRedactor } from './stream-redactor.ts';
import { highlighter } from './tui/highlight-loader.ts';
import { MarkdownStream } from './tui/markdown-stream.ts';

const STOP_TEXT: Record<string, string> = {
  MaxSteps: 'stopped: the step limit was reached',
  TokenBudgetExhausted: 'stopped: the token budget is used up',
  UserInterrupt: 'cancelled',
};

/** Lines of a command's output shown under its tool line. */
const OUTPUT_LINES = 6;

/** Writes the run's events as they come: rendered text, and one entry per tool call. */
export class TurnView {
  readonly #lines: ToolLine;
  readonly #scrub = new StreamRedactor();
  #markdown: MarkdownStream;
  /** Whether any answer text was streamed (else the final answer is written at the end). */
  streamed = false;
  readonly #calls = new Map<string, { name: string; args: string }>();

  constructor(private readonly session: SessionContext) {
    this.#lines = new ToolLine(session.style);
    this.#markdown = this.#newMarkdown();
  }

  #newMarkdown(): MarkdownStream {
    const { style, terminal } = this.session;
    return new MarkdownStream({
      style,
      width: Math.max(20, terminal.screen.columns),
      ...(highlighter() ? { highlight: highlighter()! } : {}),
    });
  }

  /** The answer not printed yet (an unfinished block), for the live area. */
  preview(): string[] {
    return this.#markdown.preview();
  }

  #text(raw: string): void {
    if (!raw) return;
    const lines = this.#markdown.push(terminalText(raw));
    if (lines.length > 0) this.session.write(`${lines.join('\n')}\n`);
  }

  /** Ends the answer text streamed so far: what the renderer still holds is printed. */
  #endText(): void {
    this.#text(this.#scrub.flush());
    const rest = this.#markdown.finish();
    if (rest.length > 0) this.session.write(`${rest.join('\n')}\n`);
    this.#markdown = this.#newMarkdown();
  }

  finish(answer: string | undefined): void {
    if (!this.streamed && answer) this.#text(redact(answer));
    this.#endText();
  }

  readonly onEvent = (event: AgentEvent): void => {
    const { state } = this.session;
    const activity = state.activity;
    switch (event.type) {
      case 'text':
        this.streamed = true;
        if (activity) {
          activity.streamed += event.delta.length;
          activity.label = 'answering';
        }
        this.#text(this.#scrub.push(event.delta));
        break;
      case 'tool_call':
        this.#endText();
        this.#lines.start(event);
        this.#calls.set(event.id, { name: event.name, args: event.arguments });
        if (activity) activity.label = `running ${event.name}`;
        break;
      case 'policy_decision':
        this.#lines.decide(event);
        if (event.decision.kind === 'deny' && event.decision.suggestion) {
          state.lastBlocked = { tool: event.name, suggestion: event.decision.suggestion };
        }
        break;
      case 'tool_result':
        this.#result(event);
        if (event.layers) state.lastLayers = event.layers;
        if (activity) activity.label = 'thinking';
        break;
      case 'model_usage':
        if (activity) {
          activity.usage = {
            inputTokens: activity.usage.inputTokens + event.usage.inputTokens,
            outputTokens: activity.usage.outputTokens + event.usage.outputTokens,
            totalTokens: activity.usage.totalTokens + event.usage.totalTokens,
          };
          activity.streamed = 0;
        }
        state.modelCalls += 1;
        state.contextUsed = event.usage.inputTokens + event.usage.outputTokens;
        break;
      case 'compaction':
        this.session.write(
          `${paint(this.session.style, 'dim', `(conversation compacted: about ${event.beforeTokens} → ${event.afterTokens} tokens)`)}\n`,
        );
        break;
      default:
        break;
    }
  };

  #result(event: Extract<AgentEvent, { type: 'tool_result' }>): void {
    const { style, write, terminal } = this.session;
    const call = this.#calls.get(event.id);
    this.#calls.delete(event.id);
    const { line, decision } = this.#lines.finishParts(event);
    if (decision?.kind === 'deny') {
      // A refusal is never cut: the whole reason, then how to allow it.
      write(`${line}\n  ${paint(style, 'red', terminalText(decision.reason))}\n`);
      if (decision.suggestion) write(`  ${allowHint(style, decision.suggestion, this.session)}\n`);
      return;
    }
    write(`${fitLine(line, terminal.screen.columns)}\n`);
    if (event.diff) {
      this.session.state.lastDiffs.push(event.diff);
      write(
        `${renderDiff(event.diff, style)
          .lines.map((l) => `  ${l}`)
          .join('\n')}\n`,
      );
    } else if (call?.name === 'execute_cmd' && !event.isError) {
      write(commandOutput(event.content, style, terminal.screen.columns));
    }
  }
}

/** The first lines of a command's output (stdout, then stderr), dimmed, with how many were left out. */
function commandOutput(content: string, style: SessionContext['style'], width: number): string {
  const lines = terminalText(content)
    .split('\n')
    .slice(1)
    .filter((line) => line !== 'stdout: (empty)' && line !== 'stderr: (empty)' && line !== 'stdout:');
  if (lines.length === 0) return '';
  const shown = lines
    .slice(0, OUTPUT_LINES)
    .map((line) => fitLine(paint(style, 'dim', `    ${line}`), width));
  if (lines.length > OUTPUT_LINES)
    shown.push(paint(style, 'dim', `    … ${lines.length - OUTPUT_LINES} more lines`));
  return `${shown.join('\n')}\n`;
}

export async function runTurn(
  session: SessionContext,
  prompt: string,
  shown = prompt,
  images: ImageAttachment[] = [],
): Promise<TurnView> {
  const { setup, state, runtime, terminal } = session;
  state.controller = new AbortController();
  state.lastDiffs = [];
  const view = new TurnView(session);
  for (const image of images)
    session.write(
      `${paint(session.style, 'dim', `  + image ${image.name} (${Math.ceil((image.data.length * 3) / 4 / 1024)} KiB)`)}\n`,
    );
  state.activity = {
    label: 'thinking',
    since: Date.now(),
    usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
    streamed: 0,
  };
  state.preview = () => view.preview();
  terminal.busy(true);
  const history = state.messages;
  const checkpoints = await state.checkpoints?.begin(state.sessionId, prompt, history);
  let result: AgentRunResult;
  try {
    result = await runAgent({
      prompt,
      config: state.config,
      cwd: setup.cwd,
      env: setup.env,
      logger: session.logger,
      history,
      sessionId: state.sessionId,
      provider: session.provider,
      policy: state.policy,
      executor: runtime.executor,
      tools: runtime.registry,
      takeNotices: () => runtime.mcp?.takeNotices() ?? [],
      confirmer: session.confirmer,
      signal: state.controller.signal,
      onEvent: view.onEvent,
      ...(checkpoints ? { checkpoints } : {}),
      ...(images.length > 0 ? { images } : {}),
      ...(setup.systemPrompt === undefined ? {} : { systemPrompt: setup.systemPrompt }),
    });
  } finally {
    state.preview = () => [];
    state.checkpoints?.end();
  }
  view.finish(result.answer);
  endTurn(session, shown, history, result);
  state.controller = undefined;
  state.activity = undefined;
  terminal.busy(false);
  return view;
}

/** Counts the turn's tokens, says why it stopped early, and saves the session once it has an answer. */
function endTurn(
  session: SessionContext,
  prompt: string,
  history: SessionContext['state']['messages'],
  result: AgentRunResult,
): void {
  const { state, style, write, setup } = session;
  state.messages = result.messages;
  state.turns += 1;
  state.totals = {
    inputTokens: state.totals.inputTokens + result.usage.inputTokens,
    outputTokens: state.totals.outputTokens + result.usage.outputTokens,
    totalTokens: state.totals.totalTokens + result.usage.totalTokens,
  };
  if (result.error) write(`${paint(style, 'red', `error: ${terminalText(redact(result.error.message))}`)}\n`);
  else if (STOP_TEXT[result.status]) write(`${paint(style, 'yellow', STOP_TEXT[result.status]!)}\n`);
  write(
    `${paint(style, 'dim', turnSummary(state, result, Date.now() - (state.activity?.since ?? Date.now())))}\n`,
  );
  try {
    if (answeredInRun(result, history))
      state.stored = saveSession(setup.env, result, {
        cwd: setup.cwd,
        prompt,
        ...(state.stored ? { previous: state.stored } : {}),
      });
  } catch (error) {
    session.logger.warn('cli.session_not_saved', { message: (error as Error).message });
  }
}
