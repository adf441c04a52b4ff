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
  | { kind: 'allow'; rule: string }
  | { kind: 'deny'; reason: string; rule: string }
  | { kind: 'ask'; question: string; reason: string; rule: string; suggestion?: AllowlistSuggestion };

/** How a person answers an `ask`: run it once, refuse, or run it and add the suggestion to rune.toml. */
export type ConfirmAnswer = 'yes' | 'no' | 'always';

export interface Confirmer {
  confirm(
    call: ToolCallForPolicy,
    decision: Extract<PolicyDecision, { kind: 'ask' }>,
  ): Promise<ConfirmAnswer>;
}

export interface PolicyGate {
  /** Decides a call, asking the confirmer when there is one (else ask → deny, or allow with --yes). */
  check(call: ToolCallForPolicy): Promise<PolicyDecision>;
}
