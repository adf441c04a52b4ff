// The one schema of rune.toml. Every layer (file, RUNE_* variables, flags) is checked against it
// before the layers are merged; defaults are filled in only after the merge, so a bad value is
// reported, never silently replaced.
//
// Each schema is built on first use, and the tables of a layer only when the layer has them:
// building every zod schema of this file cost a pipe run ~10 ms, yet most runs set a few
// top-level keys (a model, a key) and nothing under [notes] or [[mcp]].
import type { z as Z } from 'zod/v4';
import { CREDENTIAL_HEADERS } from '../core/command-credentials.ts';
import { domainPatternProblem } from '../core/domains.ts';
import { redact } from '../core/redact.ts';

export const PROVIDERS = ['openai', 'openrouter', 'copilot', 'gemini', 'anthropic'] as const;
export type ProviderName = (typeof PROVIDERS)[number];

export const POLICY_MODES = ['allowlist', 'confirm', 'unrestricted'] as const;
export type PolicyMode = (typeof POLICY_MODES)[number];

export const SANDBOX_MODES = ['auto', 'strict', 'off'] as const;
export type SandboxMode = (typeof SANDBOX_MODES)[number];

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;

/** A value built on its first use, then kept. */
function once<T extends object>(build: () => T): () => T {
  let value: T | undefined;
  return () => {
    value ??= build();
    return value;
  };
}

/**
 * zod, loaded when the first schema is built: its own module set-up costs a start ~2 ms, and a run
 * whose layers are empty (`rune sandbox` with no rune.toml, say) never builds one.
 */
const z = once(() => (require('./zod.ts') as typeof import('./zod.ts')).z);

const positiveInt = once(() => z().number().int().positive());
const pathList = once(() => z().array(z().string().min(1, 'must not be empty')));
// `*`, `*.com` and other whole-TLD wildcards are refused here, at load, never narrowed silently later.
const domainList = once(() =>
  z().array(
    z()
      .string()
      .min(1, 'must not be empty')
      .superRefine((entry, ctx) => {
        const problem = domainPatternProblem(entry);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      }),
  ),
);

export const policySchema = once(() =>
  z().strictObject({
    mode: z()
      .enum(POLICY_MODES)
      .describe('allowlist (default): block what no list covers; confirm: ask; unrestricted'),
    allowed_commands: z()
      .array(z().string().trim().min(1, 'must not be empty'))
      .describe('Programs (`ls`) or command prefixes (`git status`) that execute_cmd may run without asking'),
    allowed_domains: domainList().describe(
      'Host names fetch_url and sandboxed tools may reach; `*.x.com` means subdomains of x.com',
    ),
    allowed_paths_ro: pathList().describe('Folders tools may read'),
    allowed_paths_rw: pathList().describe('Folders tools may read and write'),
    allowed_files_ro: pathList().describe('Single files tools may read'),
    allowed_files_rw: pathList().describe('Single files tools may read and write'),
    denied_paths: pathList().describe('Paths no tool may touch, whatever else allows them'),
    allowed_mcp_tools: z()
      .array(z().string().min(1))
      .describe('MCP tools allowed without asking: `tool` or `server.*`'),
    max_memory_mb: positiveInt().describe(
      'Memory limit of each tool process tree, in MiB (cgroup memory.max)',
    ),
    max_pids: positiveInt().describe('Process limit of each tool process tree (cgroup pids.max)'),
  }),
);

export const sandboxSchema = once(() =>
  z().strictObject({
    mode: z()
      .enum(SANDBOX_MODES)
      .describe('auto: apply every layer the machine offers; strict: a missing layer is an error; off'),
    command_timeout_secs: positiveInt().describe('Wall-clock limit of one execute_cmd call'),
    env_passthrough: z()
      .array(
        z()
          .string()
          .regex(
            /^[A-Za-z_][A-Za-z0-9_]*$/,
            'must be one exact variable name (letters, digits, _; no patterns): list each variable tools may see',
          ),
      )
      .describe(
        'Exact names of further variables tools and MCP servers get; besides these only PATH, HOME, LANG, LC_*, TERM, TZ, USER, LOGNAME, SHELL and TMPDIR are passed on',
      ),
    max_file_mb: positiveInt()
      .optional()
      .describe('Largest file a tool process may write, in MiB (RLIMIT_FSIZE)'),
    tmp_mb: positiveInt().optional().describe('Size of the private /tmp each tool process gets, in MiB'),
    cpu_percent: positiveInt()
      .optional()
      .describe('CPU limit of each tool process tree, in percent of one core (cgroup cpu.max); unset: none'),
  }),
);

export const MCP_TRANSPORTS = ['streamable-http', 'sse'] as const;
export type McpTransportName = (typeof MCP_TRANSPORTS)[number];

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const headerName = once(() => z().string().regex(HEADER_NAME, 'is not a valid HTTP header name'));
const envName = once(() =>
  z()
    .string()
    .regex(ENV_NAME, 'must be the name of an environment variable (letters, digits, _), not its value')
    // A token pasted where its variable's name belongs (ghp_…, sk-…) would sit in the file in clear.
    .refine(
      (name) => redact(name) === name,
      'looks like a token: name the environment variable that holds it',
    ),
);

/** Keys of an `[[mcp]]` table; shared with Concourse's `source.mcp`, which adds `bearer_token`. */
export const mcpServerShape = once(() => ({
  name: z().string().min(1).describe('Name shown in /tools and used in `server.*` allowlist patterns'),
  command: z().string().min(1).optional().describe('Program that starts a stdio server'),
  args: z().array(z().string()).optional().describe('Arguments of the command'),
  env: z()
    .record(z().string(), z().string())
    .optional()
    .describe('Environment of a stdio server; nothing else is passed'),
  url: z()
    .string()
    .min(1)
    .optional()
    .describe(
      'Endpoint of a remote server (Streamable HTTP, or legacy SSE), e.g. https://mcp.example.com/mcp',
    ),
  transport: z()
    .enum(MCP_TRANSPORTS)
    .optional()
    .describe('Remote transport; default: Streamable HTTP, falling back to SSE when the server refuses it'),
  headers: z()
    .record(
      headerName(),
      z()
        .string()
        .regex(/^[^\r\n]*$/, 'must be one line'),
    )
    .optional()
    .describe('Extra HTTP headers sent to a remote server (no credentials: see env_headers)'),
  env_headers: z()
    .record(headerName(), envName())
    .optional()
    .describe(
      'HTTP headers whose values come from environment variables, e.g. { "X-Api-Key" = "SEARCH_KEY" }',
    ),
  bearer_token_env_var: envName()
    .optional()
    .describe('Environment variable holding a bearer token for a remote server (instead of OAuth)'),
  required: z().boolean().optional().describe('Stop rune when this server cannot start'),
  timeout_secs: positiveInt()
    .optional()
    .describe(`Per-call timeout in seconds (default ${MCP_SERVER_DEFAULTS.timeout_secs})`),
  allowed_paths_ro: pathList().optional().describe('Folders a stdio server process may read'),
  allowed_paths_rw: pathList().optional().describe('Folders a stdio server process may write'),
  allowed_domains: domainList()
    .optional()
    .describe(
      'Hosts the server may reach: a stdio server process, or a remote server and its OAuth endpoints',
    ),
}));

const STDIO_ONLY = ['args', 'env', 'allowed_paths_ro', 'allowed_paths_rw'] as const;
const REMOTE_ONLY = ['transport', 'headers', 'env_headers', 'bearer_token_env_var', 'bearer_token'] as const;

function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  return bare === 'localhost' || bare.endsWith('.localhost') || bare === '::1' || /^127\./.test(bare);
}

/**
 * A table is either a stdio server (`command`) or a remote one (`url`); keys of the other kind are
 * refused rather than ignored, and a credential can never be written into the file itself.
 * `secretHeaders`: the table comes from a credential store (Concourse's source), so its headers may
 * hold credentials (they are treated as secrets there).
 */
export function checkMcpTable(
  table: Record<string, unknown>,
  ctx: Z.RefinementCtx,
  secretHeaders = false,
): void {
  const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
  const hasCommand = table.command !== undefined;
  const hasUrl = table.url !== undefined;
  if (hasCommand === hasUrl) {
    issue(
      hasCommand ? 'url' : 'command',
      hasCommand
        ? 'give either command (a stdio server) or url (a remote server), not both'
        : 'give command (a stdio server) or url (a remote server)',
    );
    return;
  }
  const wrong = (hasUrl ? STDIO_ONLY : REMOTE_ONLY).filter((key) => table[key] !== undefined);
  for (const key of wrong) {
    issue(
      key,
      hasUrl ? `is for stdio servers (command), not for url` : `is for remote servers (url), not for command`,
    );
  }
  const headers = secretHeaders ? {} : ((table.headers as Record<string, string> | undefined) ?? {});
  for (const [name, value] of Object.entries(headers)) {
    // A credential header's value belongs in the environment (env_headers), never in a file.
    if (CREDENTIAL_HEADERS.has(name.toLowerCase())) {
      issue(
        'headers',
        `"${name}" carries a credential: name an environment variable in bearer_token_env_var or env_headers instead of writing the secret here`,
      );
    } else if (redact(value) !== value) {
      issue(
        'headers',
        `the value of "${name}" looks like a key: put it in an environment variable and name it in env_headers`,
      );
    }
  }
  if (!hasUrl) return;
  let url: URL;
  try {
    url = new URL(String(table.url));
  } catch {
    issue('url', 'is not a valid URL, e.g. https://mcp.example.com/mcp');
    return;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    issue('url', `must be an http:// or https:// URL, not ${url.protocol}`);
  } else if (url.username || url.password) {
    issue('url', 'must not hold a user name or password: use bearer_token_env_var or OAuth');
  } else if (
    url.protocol === 'http:' &&
    !isLoopbackHost(url.hostname) &&
    (table.bearer_token_env_var !== undefined ||
      table.bearer_token !== undefined ||
      table.env_headers !== undefined)
  ) {
    issue('url', `plain http would send the credential to ${url.host} unencrypted; use https://`);
  }
}

export const mcpServerSchema = once(() =>
  z()
    .strictObject(mcpServerShape())
    .superRefine((table, ctx) => checkMcpTable(table, ctx)),
);

const accountList = once(() =>
  z().array(
    z()
      .string()
      .regex(/^[^:\s]+:.+$/, 'expected "name:password" or "name:scrypt$…"'),
  ),
);

/** What one request or one client may cost the notes server; every key has a safe default. */
export const notesLimitsSchema = once(() =>
  z().strictObject({
    max_file_kb: positiveInt().optional().describe('Largest text of one file, in KiB (saves and live edits)'),
    max_document_kb: positiveInt()
      .optional()
      .describe('Largest collaborative state (Yjs) of one file, history included, in KiB'),
    max_update_kb: positiveInt().optional().describe('Largest single collaborative update, in KiB'),
    collab_kb_per_second: positiveInt()
      .optional()
      .describe('Collaborative update KiB one editor may send per second (bursts of two seconds)'),
    max_streams: positiveInt().optional().describe('Open event streams in all'),
    max_streams_per_client: positiveInt().optional().describe('Open event streams of one client address'),
    max_streams_per_note: positiveInt().optional().describe('Open event streams watching one note'),
    max_connections_per_client: positiveInt()
      .optional()
      .describe('Open connections of one client address (trusted proxies are not counted)'),
    send_timeout_secs: positiveInt()
      .optional()
      .describe(
        'A response whose client takes under 64 KiB of it in this time is cut (a reader that stopped)',
      ),
    presence_interval_ms: positiveInt()
      .optional()
      .describe('Presence changes of a note are sent together at most this often'),
    search_budget_ms: positiveInt().optional().describe('Time one search may take'),
    diff_budget_ms: positiveInt().optional().describe('Time one revision diff may take'),
    expensive_per_minute: positiveInt()
      .optional()
      .describe('Searches, diffs and exports per client address and minute'),
    login_attempts_per_account: positiveInt()
      .optional()
      .describe('Password logins tried per account within the window'),
    login_attempts_per_address: positiveInt()
      .optional()
      .describe('Password logins tried per client address within the window'),
    login_window_minutes: positiveInt().optional().describe('Window of the login limits'),
  }),
);

export const notesSchema = once(() =>
  z().strictObject({
    bind: z().string().min(1).describe('Address to listen on'),
    port: z().number().int().min(0).max(65535).describe('TCP port'),
    public_url: z().url().optional().describe('External URL, used for OAuth redirects and Secure cookies'),
    trusted_proxies: z()
      .array(z().string())
      .optional()
      .describe('Proxy addresses whose X-Forwarded-For is trusted'),
    model: z()
      .string()
      .min(1)
      .optional()
      .describe('Model for note chats unless an admin overrides it per note'),
    max_upload_mb: positiveInt().optional().describe('Largest attachment accepted'),
    synchronous: z()
      .enum(['full', 'normal'])
      .optional()
      .describe(
        "SQLite's synchronous level: normal (default) keeps every acknowledged write through any crash of the process, and a power cut may lose the last second of them; full also fsyncs before each answer, so they survive a power cut, at one disk fsync of latency per write",
      ),
    revision_every_secs: positiveInt()
      .optional()
      .describe('During continuous live editing, save a revision at least this often (default 30)'),
    limits: notesLimitsSchema()
      .optional()
      .describe('Cost limits per request and per client (see docs/notes-api.md)'),
    workspace: z()
      .string()
      .min(1)
      .optional()
      .describe(
        'Folder the note chats work in, one sub-folder per note (default $XDG_DATA_HOME/rune/notes-workspace); must lie outside RUNE_HOME and the secrets floor',
      ),
    local: z()
      .strictObject({
        admins: accountList().optional(),
        users: accountList().optional(),
        guests: accountList().optional(),
      })
      .optional()
      .describe('Local accounts by role'),
    oauth: z()
      .array(
        z().strictObject({
          name: z().string().min(1),
          issuer: z().url(),
          client_id: z().string().min(1),
          client_secret: z().string().optional(),
          scopes: z().array(z().string()).optional(),
          admins: z().array(z().string()).optional(),
          users: z().array(z().string()).optional(),
          guests: z().array(z().string()).optional(),
        }),
      )
      .optional()
      .describe('OAuth2/OIDC providers'),
    github: z()
      .strictObject({
        client_id: z().string().min(1),
        client_secret: z().string().min(1),
        admins: z().array(z().string()).optional(),
        users: z().array(z().string()).optional(),
        guests: z().array(z().string()).optional(),
      })
      .optional()
      .describe('GitHub OAuth app mapped to roles'),
  }),
);

/** One layer of configuration: every key optional, unknown keys rejected. */
export const configLayerSchema = once(() =>
  z().strictObject({
    model: z().string().min(1).optional().describe('Model name sent to the provider'),
    api_key: z().string().min(1).optional().describe('Provider API key (prefer RUNE_API_KEY)'),
    provider: z().enum(PROVIDERS).optional().describe('Provider; detected from the key prefix when unset'),
    // Only http(s): "localhost:8080/v1" parses as a URL with the scheme "localhost:".
    base_url: z()
      .url({
        protocol: /^https?$/,
        error: 'must be an http:// or https:// URL, e.g. http://127.0.0.1:11434/v1',
      })
      .optional()
      .describe('Endpoint of an OpenAI-compatible (or other) server'),
    skills_dir: z().string().min(1).optional().describe('Folder of skills (folders holding SKILL.md)'),
    system_prompt: z().string().optional().describe('Replaces the built-in system prompt'),
    system_prompt_file: z()
      .string()
      .min(1)
      .optional()
      .describe('File whose text replaces the built-in system prompt'),
    max_steps: positiveInt().optional().describe('Model calls per run before it stops with MaxSteps'),
    token_budget: positiveInt()
      .optional()
      .describe('Tokens per run before it stops with TokenBudgetExhausted'),
    max_output_tokens: positiveInt().optional().describe('max_tokens of every model request'),
    timeout_secs: positiveInt().optional().describe('Whole-run timeout'),
    request_timeout_secs: positiveInt().optional().describe('Timeout of one model request'),
    context_window: positiveInt().optional().describe('Context window of the model, in tokens'),
    compact_threshold: z()
      .number()
      .gt(0)
      .lt(1)
      .optional()
      .describe('Fraction of the context window that triggers compaction'),
    trace: z().string().min(1).optional().describe('Folder for JSON trace files of each run'),
    log_level: z().enum(LOG_LEVELS).optional().describe('Least severe level written to stderr'),
    // The tables are built only when a layer has them (see the top of this file).
    policy: z()
      .lazy(() => policySchema().partial())
      .optional(),
    sandbox: z()
      .lazy(() => sandboxSchema().partial())
      .optional(),
    mcp: z()
      .lazy(() => z().array(mcpServerSchema()))
      .optional()
      .describe('MCP servers: stdio (command) or remote (url)'),
    notes: z()
      .lazy(() => notesSchema().partial())
      .optional(),
  }),
);

export type ConfigLayer = Z.infer<ReturnType<typeof configLayerSchema>>;
export type PolicyConfig = RuneConfig['policy'];
export type SandboxConfig = RuneConfig['sandbox'];
/**
 * One MCP server. `bearer_token` is never read from a file (the schema refuses it there): only
 * Concourse's `source.mcp`, whose values come from a credential manager, sets it.
 */
export type McpServerConfig = Z.infer<ReturnType<typeof mcpServerSchema>> & { bearer_token?: string };
export type StdioMcpConfig = McpServerConfig & { command: string };
export type RemoteMcpConfig = McpServerConfig & { url: string };

export function isRemoteMcp(server: McpServerConfig): server is RemoteMcpConfig {
  return server.url !== undefined;
}
export type NotesConfig = RuneConfig['notes'];

/**
 * Who set each top-level key of a loaded config and how this run's user spells a key path (the
 * flag, or Concourse's `source.…`), for messages that say what to change. Kept under a symbol in
 * the config itself, so every copy carries it (a spread copies own symbol keys) and no dump shows
 * it (JSON, Object.entries and TOML skip symbol keys).
 */
export const CONFIG_PROVENANCE: unique symbol = Symbol.for('rune.config.provenance');

export type ConfigOrigin = 'file' | 'env' | 'flag';

export interface ConfigProvenance {
  readonly origins: Readonly<Record<string, ConfigOrigin>>;
  readonly label: (path: string) => string | undefined;
}

/** The configuration after merging and defaults: what every mode reads. Frozen. */
export type RuneConfig = Z.output<ReturnType<typeof configSchema>> & {
  readonly [CONFIG_PROVENANCE]?: ConfigProvenance;
};

/**
 * Built-in values of one `[[mcp]]` table (or `--mcp-stdio`/`--mcp-http` server) where it leaves a key
 * out: list entries have no place in DEFAULTS, so they are declared here, beside it.
 */
export const MCP_SERVER_DEFAULTS = { timeout_secs: 60 } as const;

export const DEFAULTS = {
  max_steps: 25,
  max_output_tokens: 8192,
  request_timeout_secs: 120,
  context_window: 128_000,
  compact_threshold: 0.8,
  log_level: 'warn',
  policy: {
    mode: 'allowlist',
    allowed_commands: [],
    allowed_domains: [],
    allowed_paths_ro: [],
    allowed_paths_rw: [],
    allowed_files_ro: [],
    allowed_files_rw: [],
    denied_paths: [],
    allowed_mcp_tools: [],
    max_memory_mb: 2048,
    max_pids: 512,
  },
  sandbox: { mode: 'auto', command_timeout_secs: 30, env_passthrough: [], max_file_mb: 1024, tmp_mb: 512 },
  notes: {
    bind: '127.0.0.1',
    port: 9527,
    synchronous: 'normal',
    revision_every_secs: 30,
    max_upload_mb: 10,
    // What one request or client may cost (docs/notes-api.md#limits, checked by limits.test.ts).
    limits: {
      max_file_kb: 1024,
      max_document_kb: 4096,
      max_update_kb: 256,
      collab_kb_per_second: 128,
      max_streams: 2000,
      max_streams_per_client: 16,
      max_streams_per_note: 256,
      max_connections_per_client: 256,
      send_timeout_secs: 60,
      presence_interval_ms: 250,
      search_budget_ms: 500,
      diff_budget_ms: 1000,
      expensive_per_minute: 120,
      login_attempts_per_account: 10,
      login_attempts_per_address: 30,
      login_window_minutes: 15,
    },
  },
} as const satisfies ConfigLayer;

type Defaulted<S, D> = {
  [K in keyof S]: K extends keyof D ? (S[K] extends Z.ZodType ? Z.ZodDefault<S[K]> : never) : S[K];
};

/** `shape` with each key of `defaults` given its built-in value. */
function defaulted<S extends Record<string, Z.ZodType>, D extends object>(
  shape: S,
  defaults: D,
): Defaulted<S, D> {
  const out: Record<string, Z.ZodType> = { ...shape };
  for (const [key, value] of Object.entries(defaults)) out[key] = shape[key]!.default(value as never);
  return out as Defaulted<S, D>;
}

/**
 * The configuration after the layers are merged: the layer's keys with DEFAULTS declared on them,
 * and what rune itself adds. RuneConfig is its output type. A run never builds it: the loader
 * fills DEFAULTS in directly (building zod costs a start ~10 ms, ADR 0024); schema.test.ts checks
 * that the two give the same config.
 */
export const configSchema = once(() => {
  const {
    policy,
    sandbox,
    notes: { limits, ...notes },
    ...top
  } = DEFAULTS;
  const { limits: _l, ...notesShape } = notesSchema().shape;
  const { policy: _p, sandbox: _s, notes: _n, mcp: _m, ...layer } = configLayerSchema().shape;
  return z().strictObject({
    ...defaulted(layer, top),
    policy: z().strictObject(defaulted(policySchema().shape, policy)).prefault({}),
    sandbox: z().strictObject(defaulted(sandboxSchema().shape, sandbox)).prefault({}),
    notes: z()
      .strictObject({
        ...defaulted(notesShape, notes),
        limits: z().strictObject(defaulted(notesLimitsSchema().shape, limits)).prefault({}),
      })
      .prefault({}),
    // Concourse's source.mcp may add a bearer token (from its credential manager); a file never can.
    mcp: z()
      .array(z().strictObject({ ...mcpServerShape(), bearer_token: z().string().optional() }))
      .default([]),
    // Set once the run's policy is resolved (src/policy/project.ts): the folder it was resolved
    // for, the project config that narrowed it (if any) and the entries of it that were ignored
    // because they would have widened it. Never read from a file.
    project_policy: z()
      .strictObject({
        cwd: z().string(),
        file: z().string().optional(),
        ignored: z().array(z().string()).readonly(),
      })
      .readonly()
      .optional(),
  });
});
