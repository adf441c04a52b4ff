// The interactive session: a prompt with history, completion and pastes (tui/), answers rendered
// as they stream, one entry per tool call, slash commands, confirm-mode menus, and Ctrl-C (or Esc)
// that cancels the running model call or tool (its whole process group) and returns to the
// prompt; Ctrl-C at an empty prompt quits. A turn is session-turn.ts, the slash commands
// session-commands.ts; this file starts the session and runs its prompts one after another.

import { createDefaultProvider } from '../agent/deps.ts';
import { skillDirs } from '../agent/run.ts';
import type { Logger } from '../core/logger.ts';
import { redact } from '../core/redact.ts';
import { terminalText } from '../core/terminal-text.ts';
import { newUuid } from '../core/uuid.ts';
import { VERSION } from '../core/version.ts';
import { loadSkills } from '../skills/index.ts';
import type { AgentSetup } from './agent.ts';
import { SessionCheckpoints } from './checkpoint-session.ts';
import { paint, type Style, styleFor } from './format.ts';
import { startRuntime } from './runtime.ts';
import { SLASH_COMMANDS, slashCommand } from './session-commands.ts';
import { sessionCompleter } from './session-complete.ts';
import { menuConfirmer } from './session-confirm.ts';
import {
  baseOptions,
  loginNotices,
  newPolicy,
  providerInfo,
  type SessionContext,
  type SessionState,
} from './session-context.ts';
import { shellCommand, withAttachments } from './session-extras.ts';
import { nextMode, promptText, setMode } from './session-mode.ts';
import { pickSession, resumeInto } from './session-resume.ts';
import { statusText } from './session-status.ts';
import { appendHistory, asideLogger, historyFile, loadHistory } from './session-terminal.ts';
import { firstRun } from './session-trust.ts';
import { runTurn } from './session-turn.ts';
import { loadHighlighter } from './tui/highlight-loader.ts';
import { Terminal, type TerminalIo } from './tui/terminal.ts';

export async function runSession(
  setup: AgentSetup,
  io: TerminalIo = { input: process.stdin, output: process.stdout },
): Promise<number> {
  const session = await startSession(setup, io);
  const { write, style, state, provider, terminal } = session;
  terminal.start();
  void loadHighlighter();
  await firstRun(session);
  const shown = providerInfo(provider);
  write(
    `${paint(style, 'bold', `rune ${VERSION}`)} ${paint(style, 'dim', `· ${state.config.model ?? '(no model)'} via ${shown?.provider ?? provider.name} · policy ${state.mode}${setup.flags.yes ? ' (--yes: approved without asking)' : ''} · /help for commands`)}\n`,
  );
  if (setup.resumePick) {
    const picked = await pickSession(session);
    if (picked) await resumeInto(session, picked);
  } else if (setup.resumed) await resumeInto(session, setup.resumed);
  try {
    await readPrompts(session);
  } finally {
    state.controller?.abort();
    terminal.close();
    await Promise.all([session.runtime.close(), state.checkpoints?.close()]);
  }
  return 0;
}

/** The provider, the runtime (executor, MCP servers), the terminal and the first gate. */
async function startSession(setup: AgentSetup, io: TerminalIo): Promise<SessionContext> {
  const style: Style = styleFor(io.output, setup.env);
  const history = historyFile(setup.env);
  const parts: { session?: SessionContext } = {};
  const state: SessionState = {
    config: setup.config,
    // A resumed conversation is taken in by resumeInto, once the terminal can ask about it.
    sessionId: newUuid(),
    stored: undefined,
    messages: [],
    lastLayers: undefined,
    totals: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
    turns: 0,
    modelCalls: 0,
    contextUsed: 0,
    controller: undefined,
    activity: undefined,
    grants: [],
    // A project's .rune/rune.toml may have narrowed it: resolveRunPolicy put that in the config.
    mode: setup.config.policy.mode,
    lastBlocked: undefined,
    pendingContext: [],
    // --image files go with the first prompt.
    pendingImages: setup.images ?? [],
    lastDiffs: [],
    // Set below, once the logger exists.
    checkpoints: undefined,
    preview: () => [],
    // Set below, once the confirmer exists.
    policy: undefined as unknown as SessionState['policy'],
  };
  let skills: { name: string; description: string }[] | undefined;
  const terminal = new Terminal(
    io,
    style,
    loadHistory(history),
    sessionCompleter({
      commands: SLASH_COMMANDS,
      cwd: setup.cwd,
      skills: () => skills ?? [],
    }),
    {
      prompt: () => promptText(style, state.mode),
      status: () => (state.activity ? statusText(state.activity, Date.now()) : undefined),
      live: () => state.preview(),
      interrupt: () => {
        if (!state.controller) return false;
        // Cancels the model call or the tool; the executor kills the tool's whole process group.
        state.controller.abort();
        return true;
      },
      cycleMode: () => {
        if (parts.session && !state.controller) void setMode(parts.session, nextMode(state.mode));
      },
    },
  );
  // Skill names for @-completion, read once in the background.
  void loadSkills(skillDirs({ config: setup.config, cwd: setup.cwd, env: setup.env }))
    .then((catalog) => {
      skills = [...catalog.skills.values()].map(({ name, description }) => ({ name, description }));
    })
    .catch(() => {});
  // Everything the transcript shows passes here: no escape sequence but rune's own colours gets
  // through, whatever part of the text came from a model, a tool or a server.
  const write = (text: string): void => terminal.screen.print(terminalText(text, { keepColours: true }));
  const logger: Logger = asideLogger(setup.logger, (fn) => terminal.screen.aside(fn));
  if (SessionCheckpoints.wanted(setup, true)) state.checkpoints = new SessionCheckpoints(setup, logger);
  const provider = await createDefaultProvider(baseOptions(setup, setup.config, logger));
  const runtime = await startRuntime(setup, loginNotices(style, write));
  const confirmer = menuConfirmer(() => parts.session!);
  state.policy = await newPolicy(setup, state.config, logger, confirmer, state.sessionId);
  parts.session = { setup, style, write, terminal, logger, provider, runtime, confirmer, history, state };
  return parts.session;
}

/** The submitted prompt in the transcript; a long paste folded to its first lines. */
function echo(session: SessionContext, text: string): void {
  const { style, write } = session;
  const lines = text.split('\n');
  const shown =
    lines.length > 6
      ? [...lines.slice(0, 4), paint(style, 'dim', `… ${lines.length - 4} more lines`)]
      : lines;
  write(`${paint(style, 'cyan', '›')} ${shown.join('\n  ')}\n`);
}

/** Runs submitted prompts one at a time, until /exit, Ctrl-D or Ctrl-C at an empty prompt. */
async function readPrompts(session: SessionContext): Promise<void> {
  const { terminal, state, style, write, history } = session;
  for (;;) {
    const text = await terminal.nextPrompt();
    if (text === undefined) return;
    echo(session, text);
    appendHistory(history, text);
    try {
      if (text.startsWith('/')) {
        if (!(await slashCommand(session, text.trim()))) return;
      } else if (text.startsWith('!')) {
        await shellCommand(session, text.slice(1).trim());
      } else {
        const attached = await withAttachments(session, text);
        const prompt = [...state.pendingContext, attached.prompt].join('\n\n');
        const images = [...state.pendingImages, ...attached.images];
        state.pendingContext = [];
        state.pendingImages = [];
        await runTurn(session, prompt, text, images);
      }
    } catch (error) {
      write(`${paint(style, 'red', `error: ${redact((error as Error).message)}`)}\n`);
    }
  }
}
