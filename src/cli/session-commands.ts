// The interactive session's slash commands: one handler each, looked up by name. A handler
// returns false only when the session should end.

import { resolve } from 'node:path';
import { compactMessages } from '../agent/compaction.ts';
import { skillDirs } from '../agent/run.ts';
import { deriveConfig } from '../config/load.ts';
import { homeDir, runeHome } from '../core/paths.ts';
import { redact, redactValue } from '../core/redact.ts';
import { newUuid } from '../core/uuid.ts';
import { VERSION } from '../core/version.ts';
import { formatServers, formatServerTools } from '../mcp/format.ts';
import { floorPaths } from '../policy/paths.ts';
import { loadSkills } from '../skills/index.ts';
import { CHECKPOINT_COMMANDS, CHECKPOINT_HANDLERS } from './checkpoint-commands.ts';
import { renderDiff } from './diff-view.ts';
import { fitLine, paint } from './format.ts';
import { formatPolicy } from './policy-format.ts';
import { allowCommand } from './session-allow.ts';
import { newPolicy, providerInfo, type SessionContext } from './session-context.ts';
import { modeCommand } from './session-mode.ts';
import { resumeCommand } from './session-resume.ts';
import { statusReport } from './session-status.ts';

export const SLASH_COMMANDS: Record<string, string> = {
  '/help': 'this list, and the keys',
  '/status': "the session's tokens, context left and cost",
  '/model [NAME]': 'show the model, or switch to NAME for the rest of the session',
  '/mode [NAME]': 'show or set the policy mode (allowlist, confirm, unrestricted); Shift+Tab switches',
  '/allow': 'allow what the allowlist last blocked (shows the entry before saving it)',
  '/diff': "the last turn's file changes in full",
  '/resume [ID]': "pick a stored session of this folder (or another's) to continue",
  '/info': 'model, provider, session, tokens used',
  '/policy [full]': 'policy mode and allowlists; full: each sandbox layer and what the last tool call got',
  '/config': 'the configuration in use (secrets hidden)',
  '/tools': 'the tools the model can call; MCP tools per server, hidden and withdrawn ones too',
  '/skills': 'the skills that @name can bring in',
  '/trace [DIR|off]': 'show, start or stop writing JSON traces',
  '/compact': 'summarise the conversation so far to free context',
  '/reset': 'start a new conversation',
  ...CHECKPOINT_COMMANDS,
  '/version': 'the rune version',
  '/clear': 'clear the screen',
  '/exit': 'quit (or Ctrl-C at an empty prompt, or Ctrl-D)',
};

type Handler = (session: SessionContext, arg: string) => boolean | Promise<boolean>;

const KEYS: [string, string][] = [
  ['Enter', 'send the prompt (a line ending in \\ continues on the next)'],
  ['Alt+Enter, Shift+Enter, Ctrl+J', 'a new line in the prompt'],
  ['Tab', 'complete a /command or an @file; ↑/↓ choose in the menu'],
  ['@file, @skill', 'attach a file (once the policy allows reading it); bring in a skill'],
  ['!command', 'run a command in the sandbox; its output goes with the next prompt'],
  ['↑/↓, Ctrl-R', 'earlier prompts; search them'],
  ['Shift+Tab', 'switch the policy mode (allowlist, confirm)'],
  ['Esc, Ctrl-C', 'cancel the running call; Ctrl-C at an empty prompt (or Ctrl-D) quits'],
];

function help({ write }: SessionContext): boolean {
  const commands = Object.entries(SLASH_COMMANDS).map(([cmd, what]) => `  ${cmd.padEnd(18)} ${what}`);
  const keys = KEYS.map(([key, what]) => `  ${key.padEnd(32)} ${what}`);
  write(`${commands.join('\n')}\n${keys.join('\n')}\n`);
  return true;
}

function info({ write, state, provider, setup, runtime }: SessionContext): boolean {
  const shown = providerInfo(provider);
  const { config, totals } = state;
  write(
    [
      `rune ${VERSION}`,
      `model:    ${config.model ?? '(none)'}`,
      `provider: ${shown?.provider ?? provider.name}${shown ? ` (${shown.baseUrl})` : ''}`,
      `session:  ${state.sessionId} (${state.messages.length} messages)`,
      `tokens:   ${totals.totalTokens} (in ${totals.inputTokens}, out ${totals.outputTokens})`,
      `cwd:      ${setup.cwd}`,
      `config:   ${setup.configFile}`,
      `policy:   ${config.policy.mode}; sandbox: ${config.sandbox.mode}`,
      ...(runtime.mcp ? [formatServers(runtime.mcp.describeServers())] : []),
      '',
    ].join('\n'),
  );
  return true;
}

function policy({ write, state, runtime, setup }: SessionContext, arg: string): boolean {
  const { config, lastLayers } = state;
  write(
    formatPolicy(
      config,
      config.policy.mode,
      arg === 'full'
        ? { available: runtime.executor.describe(), ...(lastLayers ? { lastCall: lastLayers } : {}) }
        : null,
      floorPaths(homeDir(setup.env), runeHome(setup.env)),
    ),
  );
  return true;
}

function config({ write, state, setup }: SessionContext): boolean {
  // redactValue hides api_key (and any other secret-named key) by name.
  write(`# ${setup.configFile}\n${JSON.stringify(redactValue(state.config), null, 2)}\n`);
  return true;
}

function tools({ write, runtime, terminal }: SessionContext): boolean {
  // MCP tools are listed per server from the manager, so hidden and withdrawn ones show too.
  const own = runtime.registry
    .list()
    .filter((t) => t.source !== 'mcp')
    .map((t) => `  ${t.definition.name.padEnd(18)} ${t.definition.description.split('\n')[0]}`);
  const servers = runtime.mcp?.describeServers() ?? [];
  const listing = [...own, ...(servers.length > 0 ? [formatServerTools(servers)] : [])].join('\n');
  const width = terminal.screen.columns;
  write(
    `${listing
      .split('\n')
      .map((line) => fitLine(line, width))
      .join('\n')}\n`,
  );
  return true;
}

async function skills({ write, state, setup, style }: SessionContext): Promise<boolean> {
  const dirs = skillDirs({ config: state.config, cwd: setup.cwd, env: setup.env });
  const catalog = await loadSkills(dirs);
  const list = [...catalog.skills.values()];
  write(list.length === 0 ? `no skills in ${dirs.join(', ')}\n` : '');
  for (const skill of list) {
    const limits = [
      skill.toolsAllow ? `tools: ${skill.toolsAllow.join(', ')}` : '',
      skill.toolsDeny ? `not: ${skill.toolsDeny.join(', ')}` : '',
    ]
      .filter(Boolean)
      .join('; ');
    write(`  @${skill.name.padEnd(17)} ${skill.description}${limits ? ` (${limits})` : ''}\n`);
  }
  for (const problem of catalog.problems) write(`  ${paint(style, 'yellow', problem)}\n`);
  return true;
}

function trace({ write, state, setup }: SessionContext, arg: string): boolean {
  if (arg === 'off') {
    state.config = deriveConfig(state.config, { trace: undefined });
    write('tracing off\n');
  } else if (arg) {
    state.config = deriveConfig(state.config, { trace: resolve(setup.cwd, arg) });
    write(`tracing each run into ${state.config.trace}\n`);
  } else {
    write(
      state.config.trace ? `tracing into ${state.config.trace}\n` : 'tracing is off (/trace DIR starts it)\n',
    );
  }
  return true;
}

async function compact({ write, state, terminal, provider, style }: SessionContext): Promise<boolean> {
  state.controller = new AbortController();
  state.activity = {
    label: 'compacting',
    since: Date.now(),
    usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
    streamed: 0,
  };
  terminal.busy(true);
  try {
    const compacted = await compactMessages({
      provider,
      model: state.config.model ?? '',
      messages: state.messages,
      keep: 2,
      signal: state.controller.signal,
    });
    if (!compacted) write('nothing to compact yet\n');
    else {
      state.messages = compacted.messages;
      write(`compacted: about ${compacted.beforeTokens} → ${compacted.afterTokens} tokens\n`);
    }
  } catch (error) {
    write(`${paint(style, 'red', `compaction failed: ${redact((error as Error).message)}`)}\n`);
  } finally {
    state.controller = undefined;
    state.activity = undefined;
    terminal.busy(false);
  }
  return true;
}

async function reset(session: SessionContext): Promise<boolean> {
  const { state, setup } = session;
  state.messages = [];
  state.stored = undefined;
  state.sessionId = newUuid();
  state.policy = await newPolicy(setup, state.config, session.logger, session.confirmer, state.sessionId);
  session.write(`new conversation (session ${state.sessionId.slice(0, 8)})\n`);
  return true;
}

function exit(): boolean {
  return false;
}

function status({ write, state }: SessionContext): boolean {
  write(statusReport(state, state.config.model ?? '(none)'));
  return true;
}

function model(session: SessionContext, arg: string): boolean {
  const { state, write, style } = session;
  if (!arg) {
    write(`model: ${state.config.model ?? '(none)'} (/model NAME switches for the rest of the session)\n`);
    return true;
  }
  state.config = deriveConfig(state.config, { model: arg });
  write(`${paint(style, 'green', `model: ${arg}`)} ${paint(style, 'dim', 'for the rest of this session')}\n`);
  return true;
}

function diff({ write, style, state }: SessionContext): boolean {
  if (state.lastDiffs.length === 0) {
    write('no file was changed in the last turn\n');
    return true;
  }
  for (const change of state.lastDiffs)
    write(`${renderDiff(change, style, Number.POSITIVE_INFINITY).lines.join('\n')}\n`);
  return true;
}

const HANDLERS: Record<string, Handler> = {
  '/help': help,
  '/info': info,
  '/policy': policy,
  '/config': config,
  '/tools': tools,
  '/skills': skills,
  '/trace': trace,
  '/compact': compact,
  '/reset': reset,
  '/status': status,
  '/model': model,
  '/mode': modeCommand,
  '/allow': allowCommand,
  '/resume': resumeCommand,
  ...CHECKPOINT_HANDLERS,
  '/diff': diff,
  '/version': ({ write }) => {
    write(`rune ${VERSION}\n`);
    return true;
  },
  '/clear': ({ terminal }) => {
    terminal.screen.clear();
    return true;
  },
  '/exit': exit,
  '/quit': exit,
};

/** Runs one slash command; false when the session should end. */
export async function slashCommand(session: SessionContext, line: string): Promise<boolean> {
  const [name = '', ...rest] = line.trim().split(/\s+/);
  const handler = Object.hasOwn(HANDLERS, name) ? HANDLERS[name] : undefined;
  if (!handler) {
    session.write(`unknown command ${name}; /help lists them\n`);
    return true;
  }
  return handler(session, rest.join(' '));
}
