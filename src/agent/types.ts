// The agent run as other modes see it: the CLI's pipe mode and session, the notes chat and the
// Concourse resource all call runAgent() with these options and read this result.
import type { RuneConfig } from '../config/schema.ts';
import type { Logger } from '../core/logger.ts';
import type { Confirmer, PolicyDecision, PolicyGate, ProtectedPaths } from '../policy/types.ts';
import type { ChatMessage, ImageAttachment, Provider, Usage } from '../providers/types.ts';
import type { LayerReport, SandboxExecutor } from '../sandbox/types.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import type { ExtraTool } from '../tools/types.ts';
import type { CallCheckpoint, CallScope } from './checkpoints/recorder.ts';

/** What a run tells the checkpoints of its session around each call that can write (src/agent/checkpoints/). */
export interface CallCheckpointer {
  before(id: string, tool: string, scope: CallScope, protectedPaths: ProtectedPaths): void;
  after(id: string): CallCheckpoint;
}

/**
 * How a run ended (docs/exit-codes.md): OutputLimit — the answer was cut at the output token limit
 * and going on did not finish it; Refused — the model or the provider's filter refused.
 */
export type StopReason =
  | 'FinalAnswer'
  | 'MaxSteps'
  | 'TokenBudgetExhausted'
  | 'OutputLimit'
  | 'Refused'
  | 'Error'
  | 'UserInterrupt';

export interface ToolCallRecord {
  id: string;
  name: string;
  /** Arguments as the model sent them, redacted. */
  arguments: string;
  decision: PolicyDecision['kind'];
  rule: string;
  isError: boolean;
  /** The sandbox layers of the process the tool ran, when it ran one. */
  layers?: LayerReport[];
  durationMs: number;
}

export type AgentEvent =
  | { type: 'run_start'; sessionId: string; model: string; provider: string }
  | { type: 'text'; delta: string }
  | { type: 'tool_call'; id: string; name: string; arguments: string }
  | { type: 'policy_decision'; id: string; name: string; decision: PolicyDecision }
  | {
      type: 'tool_result';
      id: string;
      name: string;
      isError: boolean;
      content: string;
      layers?: LayerReport[];
      /** The unified diff of a file the call changed, for a person to see (not sent to the model). */
      diff?: string;
    }
  /** What a call changed, as its checkpoint recorded it; `partial`: what could not be kept. */
  | { type: 'checkpoint'; id: string; name: string; changed: number; partial: string[] }
  | { type: 'model_usage'; step: number; usage: Usage }
  | { type: 'compaction'; beforeTokens: number; afterTokens: number }
  | { type: 'run_end'; status: StopReason; steps: number; usage: Usage };

// A tool beyond the built-ins is the tools folder's contract; re-exported for the run's callers.
export type { ExtraTool } from '../tools/types.ts';

export interface AgentRunOptions {
  prompt: string;
  config: RuneConfig;
  cwd: string;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  /** Replaces the active system prompt (AGENTS.md from cwd is still appended). */
  systemPrompt?: string;
  /** Appended to the active system prompt. */
  appendSystemPrompt?: string;
  /**
   * Earlier conversation (a resumed session or a notes chat). A system message at index 0 is taken
   * to be the earlier run's main system prompt and replaced by this run's.
   */
  history?: ChatMessage[];
  /** Images sent with the prompt, for a provider that takes them (else the run stops with a usage error). */
  images?: ImageAttachment[];
  /** Extra folders the agent may read (Concourse inputs), added to allowed_paths_ro. */
  readPaths?: string[];
  extraTools?: ExtraTool[];
  /**
   * Messages for the model that arrived since the last model request (an MCP server ended and its
   * tools were withdrawn); drained before every request and added as a user message.
   */
  takeNotices?: () => string[];
  /** When absent, nothing is ever asked: an "ask" becomes a deny, or an allow with `yes`. */
  confirmer?: Confirmer;
  yes?: boolean;
  signal?: AbortSignal;
  onEvent?: (event: AgentEvent) => void;
  /**
   * False when nobody shows the answer while it streams (pipe mode's text and --json, Concourse):
   * no `text` events, and a model call broken midway can then be retried, since nothing would be
   * shown twice. Default true.
   */
  streamText?: boolean;
  sessionId?: string;
  /** Built from config when absent; injected by tests and by callers that keep them across runs. */
  provider?: Provider;
  policy?: PolicyGate;
  executor?: SandboxExecutor;
  /** A registry kept across runs (an interactive session adding MCP tools); else built from extraTools. */
  tools?: ToolRegistry;
  /**
   * The session's checkpoints: what each call that can write changes is recorded before and after
   * it. The caller begins and ends turns. Absent (Concourse, notes, pipe mode without
   * --checkpoint): nothing is recorded.
   */
  checkpoints?: CallCheckpointer;
}

export interface AgentRunResult {
  answer: string;
  status: StopReason;
  steps: number;
  usage: Usage;
  toolCalls: ToolCallRecord[];
  model: string;
  sessionId: string;
  /** The whole conversation, for sessions and chats. */
  messages: ChatMessage[];
  /** Why the run ended when it is no final answer nor a limit of its own: Error, OutputLimit, Refused. */
  error?: { code: string; message: string };
  /** `@name` references in the prompt that matched no skill (reported, not fatal). */
  unknownSkills?: string[];
}
