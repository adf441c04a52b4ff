// One turn of the interactive session: the prompt goes to the agent, its answer streams in
// (secrets held back until they can be masked), each tool call gets one line, and the session is
// saved once the turn has an answer.

import { runAgent } from '../agent/run.ts';
import type { AgentEvent, AgentRunResult } from '../agent/types.ts';
import { redact } from '../core/redact.ts';
import { fitLine, lineWidth, paint, ToolLine } from './format.ts';
import type { SessionContext } from './session-context.ts';
import { answeredInRun, saveSession } from './sessions.ts';
import { StreamRedactor } from './stream-redactor.ts';

const STOP_TEXT: Record<string, string> = {
  MaxSteps: 'stopped: the step limit was reached',
  TokenBudgetExhausted: 'stopped: the token budget is used up',
  UserInterrupt: 'cancelled',
};

/** Writes the run's events as they come: streamed text, and one line per tool call. */
class TurnView {
  readonly #lines: ToolLine;
  readonly #scrub = new StreamRedactor();
  #atLineStart = true;
  /** Whether any answer text was streamed (else the final answer is written at the end). */
  streamed = false;

  constructor(private readonly session: SessionContext) {
    this.#lines = new ToolLine(session.style);
  }

  text(chunk: string): void {
    if (!chunk) return;
    this.session.write(chunk);
    this.#atLineStart = chunk.endsWith('\n');
  }

  /** Flushes text the redactor still holds and ends the line. */
  finish(answer: string | undefined): void {
    this.text(this.#scrub.flush());
    if (!this.streamed && answer) this.text(redact(answer));
    if (!this.#atLineStart) this.text('\n');
  }

  readonly onEvent = (event: AgentEvent): void => {
    const { spinner, io, state } = this.session;
    switch (event.type) {
      case 'text':
        spinner.stop();
        this.streamed = true;
        this.text(this.#scrub.push(event.delta));
        break;
      case 'tool_call':
        spinner.stop();
        this.text(this.#scrub.flush());
        if (!this.#atLineStart) this.text('\n');
        this.#lines.start(event);
        spinner.start(`running ${event.name}`);
        break;
      case 'policy_decision':
        this.#lines.decide(event);
        break;
      case 'tool_result':
        spinner.stop();
        this.text(`${fitLine(this.#lines.finish(event), lineWidth(io.output))}\n`);
        if (event.layers) state.lastLayers = event.layers;
        spinner.start('thinking');
        break;
      case 'run_end':
        spinner.stop();
        this.text(this.#scrub.flush());
        break;
      default:
        break;
    }
  };
}

export async function runTurn(session: SessionContext, prompt: string): Promise<void> {
  const { setup, state, spinner, runtime } = session;
  state.controller = new AbortController();
  const view = new TurnView(session);
  spinner.start('thinking');
  const history = state.messages;
  const checkpoints = await state.checkpoints?.begin(state.sessionId, prompt, history);
  const result = await runAgent({
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
    ...(setup.systemPrompt === undefined ? {} : { systemPrompt: setup.systemPrompt }),
  });
  spinner.stop();
  state.checkpoints?.end();
  view.finish(result.answer);
  endTurn(session, prompt, history, result);
  // An unknown @skill was already named by the run's warning, with the folders it looked in.
  state.controller = undefined;
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
  state.totals = {
    inputTokens: state.totals.inputTokens + result.usage.inputTokens,
    outputTokens: state.totals.outputTokens + result.usage.outputTokens,
    totalTokens: state.totals.totalTokens + result.usage.totalTokens,
  };
  if (result.error) write(`${paint(style, 'red', `error: ${redact(result.error.message)}`)}\n`);
  else if (STOP_TEXT[result.status]) write(`${paint(style, 'yellow', STOP_TEXT[result.status]!)}\n`);
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
