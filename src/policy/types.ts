// What the agent sees of the policy: one decision per tool call. The decision itself is pure
// (src/policy); the gate around it canonicalises paths, writes the audit log and applies the mode.

export type ToolSource = 'builtin' | 'mcp';

export interface ToolCallForPolicy {
  tool: string;
  /** Arguments after validation against the tool's schema. */
  args: Record<string, unknown>;
  source: ToolSource;
  /** MCP server name, for `server.*` allowlist patterns. */
  server?: string;
  /** MCP annotation readOnlyHint: such a tool counts as a read tool. */
  readOnly?: boolean;
  /**
   * What the call would change, for a person asked to confirm it (edit_file's diff). Computed only
   * when somebody is asked, so nothing is read for a call the policy refuses outright.
   */
  preview?: () => Promise<string | undefined>;
  /** The process that made the call when it came through `rune mount` (its pid and session id). */
  caller?: CallerProcess;
}

export interface CallerProcess {
  pid: number;
  /** The session id (getsid) of the caller: one shell's pipelines share it. */
  sid: number;
}

/** An allowlist entry that would have covered a blocked call, offered as "always allow". */
export interface AllowlistSuggestion {
  list:
    | 'allowed_commands'
    | 'allowed_domains'
    | 'allowed_paths_ro'
    | 'allowed_paths_rw'
    | 'allowed_files_ro'
    | 'allowed_files_rw'
    | 'allowed_mcp_tools';
  value: string;
}

export type PolicyDecision =
  | {
      kind: 'allow';
      rule: string;
      /** Lexical absolute path → the canonical path it was judged by: the file tools open that one. */
      paths?: Readonly<Record<string, string>>;
    }
  | { kind: 'deny'; reason: string; rule: string }
  | {
      kind: 'ask';
      question: string;
      reason: string;
      rule: string;
      suggestion?: AllowlistSuggestion;
      /** The call's preview (see ToolCallForPolicy.preview), filled in by the gate before asking. */
      preview?: string;
    };

/** How a person answers an `ask`: run it once, refuse, or run it and add the suggestion to rune.toml. */
export type ConfirmAnswer = 'yes' | 'no' | 'always';

export interface Confirmer {
  confirm(
    call: ToolCallForPolicy,
    decision: Extract<PolicyDecision, { kind: 'ask' }>,
  ): Promise<ConfirmAnswer>;
}

/**
 * What no in-process tool may read or write, for tools that walk folders and must check each entry
 * themselves (search_files, find_files) or re-check a path at use (edit_file). Absolute paths.
 */
export interface ProtectedPaths {
  /** The secrets floor, lexical and canonical forms. */
  floor: readonly string[];
  /** denied_paths, canonical (config and project config). */
  denied: readonly string[];
  /** --unrestricted: a walk may enter a protected folder the call names itself. */
  unrestricted: boolean;
}

export interface PolicyGate {
  /** Decides a call, asking the confirmer when there is one (else ask → deny, or allow with --yes). */
  check(call: ToolCallForPolicy): Promise<PolicyDecision>;
  /** The floor and denied_paths as this gate applies them; absent on test fakes (see protectedPathsFor). */
  protectedPaths?(): ProtectedPaths;
}
