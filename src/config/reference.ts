// The reference of rune.toml, read off the one schema: every key with its description and default.
// `rune init`'s commented template and the README's configuration table are both rendered from it,
// so a key added to the schema appears in both, and reference.test.ts fails when the README drifts.
import type { z } from 'zod/v4';
import { checkpointsSchema, configLayerSchema, DEFAULTS, policySchema, sandboxSchema } from './schema.ts';

export interface ConfigKey {
  /** As rune.toml spells it: `max_steps`, `policy.allowed_commands`. */
  path: string;
  /** The table it sits in (`policy`), or '' for the top level. */
  table: string;
  key: string;
  description: string;
  /** The built-in value, when there is one (DEFAULTS in schema.ts). */
  default?: unknown;
}

// The tables documented key by key; [[mcp]] and [notes] have their own sections (README "MCP
// servers", "Notes server", docs/notes-api.md).
const TABLES = ['', 'policy', 'sandbox', 'checkpoints'] as const;
// Keys that are described but not offered in a template: a secret belongs in the environment.
const SECRET_KEYS = new Set(['api_key']);

type AnySchema = z.ZodType & {
  description?: string;
  unwrap?: () => AnySchema;
  shape?: Record<string, AnySchema>;
};

/** The description on a field or on what its optional wrapper holds. */
function describe(field: AnySchema | undefined): string {
  for (let current = field; current; current = current.unwrap?.()) {
    if (current.description) return current.description;
    if (typeof current.unwrap !== 'function') break;
  }
  return '';
}

function defaultOf(table: string, key: string): unknown {
  const scope = (table ? (DEFAULTS as Record<string, unknown>)[table] : DEFAULTS) as
    | Record<string, unknown>
    | undefined;
  return scope?.[key];
}

/** Every documented key, in the schema's order, table by table. */
export function configReference(): ConfigKey[] {
  const out: ConfigKey[] = [];
  const top = configLayerSchema().shape as unknown as Record<string, AnySchema>;
  const tables: Record<string, Record<string, AnySchema>> = {
    '': top,
    policy: policySchema().shape as unknown as Record<string, AnySchema>,
    sandbox: sandboxSchema().shape as unknown as Record<string, AnySchema>,
    checkpoints: checkpointsSchema().shape as unknown as Record<string, AnySchema>,
  };
  for (const table of TABLES) {
    const shape = tables[table]!;
    for (const [key, field] of Object.entries(shape)) {
      if (!table && ['policy', 'sandbox', 'checkpoints', 'mcp', 'notes'].includes(key)) continue;
      const description = describe(field);
      const value = defaultOf(table, key);
      out.push({
        path: table ? `${table}.${key}` : key,
        table,
        key,
        description,
        ...(value !== undefined ? { default: value } : {}),
      });
    }
  }
  return out;
}

function toml(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(toml).join(', ')}]`;
  return String(value);
}

/**
 * The commented lines of one table for `rune init`: `# key = default  # description`, skipping the
 * keys the caller writes itself (`set`). A key without a default is shown with its description only.
 */
export function templateLines(table: string, set: ReadonlySet<string> = new Set()): string[] {
  return configReference()
    .filter((entry) => entry.table === table && !set.has(entry.key) && !SECRET_KEYS.has(entry.key))
    .map((entry) =>
      entry.default !== undefined
        ? `# ${entry.key} = ${toml(entry.default)}  # ${entry.description}`
        : `# ${entry.key}: ${entry.description}`,
    );
}

/** The README's table of rune.toml keys (between its config-reference markers). */
export function referenceTable(): string {
  const rows = configReference().map(
    (entry) =>
      `| \`${entry.path}\` | ${entry.default === undefined ? '' : `\`${toml(entry.default)}\``} | ${entry.description.replace(/\|/g, '\\|')} |`,
  );
  return ['| key | default | meaning |', '|---|---|---|', ...rows].join('\n');
}

export const README_MARKERS = {
  start: '<!-- config-reference: generated from src/config/schema.ts; see src/config/reference.test.ts -->',
  end: '<!-- /config-reference -->',
} as const;
