// What the interactive session's parts share: the fixed pieces of one session (terminal, provider,
// runtime, prompt reader) and the state a turn or a slash command changes, plus the run options
// and the confirm-mode questions built from them.

import type { Interface } from 'node:readline';
import { createDefaultPolicy } from '../agent/deps.ts';
import type { AgentRunOptions } from '../agent/types.ts';
import type { RuneConfig } from '../config/schema.ts';
import type { Logger } from '../core/logger.ts';
import { redact } from '../core/redact.ts';
import type { SessionLogin } from '../mcp/remote/server.ts';
import type { Confirmer, PolicyGate } from '../policy/types.ts';
import type { ChatMessage, Provider } from '../providers/types.ts';
import type { LayerReport } from '../sandbox/types.ts';
import type { AgentSetup } from './agent.ts';
import { formatArguments, formatPreview, paint, type Style } from './format.ts';
import type { Runtime } from './runtime.ts';
import type { SessionIo, Spinner } from './session-terminal.ts';
import type { StoredSession } from './sessions.ts';

/** What turns and slash commands change as the session goes on. */
export interface SessionState {
  config: RuneConfig;
  sessionId: string;
  stored: StoredSession | undefined;
  messages: ChatMessage[];
  /** The sandbox layers the last tool call got, for `/policy full`. */
  lastLayers: LayerReport[] | undefined;
  totals: { inputTokens: number; outputTokens: number; totalTokens: number };
  /** Set while a model call, tool or compaction runs: Ctrl-C aborts it. */
  controller: AbortController | undefined;
  /** The lines of a `/multi` prompt being typed. */
  multi: string[] | undefined;
  policy: PolicyGate;
}

export interface SessionContext {
  readonly setup: AgentSetup;
  readonly io: SessionIo;
  readonly style: Style;
  readonly write: (text: string) => void;
  readonly spinner: Spinner;
  readonly logger: Logger;
  readonly provider: Provider;
  readonly runtime: Runtime;
  readonly rl: Interface;
  readonly confirmer: Confirmer;
  readonly history: string;
  readonly state: SessionState;
}

/** The options every run of the session starts from, with the config as it is now. */
export function baseOptions(setup: AgentSetup, config: RuneConfig, logger: Logger): AgentRunOptions {
  return { prompt: '', config, cwd: setup.cwd, env: setup.env, logger };
}

/** A fresh gate for a new conversation. --yes approves what confirm mode would ask, here as in pipe mode: then nobody is asked. */
export function newPolicy(
  setup: AgentSetup,
  config: RuneConfig,
  logger: Logger,
  confirmer: Confirmer,
  sessionId: string,
): Promise<PolicyGate> {
  return createDefaultPolicy(
    { ...baseOptions(setup, config, logger), ...(setup.flags.yes ? { yes: true } : { confirmer }) },
    sessionId,
  );
}

/**
 * A remote MCP server that asks for an OAuth login gets it here: the URL is shown (and opened in
 * a browser when there is one), and its tools join the session once the login is done.
 */
export function loginNotices(style: Style, write: (text: string) => void): SessionLogin {
  return {
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
  };
}

/** Confirm mode's questions, asked at the prompt; Ctrl-C while one is open answers no. */
export function promptConfirmer(
  rl: Interface,
  state: Pick<SessionState, 'controller'>,
  spinner: Spinner,
  style: Style,
  write: (text: string) => void,
): Confirmer {
  const ask = (question: string): Promise<string | undefined> =>
    new Promise((resolveAnswer) => {
      const signal = state.controller?.signal;
      if (signal?.aborted) return resolveAnswer(undefined);
      rl.question(question, signal ? { signal } : {}, (answer) => resolveAnswer(answer));
      signal?.addEventListener('abort', () => resolveAnswer(undefined), { once: true });
    });
  return {
    async confirm(call, decision) {
      spinner.stop();
      write(
        `${paint(style, 'yellow', '?')} ${paint(style, 'bold', call.tool)} ${formatArguments(JSON.stringify(call.args))}\n  ${decision.reason}\n`,
      );
      // What the call would change (edit_file's diff), so the answer is about the change itself.
      if (decision.preview) write(`${formatPreview(decision.preview, style)}\n`);
      const answer = await ask('Execute? [Y/n] ');
      if (answer === undefined || /^\s*n/i.test(answer)) return 'no';
      if (decision.scopes.includes('always')) {
        const entries = decision.grants.map((grant) => `${grant.value} to ${grant.list}`).join(' and ');
        const always = await ask(`Add ${entries}? [y/N] `);
        if (always !== undefined && /^\s*y/i.test(always)) return 'always';
      }
      return 'yes';
    },
  };
}

/** The provider's name and URL as `/info` and the banner show them. */
export function providerInfo(provider: Provider): { provider: string; baseUrl: string } | undefined {
  return (provider as { info?: { provider: string; baseUrl: string } }).info;
}
