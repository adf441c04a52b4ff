// The one schema of rune.toml. Every layer (file, RUNE_* variables, flags) is checked against it
// before the layers are merged; defaults are filled in only after the merge, so a bad value is
// reported, never silently replaced.
// The `[[mcp]]` tables are mcp-schema.ts, `[notes]` notes-schema.ts; every built-in value is in
// DEFAULTS here.
//
// Each schema is built on first use (schema-kit.ts), and the tables of a layer only when the layer
// has them: building every zod schema of rune.toml is a visible share of a pipe run (bench/pipe.mjs),
// yet most runs set a few top-level keys (a model, a key) and nothing under [notes] or [[mcp]].
import type { z as Z } from 'zod/v4';
import { mcpServerSchema, mcpServerShape } from './mcp-schema.ts';
import { notesLimitsSchema, notesSchema } from './notes-schema.ts';
import { domainList, once, pathList, positiveInt, z } from './schema-kit.ts';

export const PROVIDERS = ['openai', 'openrouter', 'copilot', 'gemini', 'anthropic'] as const;
export type ProviderName = (typeof PROVIDERS)[number];

export const POLICY_MODES = ['allowlist', 'confirm', 'unrestricted'] as const;
export type PolicyMode = (typeof POLICY_MODES)[number];

export const SANDBOX_MODES = ['auto', 'strict', 'off'] as const;
export type SandboxMode = (typeof SANDBOX_MODES)[number];

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;

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
    accept_unprotected_grants: z()
      .boolean()
      .describe(
        "Without namespaces, run anyway with a writable grant that holds your home folder's start-up files or rune's own folder (Landlock cannot keep them read-only); refused otherwise",
      ),
    cpu_percent: positiveInt()
      .optional()
      .describe('CPU limit of each tool process tree, in percent of one core (cgroup cpu.max); unset: none'),
  }),
);

export const checkpointsSchema = once(() =>
  z().strictObject({
    enabled: z()
      .boolean()
      .describe(
        'Record checkpoints in the interactive session (pipe mode: with --checkpoint; Concourse and notes: never)',
      ),
    max_mb: positiveInt().describe(
      "Disk space all sessions' checkpoints may take, in MiB; the least recently used sessions' go first",
    ),
    max_file_mb: positiveInt().describe('Largest file a checkpoint keeps, in MiB (a larger one is reported)'),
  }),
);

/**
 * The keys of one layer of configuration, each with a function building its schema. A layer is
 * checked against the keys it has (`layerSchemaFor`): building every key's schema cost a pipe run
 * with three flags ~15 M instructions of its ~235 M (valgrind), most of what zod costs that run.
 */
const LAYER_FIELDS = {
  model: () => z().string().min(1).optional().describe('Model name sent to the provider'),
  api_key: () => z().string().min(1).optional().describe('Provider API key (prefer RUNE_API_KEY)'),
  provider: () =>
    z().enum(PROVIDERS).optional().describe('Provider; detected from the key prefix when unset'),
  // Only http(s): "localhost:8080/v1" parses as a URL with the scheme "localhost:".
  base_url: () =>
    z()
      .url({
        protocol: /^https?$/,
        error: 'must be an http:// or https:// URL, e.g. http://127.0.0.1:11434/v1',
      })
      .optional()
      .describe('Endpoint of an OpenAI-compatible (or other) server'),
  skills_dir: () => z().string().min(1).optional().describe('Folder of skills (folders holding SKILL.md)'),
  system_prompt: () => z().string().optional().describe('Replaces the built-in system prompt'),
  system_prompt_file: () =>
    z().string().min(1).optional().describe('File whose text replaces the built-in system prompt'),
  max_steps: () => positiveInt().optional().describe('Model calls per run before it stops with MaxSteps'),
  token_budget: () =>
    positiveInt().optional().describe('Tokens per run before it stops with TokenBudgetExhausted'),
  max_output_tokens: () => positiveInt().optional().describe('max_tokens of every model request'),
  timeout_secs: () => positiveInt().optional().describe('Whole-run timeout'),
  request_timeout_secs: () => positiveInt().optional().describe('Timeout of one model request'),
  context_window: () => positiveInt().optional().describe('Context window of the model, in tokens'),
  compact_threshold: () =>
    z().number().gt(0).lt(1).optional().describe('Fraction of the context window that triggers compaction'),
  input_price: () =>
    z()
      .number()
      .nonnegative()
      .optional()
      .describe('Price of one million input tokens (any currency), for the cost /status shows'),
  output_price: () =>
    z()
      .number()
      .nonnegative()
      .optional()
      .describe('Price of one million output tokens (any currency), for the cost /status shows'),
  trace: () => z().string().min(1).optional().describe('Folder for JSON trace files of each run'),
  log_level: () => z().enum(LOG_LEVELS).optional().describe('Least severe level written to stderr'),
  // The tables are built only when a layer has them (see the top of this file).
  policy: () =>
    z()
      .lazy(() => policySchema().partial())
      .optional(),
  sandbox: () =>
    z()
      .lazy(() => sandboxSchema().partial())
      .optional(),
  checkpoints: () =>
    z()
      .lazy(() => checkpointsSchema().partial())
      .optional(),
  mcp: () =>
    z()
      .lazy(() => z().array(mcpServerSchema()))
      .optional()
      .describe('MCP servers: stdio (command) or remote (url)'),
  notes: () =>
    z()
      .lazy(() => notesSchema().partial())
      .optional(),
};

type LayerFields = typeof LAYER_FIELDS;
type LayerShape<K extends keyof LayerFields> = { [Key in K]: ReturnType<LayerFields[Key]> };

function layerShape<K extends keyof LayerFields>(keys: readonly K[]): LayerShape<K> {
  const shape: Partial<LayerShape<K>> = {};
  for (const key of keys) shape[key] = LAYER_FIELDS[key]() as LayerShape<K>[K];
  return shape as LayerShape<K>;
}

/** One layer of configuration: every key optional, unknown keys rejected. */
export const configLayerSchema = once(() =>
  z().strictObject(layerShape(Object.keys(LAYER_FIELDS) as (keyof LayerFields)[])),
);

/**
 * The layer schema narrowed to the keys of `layer` it knows (still strict: any other key is
 * reported as unknown), built from the same field schemas, so with the same messages.
 */
export function layerSchemaFor(layer: object) {
  const keys = Object.keys(layer).filter((key): key is keyof LayerFields => Object.hasOwn(LAYER_FIELDS, key));
  return z().strictObject(layerShape(keys));
}

export type ConfigLayer = Z.infer<ReturnType<typeof configLayerSchema>>;
export type PolicyConfig = RuneConfig['policy'];
export type SandboxConfig = RuneConfig['sandbox'];
export type CheckpointsConfig = RuneConfig['checkpoints'];
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
  sandbox: {
    mode: 'auto',
    command_timeout_secs: 30,
    env_passthrough: [],
    max_file_mb: 1024,
    tmp_mb: 512,
    accept_unprotected_grants: false,
  },
  checkpoints: { enabled: true, max_mb: 2048, max_file_mb: 64 },
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
      max_anonymous_streams: 1000,
      max_anonymous_streams_per_note: 128,
      max_connections_per_client: 256,
      send_timeout_secs: 60,
      body_timeout_secs: 60,
      max_body_memory_mb: 64,
      max_uploads_in_flight_mb: 256,
      max_uploads_in_flight_mb_per_user: 32,
      export_cpu_ms_per_minute: 6000,
      files_per_minute: 60,
      revisions_per_minute: 240,
      upload_mb_per_minute: 100,
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
    checkpoints,
    notes: { limits, ...notes },
    ...top
  } = DEFAULTS;
  const { limits: _l, ...notesShape } = notesSchema().shape;
  const {
    policy: _p,
    sandbox: _s,
    checkpoints: _c,
    notes: _n,
    mcp: _m,
    ...layer
  } = configLayerSchema().shape;
  return z().strictObject({
    ...defaulted(layer, top),
    policy: z().strictObject(defaulted(policySchema().shape, policy)).prefault({}),
    sandbox: z().strictObject(defaulted(sandboxSchema().shape, sandbox)).prefault({}),
    checkpoints: z().strictObject(defaulted(checkpointsSchema().shape, checkpoints)).prefault({}),
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
