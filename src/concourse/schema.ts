// What Concourse hands the resource on stdin ({source, version?, params?}), checked strictly: every
// problem, unknown keys by name, ends up in one stderr line; nothing is silently defaulted.
import { z } from 'zod/v4';
import { checkMcpTable, mcpServerShape } from '../config/mcp-schema.ts';
import { configLayerSchema, policySchema, sandboxSchema } from '../config/schema.ts';
import { RuneError } from '../core/errors.ts';

export type Step = 'check' | 'in' | 'out';

const layer = configLayerSchema().shape;

export const notesSourceSchema = z.strictObject({
  url: z
    .url()
    // fetch refuses such a URL anyway, and every message naming the server would print the password.
    .refine(
      (url) => !URL.canParse(url) || (new URL(url).username === '' && new URL(url).password === ''),
      'must not hold a user name or password: give the token in source.notes.token',
    )
    .describe('Base URL of the `rune notes` server, e.g. https://notes.example.com'),
  token: z.string().min(1).describe('Bearer token issued by a notes admin'),
  note: z.string().min(1).describe('Note that keeps the runs (created on first use)'),
  watch: z
    .string()
    .min(1)
    .refine((name) => !/[/\\]/.test(name) && name !== '.' && name !== '..', 'must be a file name of the note')
    .optional()
    .describe('A file of the note whose revisions become the versions: an edit triggers the pipeline'),
  timeout_secs: z
    .number()
    .int()
    .positive()
    .max(3600)
    .optional()
    .describe('How long one request to the notes server may take, its answer included (default 30)'),
});

// An [[mcp]] table of rune.toml, except that a token comes in the source itself (from the
// pipeline's credential manager), not from the worker's environment.
const { bearer_token_env_var: _fromEnv, env_headers: _alsoFromEnv, ...mcpShape } = mcpServerShape();
export const sourceMcpSchema = z
  .strictObject({
    ...mcpShape,
    bearer_token: z
      .string()
      .min(1)
      .optional()
      .describe('Bearer token of a remote server, e.g. ((docs_mcp_token)); never shown in the build log'),
    headers: mcpShape.headers.describe(
      'HTTP headers of a remote server; credentials (Authorization, X-Api-Key, any key-shaped value) never show in the build log',
    ),
  })
  // Values in the source come from the pipeline's credential manager: headers may carry keys there.
  .superRefine((table, ctx) => checkMcpTable(table, ctx, true));

export const sourceSchema = z.strictObject({
  api_key: layer.api_key,
  provider: layer.provider,
  base_url: layer.base_url,
  model: layer.model,
  prompt: z.string().min(1).optional().describe('Prompt that check (and in, statelessly) run'),
  system_prompt: layer.system_prompt,
  max_steps: layer.max_steps,
  token_budget: layer.token_budget,
  max_output_tokens: layer.max_output_tokens,
  timeout_secs: layer.timeout_secs,
  policy: policySchema().partial().optional().describe('Policy of the agent; mode defaults to allowlist'),
  sandbox: sandboxSchema().partial().optional().describe('Sandbox mode and limits of every tool process'),
  notes: notesSourceSchema.optional().describe('Keep every run in a note of a `rune notes` server'),
  mcp: z
    .array(sourceMcpSchema)
    .optional()
    .describe('MCP servers of the agent, as [[mcp]] tables: stdio (command) or remote (url, bearer_token)'),
  debug: z.boolean().optional().describe('Log every agent event to the build log as NDJSON'),
});

export const inParamsSchema = z.strictObject({
  skip_download: z.boolean().optional().describe('Emit the version without running or fetching anything'),
});

export const outParamsSchema = z.strictObject({
  prompt: z.string().min(1).optional().describe('Prompt of the put'),
  prompt_file: z.string().min(1).optional().describe('File under the put folder holding the prompt'),
  system_prompt: z.string().optional().describe('Replaces the system prompt for this put'),
  append_system_prompt: z.string().optional().describe('Appended to the system prompt for this put'),
});

/** A Concourse version: a non-empty map of strings. */
export const versionSchema = z
  .record(z.string(), z.string({ error: 'must be a string (version values are strings)' }))
  .refine((value) => Object.keys(value).length > 0, 'must not be empty');

export type Source = z.infer<typeof sourceSchema>;
export type NotesSource = z.infer<typeof notesSourceSchema>;
export type InParams = z.infer<typeof inParamsSchema>;
export type OutParams = z.infer<typeof outParamsSchema>;
export type Version = Record<string, string>;

export interface Request<P> {
  /** null when the pipeline gave no source at all. */
  source: Source | null;
  version: Version | null;
  params: P;
}

// The request itself is an open object: a key a future Concourse adds beside source, version and
// params must not fail every step of every pipeline. What the pipeline author writes (source,
// params) stays strict, so a typo there is still named.
const requestSchemas = {
  check: z.object({
    source: sourceSchema.nullable().optional(),
    version: versionSchema.nullable().optional(),
  }),
  in: z.object({
    source: sourceSchema.nullable().optional(),
    version: versionSchema.nullable().optional(),
    params: inParamsSchema.nullable().optional(),
  }),
  out: z.object({
    source: sourceSchema.nullable().optional(),
    params: outParamsSchema.nullable().optional(),
  }),
};

export function parseRequest(step: 'check', text: string): Request<Record<string, never>>;
export function parseRequest(step: 'in', text: string): Request<InParams>;
export function parseRequest(step: 'out', text: string): Request<OutParams>;
export function parseRequest(step: Step, text: string): Request<unknown> {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    // V8's message quotes the input, which may hold a key: only the position is repeated.
    const position = /position (\d+)/.exec((error as Error).message)?.[1];
    const where = position === undefined ? '' : ` (at character ${position})`;
    const why = text.trim() === '' ? 'stdin is empty' : `stdin is not valid JSON${where}`;
    throw new RuneError('USAGE', `${step}: ${why}; Concourse sends {"source": …, "version": …, "params": …}`);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new RuneError('USAGE', `${step}: stdin must be a JSON object {"source": …}`);
  }
  const result = requestSchemas[step].safeParse(raw);
  if (!result.success) {
    throw new RuneError('USAGE', `${step}: invalid input: ${describeIssues(result.error.issues)}`);
  }
  const data = result.data as { source?: Source | null; version?: Version | null; params?: unknown };
  return { source: data.source ?? null, version: data.version ?? null, params: data.params ?? {} };
}

/** Every issue on one line; values are never echoed, since source holds secrets. */
export function describeIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .map((issue) => {
      const path = issue.path.map(String).join('.');
      if (issue.code === 'unrecognized_keys') {
        const keys = issue.keys.map((key) => (path ? `${path}.${key}` : key));
        return `unknown key${keys.length > 1 ? 's' : ''} ${keys.join(', ')}`;
      }
      return `${path || '(top level)'}: ${issue.message}`;
    })
    .join('; ');
}
