// What the agent sees of the policy: one decision per tool call. The decision itself is pure
// (src/policy); the gate around it canonicalises paths, writes the audit log and applies the mode.

export type ToolSource = 'builtin' | 'mcp';

/**
 * What a rune tool reaches through its arguments, which is what the policy judges: each tool
 * declares it beside its schema (src/tools/*.ts, stored in src/tools/definitions.json; the notes
 * chat's tools in src/notes/chat-tools.ts), so the policy never looks a tool up by name.
 */
export type ToolAccess =
  /** Reads its `path` argument: one file, a folder it lists, or a tree it walks (no path: the working directory). */
  | { kind: 'read'; target: 'file' | 'folder' | 'tree' }
  /** Writes the file its `path` argument names; `verb` words the question a person is asked. */
  | { kind: 'write'; verb: 'Write' | 'Edit' }
  /** Runs its `cmd` argument as a shell command. */
  | { kind: 'command' }
  /** Fetches its `url` argument. */
  | { kind: 'url' }
  /** Only the files of the note whose chat offers it (the notes chat's tools). */
  | { kind: 'own-files' }
  /** Nothing the lists cover (inspect_process: rune's own processes). */
  | { kind: 'none' };

export interface ToolCallForPolicy {
  tool: string;
  /** Arguments after validation against the tool's schema. */
  args: Record<string, unknown>;
  source: ToolSource;
  /** What a rune tool (source `builtin`) reaches; without it such a call is refused. */
  access?: ToolAccess;
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

/**
 * One thing an approval allows, named as the allow-list entry that would allow it for good. Paths
 * are absolute and canonical. Approved once, the call's sandbox plan gets it (a writable file, a
 * readable folder, a domain); for the session, the gate's lists get it; always, rune.toml gets it.
 */
export type Grant = AllowlistSuggestion;

export type PolicyDecision =
  | {
      kind: 'allow';
      rule: string;
      /** Lexical absolute path → the canonical path it was judged by: the file tools open that one. */
      paths?: Readonly<Record<string, string>>;
      /** What an approval (or --yes) allowed this call beyond the lists: its sandbox plan gets them. */
      grants?: readonly Grant[];
    }
  | {
      kind: 'deny';
      reason: string;
      rule: string;
      /** The entry that would allow it (allowlist mode): the session offers to add it (`/allow`). */
      suggestion?: AllowlistSuggestion;
    }
  | {
      kind: 'ask';
      question: string;
      reason: string;
      rule: string;
      suggestion?: AllowlistSuggestion;
      /** The call's preview (see ToolCallForPolicy.preview), filled in by the gate before asking. */
      preview?: string;
    };

export type AskDecision = Extract<PolicyDecision, { kind: 'ask' }>;

/** How long an approval holds: this call, the rest of the session (the gate's life), or for good (rune.toml). */
export type ApprovalScope = 'once' | 'session' | 'always';

/**
 * The question a person answers: the decision's question and reason, and exactly what approving
 * allows. The gate builds it; every confirmer (CLI prompt, notes approval, tests) answers it.
 */
export interface ApprovalRequest extends AskDecision {
  /** What approving allows the call beyond the lists (may be empty: the call itself, nothing more). */
  grants: readonly Grant[];
  /**
   * The answers this question takes: 'always' only when the grants, as allow-list entries, cover
   * the call for good (a command with $( … ) is never auto-allowed, so it can only be approved
   * once or for the session, which then remembers that exact call).
   */
  scopes: readonly ApprovalScope[];
}

/** A person's answer: allow for a scope, or refuse, optionally telling the model what to do instead. */
export type ApprovalAnswer = { kind: 'allow'; scope: ApprovalScope } | { kind: 'deny'; instead?: string };

/** The answer words of rune's confirmers before the scopes: yes = once, always, no. */
export type ConfirmAnswer = 'yes' | 'no' | 'always';

export interface Confirmer {
  confirm(call: ToolCallForPolicy, request: ApprovalRequest): Promise<ApprovalAnswer | ConfirmAnswer>;
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
  /**
   * What approvals for the session (or always) added to the lists: every later call's sandbox plan
   * gets these too, as it gets the configured lists.
   */
  granted?(): readonly Grant[];
}
