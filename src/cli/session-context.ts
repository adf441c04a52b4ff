// What the interactive session's parts share: the fixed pieces of one session (terminal, provider,
// runtime) and the state a turn or a slash command changes, plus the run options and the policy
// gate built from them.

import { createDefaultPolicy } from '../agent/deps.ts';
import type { AgentRunOptions } from '../agent/types.ts';
import type { PolicyMode, RuneConfig } from '../config/schema.ts';
import type { Logger } from '../core/logger.ts';
import { redact } from '../core/redact.ts';
import type { SessionLogin } from '../mcp/remote/server.ts';
import type { AllowlistSuggestion, Confirmer, PolicyGate } from '../policy/types.ts';
import type { ChatMessage, ImageAttachment, Provider, Usage } from '../providers/types.ts';
import type { LayerReport } from '../sandbox/types.ts';
import type { AgentSetup } from './agent.ts';
import type { SessionCheckpoints } from './checkpoint-session.ts';
import { paint, type Style } from './format.ts';
import type { Runtime } from './runtime.ts';
import type { SessionGrant } from './session-grants.ts';
import type { StoredSession } from './sessions.ts';
import type { Terminal } from './tui/terminal.ts';

/** What runs now, for the status row: since when, and the tokens of this turn so far. */
export interface Activity {
  label: string;
  since: number;
  usage: Usage;
  /** Characters streamed by the model call under way (its tokens are counted when it ends). */
  streamed: number;
}

/** A refusal that an allowlist entry would have prevented. */
export interface Blocked {
  tool: string;
  suggestion: AllowlistSuggestion;
}

/** What turns and slash commands change as the session goes on. */
export interface SessionState {
  config: RuneConfig;
  sessionId: string;
  stored: StoredSession | undefined;
  messages: ChatMessage[];
  /** The sandbox layers the last tool call got, for `/policy full`. */
  lastLayers: LayerReport[] | undefined;
  totals: Usage;
  turns: number;
  modelCalls: number;
  /** Tokens of the last model request (its input and answer): how full the context window is. */
  contextUsed: number;
  /** Set while a model call, tool or compaction runs: Ctrl-C aborts it. */
  controller: AbortController | undefined;
  activity: Activity | undefined;
  /** "For this session" answers of confirm mode. */
  grants: SessionGrant[];
  /** The mode the gate applies (the configured one, narrowed by a project's .rune/rune.toml). */
  mode: PolicyMode;
  /** The last refusal an allowlist entry would have prevented, for `/allow`. */
  lastBlocked: Blocked | undefined;
  /** The diffs of the last turn's file changes, whole, for `/diff`. */
  lastDiffs: string[];
  /** What `!cmd` produced, sent with the next prompt. */
  pendingContext: string[];
  /** Images for the next prompt (`--image`). */
  pendingImages: ImageAttachment[];
  /** The answer not printed yet (an unfinished Markdown block), for the live area. */
  preview: () => string[];
  /** What the session's calls change, for /changes, /undo and /rewind; undefined when switched off. */
  checkpoints: SessionCheckpoints | undefined;
  policy: PolicyGate;
}

export interface SessionContext {
  readonly setup: AgentSetup;
  readonly style: Style;
  /** Writes transcript text: escape sequences other than rune's colours are removed. */
  readonly write: (text: string) => void;
  readonly terminal: Terminal;
  readonly logger: Logger;
  readonly provider: Provider;
  readonly runtime: Runtime;
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

/** The provider's name and URL as `/info` and the banner show them. */
export function providerInfo(provider: Provider): { provider: string; baseUrl: string } | undefined {
  return (provider as { info?: { provider: string; baseUrl: string } }).info;
}
