// Pipe mode: one run, no questions, the answer alone on stdout (or one JSON object with --json, or
// one event per line with --output ndjson); progress and the tool trace go to stderr.
import { exitCodeForResult, runAgent } from '../agent/run.ts';
import type { AgentEvent } from '../agent/types.ts';
import { markMainPath } from '../core/code-cache.ts';
import { RuneError } from '../core/errors.ts';
import { redact, redactValue } from '../core/redact.ts';
import { stderr, stdout } from '../core/stdio.ts';
import { terminalText } from '../core/terminal-text.ts';
import { newUuid } from '../core/uuid.ts';
import { type AgentSetup, resultJson, resumedHistory } from './agent.ts';
import { SessionCheckpoints } from './checkpoint-session.ts';
import { styleFor, ToolLine } from './format.ts';
import { startRuntime } from './runtime.ts';
import { answeredInRun, saveSession } from './sessions.ts';
import { StreamRedactor } from './stream-redactor.ts';

export interface PipeIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  stderrStream: { isTTY?: boolean };
  /** On a terminal the answer is shown, so its escape sequences are removed. */
  stdoutStream?: { isTTY?: boolean };
}

const defaultIo: PipeIo = {
  stdout: (text) => stdout.write(text),
  stderr: (text) => stderr.write(text),
  stderrStream: stderr,
  stdoutStream: stdout,
};

const STOP_MESSAGES: Record<string, string> = {
  MaxSteps: 'stopped: the step limit (--max-steps) was reached without a final answer',
  TokenBudgetExhausted: 'stopped: the token budget (--token-budget) was used up without a final answer',
  UserInterrupt: 'interrupted (Ctrl-C): the run stopped, and its running tool was killed',
};
// A service manager's or a container's stop is no user's Ctrl-C: say which one it was.
const TERMINATED_MESSAGE = 'stopped by SIGTERM: the run ended, and its running tool was killed';

export async function runPipe(setup: AgentSetup, prompt: string, io: PipeIo = defaultIo): Promise<number> {
  const { flags, config, logger } = setup;
  const ndjson = flags.output === 'ndjson';
  const style = styleFor(io.stderrStream, setup.env);
  const lines = new ToolLine(style);

  // Ctrl-C (or SIGTERM) ends the run cleanly: the running tool's process group is killed.
  const controller = new AbortController();
  let terminated = false;
  const onSignal = (): void => controller.abort();
  const onTerm = (): void => {
    terminated = true;
    controller.abort();
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onTerm);

  // ndjson streams the answer as it arrives: `text` events carry the deltas, a word at a time so
  // the redactor sees a key whole; what is held back goes out before the next other event.
  const scrub = new StreamRedactor();
  const textEvent = (delta: string): void => {
    if (delta) io.stdout(`${JSON.stringify({ type: 'text', delta })}\n`);
  };
  const onEvent = (event: AgentEvent): void => {
    if (ndjson) {
      if (event.type === 'text') {
        textEvent(scrub.push(event.delta));
        return;
      }
      textEvent(scrub.flush());
      // A tool_result's diff is for the session's transcript; the NDJSON event keeps its documented fields.
      const shown =
        event.type === 'tool_result' && event.diff !== undefined ? { ...event, diff: undefined } : event;
      if (event.type !== 'run_end') io.stdout(`${JSON.stringify(redactValue(shown))}\n`);
      return;
    }
    if (event.type === 'tool_call') lines.start(event);
    else if (event.type === 'policy_decision') lines.decide(event);
    else if (event.type === 'tool_result') {
      const line = lines.finish(event);
      // With --verbose stderr is NDJSON only: the trace line is one more record.
      if (logger.verbose) logger.info('cli.tool_call', { message: line });
      else io.stderr(`${line}\n`);
    }
  };

  const history = resumedHistory(setup);
  const runtime = await startRuntime(setup);
  // --checkpoint: the session id is chosen now, so the store is named before the first call.
  const sessionId = setup.resumed?.id ?? (flags.checkpoint ? newUuid() : undefined);
  const checkpoints = flags.checkpoint ? new SessionCheckpoints(setup, logger) : undefined;
  const checkpointer = sessionId ? await checkpoints?.begin(sessionId, prompt, history ?? []) : undefined;
  if (checkpointer) io.stderr(`rune: session ${sessionId} (rune undo ${sessionId} reverts this run)\n`);
  const result = await runAgent({
    prompt,
    config,
    cwd: setup.cwd,
    env: setup.env,
    logger,
    ...(setup.systemPrompt === undefined ? {} : { systemPrompt: setup.systemPrompt }),
    ...(history ? { history } : {}),
    ...(setup.images ? { images: setup.images } : {}),
    ...(sessionId ? { sessionId } : {}),
    ...(checkpointer ? { checkpoints: checkpointer } : {}),
    yes: flags.yes ?? false,
    signal: controller.signal,
    onEvent,
    // Only ndjson shows the answer as it streams; otherwise a call broken midway can be retried.
    streamText: ndjson,
    executor: runtime.executor,
    tools: runtime.registry,
    takeNotices: () => runtime.mcp?.takeNotices() ?? [],
  }).finally(() => Promise.all([runtime.close(), checkpoints?.close()]));
  // The next pipe runs find these functions in the code cache, even if the first run was --help.
  markMainPath();
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onTerm);

  try {
    if (answeredInRun(result, history))
      saveSession(setup.env, result, {
        cwd: setup.cwd,
        prompt,
        ...(setup.resumed ? { previous: setup.resumed } : {}),
      });
  } catch (error) {
    logger.warn('cli.session_not_saved', { message: (error as Error).message });
  }

  // Stopped by SIGTERM rather than Ctrl-C: 143, as shells report it.
  const code =
    terminated && result.status === 'UserInterrupt'
      ? new RuneError('TERMINATED', '').exitCode
      : exitCodeForResult(result);
  if (ndjson) {
    textEvent(scrub.flush());
    io.stdout(
      `${JSON.stringify(
        redactValue({
          type: 'run_end',
          status: result.status,
          steps: result.steps,
          usage: result.usage,
          answer: result.answer,
          sessionId: result.sessionId,
          ...(result.error ? { error: result.error } : {}),
        }),
      )}\n`,
    );
  } else if (flags.json) {
    io.stdout(`${JSON.stringify(redactValue(resultJson(result)))}\n`);
  } else if (result.answer) {
    // On a terminal the answer is shown, so nothing in it may drive the terminal; into a pipe or a
    // file it is data, passed on as the model wrote it (redacted).
    const answer = redact(result.answer).replace(/\n*$/, '');
    io.stdout(`${io.stdoutStream?.isTTY ? terminalText(answer) : answer}\n`);
  }
  const stopMessage =
    terminated && result.status === 'UserInterrupt' ? TERMINATED_MESSAGE : STOP_MESSAGES[result.status];
  const failure =
    result.error && !(terminated && result.status === 'UserInterrupt')
      ? redact(result.error.message)
      : stopMessage;
  if (failure && logger.verbose) logger.error('cli.run_end', { message: failure, status: result.status });
  else if (failure) io.stderr(`rune: ${terminalText(failure)}\n`);
  return code;
}
