// The interactive session: a prompt with persistent history, streamed answers, one line per tool
// call, slash commands, confirm-mode questions, and Ctrl-C that cancels the running model call or
// tool (its whole process group) and returns to the prompt; Ctrl-C at an empty prompt quits.

import { appendFileSync, chmodSync, mkdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import { compactMessages } from '../agent/compaction.ts';
import { createDefaultPolicy, createDefaultProvider } from '../agent/deps.ts';
import { runAgent, skillDirs } from '../agent/run.ts';
import type { AgentEvent, AgentRunOptions } from '../agent/types.ts';
import { deriveConfig } from '../config/load.ts';
import type { RuneConfig } from '../config/schema.ts';
import type { LogEvent, Logger } from '../core/logger.ts';
import { runeHome } from '../core/paths.ts';
import { redact, redactValue } from '../core/redact.ts';
import { newUuid } from '../core/uuid.ts';
import { VERSION } from '../core/version.ts';
import { formatServers, formatServerTools } from '../mcp/format.ts';
import { floorPaths } from '../policy/paths.ts';
import type { Confirmer, PolicyGate } from '../policy/types.ts';
import type { ChatMessage, Provider } from '../providers/types.ts';
import type { LayerReport } from '../sandbox/types.ts';
import { loadSkills } from '../skills/index.ts';
import type { AgentSetup } from './agent.ts';
import {
  fitLine,
  formatArguments,
  formatPreview,
  lineWidth,
  paint,
  type Style,
  styleFor,
  ToolLine,
} from './format.ts';
import { formatPolicy } from './policy-format.ts';
import { type Runtime, startRuntime } from './runtime.ts';
import { answeredInRun, type StoredSession, saveSession } from './sessions.ts';
import { StreamRedactor } from './stream-redactor.ts';

export { StreamRedactor };

export const SLASH_COMMANDS: Record<string, string> = {
  '/help': 'this list',
  '/info': 'model, provider, session, tokens used',
  '/policy [full]': 'policy mode and allowlists; full: each sandbox layer and what the last tool call got',
  '/config': 'the configuration in use (secrets hidden)',
  '/tools': 'the tools the model can call; MCP tools per server, hidden and withdrawn ones too',
  '/skills': 'the skills that @name can bring in',
  '/trace [DIR|off]': 'show, start or stop writing JSON traces',
  '/compact': 'summarise the conversation so far to free context',
  '/reset': 'start a new conversation',
  '/multi': 'enter a prompt of several lines, ended by a line holding only "."',
  '/version': 'the rune version',
  '/clear': 'clear the screen',
  '/exit': 'quit (or Ctrl-C at an empty prompt, or Ctrl-D)',
};

const STOP_TEXT: Record<string, string> = {
  MaxSteps: 'stopped: the step limit was reached',
  TokenBudgetExhausted: 'stopped: the token budget is used up',
  UserInterrupt: 'cancelled',
};

export function historyFile(env: NodeJS.ProcessEnv): string {
  return join(runeHome(env), 'history');
}

/** History lines, newest first (readline's order). */
function loadHistory(file: string): string[] {
  try {
    return readFileSync(file, 'utf8').split('\n').filter(Boolean).reverse().slice(0, 1000);
  } catch {
    return [];
  }
}

/** A line is kept in the history file only when nothing in it looks like a secret. */
export function appendHistory(file: string, line: string): void {
  if (!line.trim() || redact(line) !== line || line.startsWith(' ')) return;
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    appendFileSync(file, `${line.replace(/\n/g, ' ')}\n`, { mode: 0o600 });
    chmodSync(file, 0o600);
  } catch {
    // History is a convenience; a read-only home must not stop the session.
  }
}

class Spinner {
  #timer: NodeJS.Timeout | undefined;
  #frame = 0;
  constructor(
    private readonly write: (text: string) => void,
    private readonly enabled: boolean,
  ) {}
  start(label: string): void {
    this.stop();
    if (!this.enabled) return;
    const frames = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
    const draw = (): void => {
      this.write(`\r\x1b[2m${frames[this.#frame++ % frames.length]} ${label}\x1b[22m\x1b[K`);
    };
    draw();
    this.#timer = setInterval(draw, 80);
  }
  stop(): void {
    if (this.#timer === undefined) return;
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.write('\r\x1b[K');
  }
  /** Wipes the spinner's line and keeps it turning: its next frame is drawn below what came meanwhile. */
  clear(): void {
    if (this.#timer !== undefined) this.write('\r\x1b[K');
  }
}

/**
 * The same logger, clearing the terminal line first: a warning printed (on stderr) while the
 * spinner turns (on stdout) would otherwise start in the middle of its line.
 */
export function clearingLogger(logger: Logger, clear: () => void): Logger {
  const wrap =
    (level: 'debug' | 'info' | 'warn' | 'error') =>
    (event: LogEvent, fields?: Record<string, unknown>): void => {
      clear();
      logger[level](event, fields);
    };
  return {
    verbose: logger.verbose,
    debug: wrap('debug'),
    info: wrap('info'),
    warn: wrap('warn'),
    error: wrap('error'),
  };
}

export interface SessionIo {
  input: NodeJS.ReadableStream & { isTTY?: boolean };
  output: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
}

export async function runSession(
  setup: AgentSetup,
  io: SessionIo = { input: process.stdin, output: process.stdout },
): Promise<number> {
  const { cwd, env } = setup;
  const style: Style = styleFor(io.output, env);
  const write = (text: string): void => {
    io.output.write(text);
  };
  const spinner = new Spinner(write, style.color);
  const logger = clearingLogger(setup.logger, () => spinner.clear());
  let config: RuneConfig = setup.config;
  let sessionId = setup.resumed?.id ?? newUuid();
  let stored: StoredSession | undefined = setup.resumed;
  let messages: ChatMessage[] = setup.resumed?.messages ?? [];
  let lastLayers: LayerReport[] | undefined;
  let totals = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
  let controller: AbortController | undefined;
  let multi: string[] | undefined;

  const baseOptions = (): AgentRunOptions => ({ prompt: '', config, cwd, env, logger });
  const provider: Provider = await createDefaultProvider(baseOptions());
  // A remote MCP server that asks for an OAuth login gets it here: the URL is shown (and opened in
  // a browser when there is one), and its tools join the session once the login is done.
  const runtime: Runtime = await startRuntime(setup, {
    show: (server, url, opened) =>
      write(
        `${paint(style, 'yellow', `MCP server "${server}" asks for a login:`)} ${opened ? 'a browser was opened at' : 'open this URL in a browser on this machine:'}\n  ${url}\n  (its tools join this session once you are logged in)\n`,
      ),
    done: (server, outcome) =>
      write(
        outcome.ok
          ? `${paint(style, 'green', `MCP server "${server}" is connected`)} (${outcome.tools} tool${outcome.tools === 1 ? '' : 's'})\n`
          : `${paint(style, 'red', `MCP server "${server}": ${redact(outcome.reason)}`)}\n`,
      ),
  });

  const history = historyFile(env);
  const rl: Interface = createInterface({
    input: io.input,
    output: io.output,
    terminal: Boolean(io.input.isTTY && io.output.isTTY),
    history: loadHistory(history),
    historySize: 1000,
    removeHistoryDuplicates: true,
    prompt: paint(style, 'cyan', '> '),
  });

  const ask = (question: string): Promise<string | undefined> =>
    new Promise((resolveAnswer) => {
      const signal = controller?.signal;
      if (signal?.aborted) return resolveAnswer(undefined);
      rl.question(question, signal ? { signal } : {}, (answer) => resolveAnswer(answer));
      signal?.addEventListener('abort', () => resolveAnswer(undefined), { once: true });
    });

  const confirmer: Confirmer = {
    async confirm(call, decision) {
      spinner.stop();
      write(
        `${paint(style, 'yellow', '?')} ${paint(style, 'bold', call.tool)} ${formatArguments(JSON.stringify(call.args))}\n  ${decision.reason}\n`,
      );
      // What the call would change (edit_file's diff), so the answer is about the change itself.
      if (decision.preview) write(`${formatPreview(decision.preview, style)}\n`);
      const answer = await ask('Execute? [Y/n] ');
      if (answer === undefined || /^\s*n/i.test(answer)) return 'no';
      if (decision.suggestion) {
        const always = await ask(`Add ${decision.suggestion.value} to ${decision.suggestion.list}? [y/N] `);
        if (always !== undefined && /^\s*y/i.test(always)) return 'always';
      }
      return 'yes';
    },
  };
  // --yes approves what confirm mode would ask, here as in pipe mode: then nobody is asked.
  const gateOptions = (): AgentRunOptions => ({
    ...baseOptions(),
    ...(setup.flags.yes ? { yes: true } : { confirmer }),
  });
  let policy: PolicyGate = await createDefaultPolicy(gateOptions(), sessionId);

  const providerInfo = (provider as { info?: { provider: string; baseUrl: string } }).info;
  write(
    `${paint(style, 'bold', `rune ${VERSION}`)} ${paint(style, 'dim', `· ${config.model ?? '(no model)'} via ${providerInfo?.provider ?? provider.name} · policy ${config.policy.mode} · /help for commands`)}\n`,
  );
  if (setup.resumed) write(`resumed session ${sessionId.slice(0, 8)} (${messages.length} messages)\n`);

  const runTurn = async (prompt: string): Promise<void> => {
    controller = new AbortController();
    const lines = new ToolLine(style);
    const scrub = new StreamRedactor();
    let atLineStart = true;
    let streamed = false;
    const text = (chunk: string): void => {
      if (!chunk) return;
      write(chunk);
      atLineStart = chunk.endsWith('\n');
    };
    const onEvent = (event: AgentEvent): void => {
      switch (event.type) {
        case 'text':
          spinner.stop();
          streamed = true;
          text(scrub.push(event.delta));
          break;
        case 'tool_call':
          spinner.stop();
          text(scrub.flush());
          if (!atLineStart) text('\n');
          lines.start(event);
          spinner.start(`running ${event.name}`);
          break;
        case 'policy_decision':
          lines.decide(event);
          break;
        case 'tool_result':
          spinner.stop();
          text(`${fitLine(lines.finish(event), lineWidth(io.output))}\n`);
          if (event.layers) lastLayers = event.layers;
          spinner.start('thinking');
          break;
        case 'run_end':
          spinner.stop();
          text(scrub.flush());
          break;
        default:
          break;
      }
    };
    spinner.start('thinking');
    const history = messages;
    const result = await runAgent({
      prompt,
      config,
      cwd,
      env,
      logger,
      history: messages,
      sessionId,
      provider,
      policy,
      executor: runtime.executor,
      tools: runtime.registry,
      takeNotices: () => runtime.mcp?.takeNotices() ?? [],
      confirmer,
      signal: controller.signal,
      onEvent,
      ...(setup.systemPrompt === undefined ? {} : { systemPrompt: setup.systemPrompt }),
    });
    spinner.stop();
    text(scrub.flush());
    if (!streamed && result.answer) text(redact(result.answer));
    if (!atLineStart) text('\n');
    messages = result.messages;
    totals = {
      inputTokens: totals.inputTokens + result.usage.inputTokens,
      outputTokens: totals.outputTokens + result.usage.outputTokens,
      totalTokens: totals.totalTokens + result.usage.totalTokens,
    };
    if (result.error) write(`${paint(style, 'red', `error: ${redact(result.error.message)}`)}\n`);
    else if (STOP_TEXT[result.status]) write(`${paint(style, 'yellow', STOP_TEXT[result.status]!)}\n`);
    try {
      if (answeredInRun(result, history))
        stored = saveSession(env, result, { cwd, prompt, ...(stored ? { previous: stored } : {}) });
    } catch (error) {
      logger.warn('cli.session_not_saved', { message: (error as Error).message });
    }
    // An unknown @skill was already named by the run's warning, with the folders it looked in.
    controller = undefined;
  };

  const command = async (line: string): Promise<boolean> => {
    const [name = '', ...rest] = line.trim().split(/\s+/);
    const arg = rest.join(' ');
    switch (name) {
      case '/help':
        write(
          `${Object.entries(SLASH_COMMANDS)
            .map(([cmd, what]) => `  ${cmd.padEnd(18)} ${what}`)
            .join(
              '\n',
            )}\n  @name              bring in a skill\n  Ctrl-C             cancel the running call; at an empty prompt, quit\n`,
        );
        return true;
      case '/info':
        write(
          [
            `rune ${VERSION}`,
            `model:    ${config.model ?? '(none)'}`,
            `provider: ${providerInfo?.provider ?? provider.name}${providerInfo ? ` (${providerInfo.baseUrl})` : ''}`,
            `session:  ${sessionId} (${messages.length} messages)`,
            `tokens:   ${totals.totalTokens} (in ${totals.inputTokens}, out ${totals.outputTokens})`,
            `cwd:      ${cwd}`,
            `config:   ${setup.configFile}`,
            `policy:   ${config.policy.mode}; sandbox: ${config.sandbox.mode}`,
            ...(runtime.mcp ? [formatServers(runtime.mcp.describeServers())] : []),
            '',
          ].join('\n'),
        );
        return true;
      case '/policy':
        write(
          formatPolicy(
            config,
            config.policy.mode,
            arg === 'full'
              ? { available: runtime.executor.describe(), ...(lastLayers ? { lastCall: lastLayers } : {}) }
              : null,
            floorPaths(env.HOME || homedir(), runeHome(env)),
          ),
        );
        return true;
      case '/config': {
        // redactValue hides api_key (and any other secret-named key) by name.
        write(`# ${setup.configFile}\n${JSON.stringify(redactValue(config), null, 2)}\n`);
        return true;
      }
      case '/tools': {
        // MCP tools are listed per server from the manager, so hidden and withdrawn ones show too.
        const own = runtime.registry
          .list()
          .filter((t) => t.source !== 'mcp')
          .map((t) => `  ${t.definition.name.padEnd(18)} ${t.definition.description.split('\n')[0]}`);
        const servers = runtime.mcp?.describeServers() ?? [];
        const listing = [...own, ...(servers.length > 0 ? [formatServerTools(servers)] : [])].join('\n');
        const width = lineWidth(io.output);
        write(
          `${listing
            .split('\n')
            .map((line) => fitLine(line, width))
            .join('\n')}\n`,
        );
        return true;
      }
      case '/skills': {
        const dirs = skillDirs({ config, cwd, env });
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
      case '/trace':
        if (arg === 'off') {
          config = deriveConfig(config, { trace: undefined });
          write('tracing off\n');
        } else if (arg) {
          config = deriveConfig(config, { trace: resolve(cwd, arg) });
          write(`tracing each run into ${config.trace}\n`);
        } else {
          write(config.trace ? `tracing into ${config.trace}\n` : 'tracing is off (/trace DIR starts it)\n');
        }
        return true;
      case '/compact': {
        controller = new AbortController();
        spinner.start('compacting');
        try {
          const compacted = await compactMessages({
            provider,
            model: config.model ?? '',
            messages,
            keep: 2,
            signal: controller.signal,
          });
          spinner.stop();
          if (!compacted) write('nothing to compact yet\n');
          else {
            messages = compacted.messages;
            write(`compacted: about ${compacted.beforeTokens} → ${compacted.afterTokens} tokens\n`);
          }
        } catch (error) {
          spinner.stop();
          write(`${paint(style, 'red', `compaction failed: ${redact((error as Error).message)}`)}\n`);
        } finally {
          controller = undefined;
        }
        return true;
      }
      case '/reset':
        messages = [];
        stored = undefined;
        sessionId = newUuid();
        policy = await createDefaultPolicy(gateOptions(), sessionId);
        write(`new conversation (session ${sessionId.slice(0, 8)})\n`);
        return true;
      case '/multi':
        multi = [];
        write('enter the prompt; a line holding only "." sends it\n');
        return true;
      case '/version':
        write(`rune ${VERSION}\n`);
        return true;
      case '/clear':
        if (style.color) write('\x1b[2J\x1b[3J\x1b[H');
        return true;
      case '/exit':
      case '/quit':
        rl.close();
        return false;
      default:
        write(`unknown command ${name}; /help lists them\n`);
        return true;
    }
  };

  const prompt = (): void => {
    rl.setPrompt(multi ? paint(style, 'dim', '… ') : paint(style, 'cyan', '> '));
    rl.prompt();
  };

  return new Promise<number>((resolveExit) => {
    let busy = false;
    rl.on('line', (line) => {
      if (busy) return;
      if (multi) {
        if (line.trim() === '.') {
          const text = multi.join('\n');
          multi = undefined;
          appendHistory(history, text);
          busy = true;
          void runTurn(text).finally(() => {
            busy = false;
            prompt();
          });
          return;
        }
        multi.push(line);
        prompt();
        return;
      }
      const text = line.trim();
      if (!text) {
        prompt();
        return;
      }
      appendHistory(history, text);
      busy = true;
      const work = text.startsWith('/') ? command(text) : runTurn(text).then(() => true);
      void work
        .catch((error: unknown) => {
          write(`${paint(style, 'red', `error: ${redact((error as Error).message)}`)}\n`);
          return true;
        })
        .then((goOn) => {
          busy = false;
          if (goOn) prompt();
        });
    });

    const interrupt = (): void => {
      if (controller) {
        // Cancels the model call or the tool; the executor kills the tool's whole process group.
        controller.abort();
        spinner.stop();
        write('^C\n');
        return;
      }
      if (multi) {
        multi = undefined;
        write('^C\n');
        prompt();
        return;
      }
      if (rl.line.length > 0) {
        rl.write(null, { ctrl: true, name: 'e' });
        rl.write(null, { ctrl: true, name: 'u' });
        write('^C\n');
        prompt();
        return;
      }
      write('\n');
      rl.close();
    };
    rl.on('SIGINT', interrupt);
    const onSignal = (): void => interrupt();
    process.on('SIGINT', onSignal);

    rl.on('close', () => {
      process.off('SIGINT', onSignal);
      controller?.abort();
      spinner.stop();
      void runtime.close().finally(() => resolveExit(0));
    });
    prompt();
  });
}
