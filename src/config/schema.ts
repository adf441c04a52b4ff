// The one schema of rune.toml. Every layer (file, RUNE_* variables, flags) is checked against it
// before the layers are merged; defaults are filled in only after the merge, so a bad value is
// reported, never silently replaced.
import { z } from 'zod/v4';
import { domainPatternProblem } from '../policy/domains.ts';

export const PROVIDERS = ['openai', 'openrouter', 'copilot', 'gemini', 'anthropic'] as const;
export type ProviderName = (typeof PROVIDERS)[number];

export const POLICY_MODES = ['allowlist', 'confirm', 'unrestricted'] as const;
export type PolicyMode = (typeof POLICY_MODES)[number];

export const SANDBOX_MODES = ['auto', 'strict', 'off'] as const;
export type SandboxMode = (typeof SANDBOX_MODES)[number];

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;

const positiveInt = z.number().int().positive();
const pathList = z.array(z.string().min(1, 'must not be empty'));
// `*`, `*.com` and other whole-TLD wildcards are refused here, at load, never narrowed silently later.
const domainList = z.array(
  z
    .string()
    .min(1, 'must not be empty')
    .superRefine((entry, ctx) => {
      const problem = domainPatternProblem(entry);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    }),
);

export const policySchema = z.strictObject({
  mode: z
    .enum(POLICY_MODES)
    .describe('allowlist (default): block what no list covers; confirm: ask; unrestricted'),
  allowed_commands: z
    .array(z.string().trim().min(1, 'must not be empty'))
    .describe('Programs (`ls`) or command prefixes (`git status`) that execute_cmd may run without asking'),
  allowed_domains: domainList.describe(
    'Host names fetch_url and sandboxed tools may reach; `*.x.com` means subdomains of x.com',
  ),
  allowed_paths_ro: pathList.describe('Folders tools may read'),
  allowed_paths_rw: pathList.describe('Folders tools may read and write'),
  allowed_files_ro: pathList.describe('Single files tools may read'),
  allowed_files_rw: pathList.describe('Single files tools may read and write'),
  denied_paths: pathList.describe('Paths no tool may touch, whatever else allows them'),
  allowed_mcp_tools: z
    .array(z.string().min(1))
    .describe('MCP tools allowed without asking: `tool` or `server.*`'),
  max_memory_mb: positiveInt.describe('Memory limit of each tool process tree, in MiB (cgroup memory.max)'),
  max_pids: positiveInt.describe('Process limit of each tool process tree (cgroup pids.max)'),
});

export const sandboxSchema = z.strictObject({
  mode: z
    .enum(SANDBOX_MODES)
    .describe('auto: apply every layer the machine offers; strict: a missing layer is an error; off'),
  command_timeout_secs: positiveInt.describe('Wall-clock limit of one execute_cmd call'),
  env_passthrough: z
    .array(z.string().min(1))
    .describe('Variables passed to tools even though their names look secret (KEY, SECRET, TOKEN, PASSWORD)'),
  max_file_mb: positiveInt
    .optional()
    .describe('Largest file a tool process may write, in MiB (RLIMIT_FSIZE); default 1024'),
  tmp_mb: positiveInt
    .optional()
    .describe('Size of the private /tmp each tool process gets, in MiB; default 512'),
  cpu_percent: positiveInt
    .optional()
    .describe('CPU limit of each tool process tree, in percent of one core (cgroup cpu.max); unset: none'),
});

export const mcpServerSchema = z.strictObject({
  name: z.string().min(1).describe('Name shown in /tools and used in `server.*` allowlist patterns'),
  command: z.string().min(1).describe('Program that starts the stdio server'),
  args: z.array(z.string()).optional().describe('Arguments of the command'),
  env: z
    .record(z.string(), z.string())
    .optional()
    .describe('Environment of the server; nothing else is passed'),
  required: z.boolean().optional().describe('Stop rune when this server cannot start'),
  timeout_secs: positiveInt.optional().describe('Per-call timeout'),
  allowed_paths_ro: pathList.optional().describe('Folders the server process may read'),
  allowed_paths_rw: pathList.optional().describe('Folders the server process may write'),
  allowed_domains: domainList.optional().describe('Domains the server process may reach'),
});

const accountList = z.array(z.string().regex(/^[^:\s]+:.+$/, 'expected "name:password" or "name:scrypt$…"'));

export const notesSchema = z.strictObject({
  bind: z.string().min(1).describe('Address to listen on'),
  port: z.number().int().min(0).max(65535).describe('TCP port'),
  public_url: z.url().optional().describe('External URL, used for OAuth redirects and Secure cookies'),
  trusted_proxies: z
    .array(z.string())
    .optional()
    .describe('Proxy addresses whose X-Forwarded-For is trusted'),
  model: z.string().min(1).optional().describe('Model for note chats unless an admin overrides it per note'),
  max_upload_mb: positiveInt.optional().describe('Largest attachment accepted'),
  synchronous: z
    .enum(['full', 'normal'])
    .optional()
    .describe(
      "SQLite's synchronous level: full (default) fsyncs every acknowledged write, so it survives a power cut; normal survives a crash of the process only (a power cut may lose the last writes)",
    ),
  revision_every_secs: positiveInt
    .optional()
    .describe('During continuous live editing, save a revision at least this often (default 30)'),
  workspace: z
    .string()
    .min(1)
    .optional()
    .describe(
      'Folder the note chats work in, one sub-folder per note (default $XDG_DATA_HOME/rune/notes-workspace); must lie outside RUNE_HOME and the secrets floor',
    ),
  local: z
    .strictObject({
      admins: accountList.optional(),
      users: accountList.optional(),
      guests: accountList.optional(),
    })
    .optional()
    .describe('Local accounts by role'),
  oauth: z
    .array(
      z.strictObject({
        name: z.string().min(1),
        issuer: z.url(),
        client_id: z.string().min(1),
        client_secret: z.string().optional(),
        scopes: z.array(z.string()).optional(),
        admins: z.array(z.string()).optional(),
        users: z.array(z.string()).optional(),
        guests: z.array(z.string()).optional(),
      }),
    )
    .optional()
    .describe('OAuth2/OIDC providers'),
  github: z
    .strictObject({
      client_id: z.string().min(1),
      client_secret: z.string().min(1),
      admins: z.array(z.string()).optional(),
      users: z.array(z.string()).optional(),
      guests: z.array(z.string()).optional(),
    })
    .optional()
    .describe('GitHub OAuth app mapped to roles'),
});

/** One layer of configuration: every key optional, unknown keys rejected. */
export const configLayerSchema = z.strictObject({
  model: z.string().min(1).optional().describe('Model name sent to the provider'),
  api_key: z.string().min(1).optional().describe('Provider API key (prefer RUNE_API_KEY)'),
  provider: z.enum(PROVIDERS).optional().describe('Provider; detected from the key prefix when unset'),
  // Only http(s): "localhost:8080/v1" parses as a URL with the scheme "localhost:".
  base_url: z
    .url({
      protocol: /^https?$/,
      error: 'must be an http:// or https:// URL, e.g. http://127.0.0.1:11434/v1',
    })
    .optional()
    .describe('Endpoint of an OpenAI-compatible (or other) server'),
  skills_dir: z.string().min(1).optional().describe('Folder of skills (folders holding SKILL.md)'),
  system_prompt: z.string().optional().describe('Replaces the built-in system prompt'),
  system_prompt_file: z
    .string()
    .min(1)
    .optional()
    .describe('File whose text replaces the built-in system prompt'),
  max_steps: positiveInt.optional().describe('Model calls per run before it stops with MaxSteps'),
  token_budget: positiveInt.optional().describe('Tokens per run before it stops with TokenBudgetExhausted'),
  max_output_tokens: positiveInt.optional().describe('max_tokens of every model request'),
  timeout_secs: positiveInt.optional().describe('Whole-run timeout'),
  request_timeout_secs: positiveInt.optional().describe('Timeout of one model request'),
  context_window: positiveInt.optional().describe('Context window of the model, in tokens'),
  compact_threshold: z
    .number()
    .gt(0)
    .lt(1)
    .optional()
    .describe('Fraction of the context window that triggers compaction'),
  trace: z.string().min(1).optional().describe('Folder for JSON trace files of each run'),
  log_level: z.enum(LOG_LEVELS).optional().describe('Least severe level written to stderr'),
  policy: policySchema.partial().optional(),
  sandbox: sandboxSchema.partial().optional(),
  mcp: z.array(mcpServerSchema).optional().describe('stdio MCP servers'),
  notes: notesSchema.partial().optional(),
});

export type ConfigLayer = z.infer<typeof configLayerSchema>;
export type PolicyConfig = z.infer<typeof policySchema>;
export type SandboxConfig = z.infer<typeof sandboxSchema>;
export type McpServerConfig = z.infer<typeof mcpServerSchema>;
export type NotesConfig = z.infer<typeof notesSchema>;

/** The configuration after merging and defaults: what every mode reads. Frozen. */
export interface RuneConfig {
  model?: string;
  api_key?: string;
  provider?: ProviderName;
  base_url?: string;
  skills_dir?: string;
  system_prompt?: string;
  system_prompt_file?: string;
  max_steps: number;
  token_budget?: number;
  max_output_tokens: number;
  timeout_secs?: number;
  request_timeout_secs: number;
  context_window: number;
  compact_threshold: number;
  trace?: string;
  log_level: (typeof LOG_LEVELS)[number];
  policy: PolicyConfig;
  sandbox: SandboxConfig;
  mcp: McpServerConfig[];
  notes: NotesConfig;
}

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
  sandbox: { mode: 'auto', command_timeout_secs: 30, env_passthrough: [] },
  notes: { bind: '127.0.0.1', port: 9527 },
} as const satisfies Partial<RuneConfig>;
