// The interactive session: a prompt with persistent history, streamed answers, one line per tool
// call, slash commands, confirm-mode questions, and Ctrl-C that cancels the running model call or
// tool (its whole process group) and returns to the prompt; Ctrl-C at an empty prompt quits.
// A turn is session-turn.ts, the slash commands session-commands.ts; this file starts the session
// and reads its prompt lines.

import { createDefaultProvider } from '../agent/deps.ts';
import { redact } from '../core/redact.ts';
import { newUuid } from '../core/uuid.ts';
import { VERSION } from '../core/version.ts';
import type { AgentSetup } from './agent.ts';
import { SessionCheckpoints } from './checkpoint-session.ts';
import { paint, type Style, styleFor } from './format.ts';
import { startRuntime } from './runtime.ts';
import { slashCommand } from './session-commands.ts';
import {
  baseOptions,
  loginNotices,
  newPolicy,
  promptConfirmer,
  providerInfo,
  type SessionContext,
  type SessionState,
} from './session-context.ts';
import {
  appendHistory,
  clearingLogger,
  historyFile,
  openPrompt,
  type SessionIo,
  Spinner,
} from './session-terminal.ts';
import { runTurn } from './session-turn.ts';

export async function runSession(
  setup: AgentSetup,
  io: SessionIo = { input: process.stdin, output: process.stdout },
): Promise<number> {
  const session = await startSession(setup, io);
  const { write, style, state, provider } = session;
  const shown = providerInfo(provider);
  write(
    `${paint(style, 'bold', `rune ${VERSION}`)} ${paint(style, 'dim', `· ${state.config.model ?? '(no model)'} via ${shown?.provider ?? provider.name} · policy ${state.config.policy.mode} · /help for commands`)}\n`,
  );
  if (setup.resumed)
    write(`resumed session ${state.sessionId.slice(0, 8)} (${state.messages.length} messages)\n`);
  return readPrompts(session);
}

/** The provider, the runtime (executor, MCP servers), the prompt reader and the first gate. */
async function startSession(setup: AgentSetup, io: SessionIo): Promise<SessionContext> {
  const style: Style = styleFor(io.output, setup.env);
  const write = (text: string): void => {
    io.output.write(text);
  };
  const spinner = new Spinner(write, style.color);
  const logger = clearingLogger(setup.logger, () => spinner.clear());
  const provider = await createDefaultProvider(baseOptions(setup, setup.config, logger));
  const runtime = await startRuntime(setup, loginNotices(style, write));
  const history = historyFile(setup.env);
  const rl = openPrompt(io, style, history);
  const pending: Omit<SessionState, 'policy'> = {
    config: setup.config,
    sessionId: setup.resumed?.id ?? newUuid(),
    stored: setup.resumed,
    messages: setup.resumed?.messages ?? [],
    lastLayers: undefined,
    totals: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
    controller: undefined,
    multi: undefined,
    checkpoints: SessionCheckpoints.wanted(setup, true) ? new SessionCheckpoints(setup, logger) : undefined,
  };
  const confirmer = promptConfirmer(rl, pending, spinner, style, write);
  const policy = await newPolicy(setup, pending.config, logger, confirmer, pending.sessionId);
  // The confirmer reads the controller from this same object, so it sees every turn's.
  const state: SessionState = Object.assign(pending, { policy });
  return { setup, io, style, write, spinner, logger, provider, runtime, rl, confirmer, history, state };
}

function showPrompt({ rl, state, style }: SessionContext): void {
  rl.setPrompt(state.multi ? paint(style, 'dim', '… ') : paint(style, 'cyan', '> '));
  rl.prompt();
}

/** Reads prompt lines until the prompt closes: each runs a turn or a slash command, one at a time. */
function readPrompts(session: SessionContext): Promise<number> {
  const { rl, state, write, style, history } = session;
  return new Promise<number>((resolveExit) => {
    let busy = false;
    const run = (work: Promise<boolean>): void => {
      busy = true;
      void work
        .catch((error: unknown) => {
          write(`${paint(style, 'red', `error: ${redact((error as Error).message)}`)}\n`);
          return true;
        })
        .then((goOn) => {
          busy = false;
          if (goOn) showPrompt(session);
        });
    };
    rl.on('line', (line) => {
      if (busy) return;
      if (state.multi) {
        if (line.trim() !== '.') {
          state.multi.push(line);
          showPrompt(session);
          return;
        }
        const text = state.multi.join('\n');
        state.multi = undefined;
        appendHistory(history, text);
        run(runTurn(session, text).then(() => true));
        return;
      }
      const text = line.trim();
      if (!text) {
        showPrompt(session);
        return;
      }
      appendHistory(history, text);
      run(text.startsWith('/') ? slashCommand(session, text) : runTurn(session, text).then(() => true));
    });

    const onSignal = (): void => interrupt(session);
    rl.on('SIGINT', onSignal);
    process.on('SIGINT', onSignal);
    rl.on('close', () => {
      process.off('SIGINT', onSignal);
      state.controller?.abort();
      session.spinner.stop();
      void Promise.all([session.runtime.close(), state.checkpoints?.close()]).finally(() => resolveExit(0));
    });
    showPrompt(session);
  });
}

/** Ctrl-C: cancels what runs, else drops the /multi prompt or the typed line, else quits. */
function interrupt(session: SessionContext): void {
  const { state, spinner, write, rl } = session;
  if (state.controller) {
    // Cancels the model call or the tool; the executor kills the tool's whole process group.
    state.controller.abort();
    spinner.stop();
    write('^C\n');
    return;
  }
  if (state.multi) {
    state.multi = undefined;
    write('^C\n');
    showPrompt(session);
    return;
  }
  if (rl.line.length > 0) {
    rl.write(null, { ctrl: true, name: 'e' });
    rl.write(null, { ctrl: true, name: 'u' });
    write('^C\n');
    showPrompt(session);
    return;
  }
  write('\n');
  rl.close();
}
