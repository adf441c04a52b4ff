// Reads rune.toml, the RUNE_* variables and the flags, checks each layer against the one schema,
// reports every problem at once as `source: key.path: message`, then merges
// (defaults < file < env < flags) and freezes the result.
import { readFileSync } from 'node:fs';
import { parse as parseToml, TomlError } from 'smol-toml';
import type { z } from 'zod/v4';
import { credentialsInArgs, credentialsInEnv } from '../core/command-credentials.ts';
import { type ErrorCode, RuneError } from '../core/errors.ts';
import { configFile } from '../core/paths.ts';
import { registerSecret } from '../core/redact.ts';
import {
  CONFIG_PROVENANCE,
  type ConfigLayer,
  type ConfigOrigin,
  configLayerSchema,
  DEFAULTS,
  layerSchemaFor,
  type RuneConfig,
} from './schema.ts';

/** RUNE_* variables and the key each sets. Numbers are parsed here; the schema judges the result. */
export const ENV_KEYS: Record<string, string> = {
  RUNE_MODEL: 'model',
  RUNE_API_KEY: 'api_key',
  RUNE_PROVIDER: 'provider',
  RUNE_BASE_URL: 'base_url',
  RUNE_SKILLS_DIR: 'skills_dir',
  RUNE_SYSTEM_PROMPT: 'system_prompt',
  RUNE_MAX_STEPS: 'max_steps',
  RUNE_TOKEN_BUDGET: 'token_budget',
  RUNE_MAX_OUTPUT_TOKENS: 'max_output_tokens',
  RUNE_TIMEOUT_SECS: 'timeout_secs',
  RUNE_CONTEXT_WINDOW: 'context_window',
  RUNE_TRACE: 'trace',
  RUNE_LOG_LEVEL: 'log_level',
  RUNE_POLICY_MODE: 'policy.mode',
  RUNE_SANDBOX: 'sandbox.mode',
};

const NUMERIC = new Set(['max_steps', 'token_budget', 'max_output_tokens', 'timeout_secs', 'context_window']);

export interface LoadConfigOptions {
  env?: NodeJS.ProcessEnv;
  /** Values from command-line flags, already shaped like the file. */
  flags?: ConfigLayer;
  /**
   * How the caller's users set each key path, for messages: `max_steps` → `--max-steps` on the
   * command line, `source.max_steps` in a Concourse resource. A function answers for every path.
   */
  flagLabels?: Record<string, string> | FlagLabel;
  /** An explicit config file (--config); it must exist. Default: $RUNE_HOME/rune.toml if present. */
  file?: string;
  readFile?: (path: string) => string;
}

export interface LoadedConfig {
  config: RuneConfig;
  /** The config file consulted, and whether it existed. */
  file: string;
  fileFound: boolean;
}

type Problem = string;

/**
 * Which exit code a failed load ends with, by the worst layer that failed: a file that cannot be
 * read at all (IO, exit 12) before a file or variable that is wrong (CONFIG_INVALID, 3) before a
 * flag value — or a Concourse `source` key, which is also input on the command line — that is
 * wrong (USAGE, 2, like every other usage error). Every problem is listed whatever the code.
 */
export function loadFailureCode(kinds: ReadonlySet<'io' | 'config' | 'usage'>): ErrorCode {
  if (kinds.has('io')) return 'IO';
  if (kinds.has('config')) return 'CONFIG_INVALID';
  return 'USAGE';
}

export type FlagLabel = (path: string) => string | undefined;

function labelFunction(labels: LoadConfigOptions['flagLabels']): FlagLabel {
  if (typeof labels === 'function') return labels;
  return (path) => labels?.[path];
}

export function loadConfig(options: LoadConfigOptions = {}): LoadedConfig {
  const env = options.env ?? process.env;
  const read = options.readFile ?? ((path: string) => readFileSync(path, 'utf8'));
  const file = options.file ?? configFile(env);
  const problems: Problem[] = [];
  const kinds = new Set<'io' | 'config' | 'usage'>();

  let fileLayer: ConfigLayer = {};
  let fileFound = false;
  let text: string | undefined;
  try {
    text = read(file);
    fileFound = true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' || options.file !== undefined) {
      const hint =
        options.file === undefined ? 'make it readable by you' : 'check the path given with --config';
      problems.push(`${file}: cannot read: ${(error as Error).message}; ${hint}`);
      kinds.add('io');
    }
  }
  const counted = (kind: 'config' | 'usage', check: () => ConfigLayer): ConfigLayer => {
    const before = problems.length;
    const layer = check();
    if (problems.length > before) kinds.add(kind);
    return layer;
  };
  if (text !== undefined) {
    fileLayer = counted('config', () => {
      const raw = parseTomlText(file, text, problems);
      return raw ? checkLayer(raw, problems, (path) => `${file}: ${path || '(top level)'}`) : {};
    });
  }

  const envLayer = counted('config', () => checkLayer(envToRaw(env), problems, (path) => envLabel(path)));
  const flagLabel = labelFunction(options.flagLabels);
  const flagLayer = counted('usage', () =>
    checkLayer(options.flags ?? {}, problems, (path) => flagLabel(path) ?? path),
  );

  if (problems.length > 0) {
    const code = loadFailureCode(kinds);
    const what = code === 'USAGE' ? 'invalid value' : 'invalid configuration';
    throw new RuneError(code, `${what} (${problems.length} problem${problems.length > 1 ? 's' : ''})`, {
      details: problems,
    });
  }

  const merged = mergeLayers([fileLayer, envLayer, flagLayer]);
  const origins: Record<string, ConfigOrigin> = {};
  for (const [origin, layer] of [
    ['file', fileLayer],
    ['env', envLayer],
    ['flag', flagLayer],
  ] as const) {
    for (const [key, value] of Object.entries(layer)) if (value !== undefined) origins[key] = origin;
  }
  const config = deepFreeze({
    ...withDefaults(merged),
    [CONFIG_PROVENANCE]: Object.freeze({ origins: Object.freeze(origins), label: flagLabel }),
  });
  registerConfigSecrets(config);
  return { config, file, fileFound };
}

// Whichever mode loaded the config, its credentials are secret from then on: an error that quotes
// one before the provider or the notes server registered it is still redacted.
function registerConfigSecrets(config: RuneConfig): void {
  registerSecret(config.api_key);
  for (const provider of config.notes.oauth ?? []) registerSecret(provider.client_secret);
  registerSecret(config.notes.github?.client_secret);
  for (const server of config.mcp) {
    if (!('command' in server)) {
      // A remote server's URL (`?api_key=…`) and credential headers are printed by /mcp and /config.
      const headers = Object.entries(server.headers ?? {}).map(([name, value]) => `${name}: ${value}`);
      for (const value of credentialsInArgs([server.url ?? '', ...headers])) registerSecret(value);
      continue;
    }
    for (const value of credentialsInArgs(server.args ?? [])) registerSecret(value);
    for (const value of credentialsInEnv(server.env ?? {})) registerSecret(value);
  }
}

/**
 * The layer a top-level key of a loadConfig() result (or a copy of one) came from; undefined for
 * defaults and for configs not loaded. The provider needs it: a provider's own key variable ranks
 * between RUNE_API_KEY and the file.
 */
export function configOrigin(config: RuneConfig, key: keyof ConfigLayer): ConfigOrigin | undefined {
  return config[CONFIG_PROVENANCE]?.origins[key];
}

/**
 * How the user of this run sets a key path, for messages that tell them what to change: the flag
 * (or `source.…` key) when that is where it came from or it is unset, the RUNE_* variable that set
 * it, else `fallback` (by default the path itself, as rune.toml spells it).
 */
export function settingName(config: RuneConfig, path: string, fallback: string = path): string {
  const provenance = config[CONFIG_PROVENANCE];
  const origin = provenance?.origins[path.split('.')[0] ?? path];
  if (origin === 'env') {
    const name = Object.keys(ENV_KEYS).find((key) => ENV_KEYS[key] === path);
    return name ?? fallback;
  }
  if (origin === 'file') return fallback;
  return provenance?.label(path) ?? fallback;
}

/**
 * A frozen copy of `config` with `changes` applied. A key changed to `undefined` is removed
 * (`/trace off`). Where the keys came from travels with the copy, as with any spread copy.
 */
export function deriveConfig(
  config: RuneConfig,
  changes: { [K in keyof RuneConfig]?: RuneConfig[K] | undefined },
): RuneConfig {
  const merged: Record<string | symbol, unknown> = { ...config, ...changes };
  for (const [key, value] of Object.entries(changes)) if (value === undefined) delete merged[key];
  return deepFreeze(merged as unknown as RuneConfig);
}

export function parseTomlText(
  file: string,
  text: string,
  problems: Problem[],
): Record<string, unknown> | undefined {
  try {
    return parseToml(text) as Record<string, unknown>;
  } catch (error) {
    if (error instanceof TomlError) {
      problems.push(`${file}: line ${error.line}, column ${error.column}: ${firstLine(error.message)}`);
    } else {
      problems.push(`${file}: ${(error as Error).message}`);
    }
    return undefined;
  }
}

function firstLine(text: string): string {
  return text.split('\n')[0] ?? text;
}

function checkLayer(raw: unknown, problems: Problem[], label: (path: string) => string): ConfigLayer {
  // Every key of a layer is optional, so an empty layer (no file, no RUNE_* variable, no flag: most
  // runs) is valid as it is; building the schema for it would be paid by every start (bench/pipe.mjs).
  if (isEmptyObject(raw)) return {};
  // Each layer is checked once: compiling zod's fast path (new Function) would cost more than it saves.
  const result = presentKeysSchema(raw).safeParse(raw, { jitless: true });
  if (result.success) return result.data;
  for (const issue of result.error.issues) problems.push(describeIssue(issue, label));
  return {};
}

/**
 * The layer schema narrowed to the keys the layer has (still strict: any other key is reported as
 * unknown). zod visits every key of an object's shape, and an absent optional table still builds
 * its lazy schema to ask whether it is optional: checking three flags built the policy, sandbox,
 * MCP and notes schemas on every start (bench/pipe.mjs). Only the present keys' schemas are built
 * (`layerSchemaFor`); the same field schemas, so the same messages.
 */
export function presentKeysSchema(raw: unknown) {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return configLayerSchema();
  return layerSchemaFor(raw);
}

function describeIssue(issue: z.core.$ZodIssue, label: (path: string) => string): string {
  const path = issue.path.map(String).join('.');
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => `${label(path ? `${path}.${key}` : key)}: unknown key`).join('\n');
  }
  return `${label(path)}: ${issue.message}`;
}

function envLabel(path: string): string {
  const name = Object.entries(ENV_KEYS).find(([, key]) => key === path)?.[0];
  return name ?? `environment: ${path}`;
}

function envToRaw(env: NodeJS.ProcessEnv): Record<string, unknown> {
  const raw: Record<string, unknown> = {};
  for (const [name, path] of Object.entries(ENV_KEYS)) {
    const value = env[name];
    if (value === undefined || value === '') continue;
    const parsed = NUMERIC.has(path) && /^[-+]?\d+(\.\d+)?$/.test(value) ? Number(value) : value;
    setPath(raw, path.split('.'), parsed);
  }
  return raw;
}

function setPath(target: Record<string, unknown>, keys: string[], value: unknown): void {
  let node = target;
  for (const key of keys.slice(0, -1)) {
    node[key] ??= {};
    node = node[key] as Record<string, unknown>;
  }
  node[keys[keys.length - 1]!] = value;
}

/** Later layers win key by key inside tables; arrays are replaced, except MCP servers, which add up. */
export function mergeLayers(layers: ConfigLayer[]): ConfigLayer {
  const out: Record<string, unknown> = {};
  for (const layer of layers) {
    for (const [key, value] of Object.entries(layer)) {
      if (value === undefined) continue;
      if (key === 'mcp') {
        out.mcp = [...((out.mcp as unknown[]) ?? []), ...(value as unknown[])];
      } else if (isTable(value)) {
        out[key] = { ...((out[key] as object) ?? {}), ...stripUndefined(value) };
      } else {
        out[key] = value;
      }
    }
  }
  return out as ConfigLayer;
}

function isTable(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function stripUndefined(value: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).filter(([, inner]) => inner !== undefined));
}

/** The merged layers with DEFAULTS filled in: what configSchema() would give, without building zod. */
export function withDefaults(layer: ConfigLayer): RuneConfig {
  return {
    ...DEFAULTS,
    ...stripUndefined(layer),
    policy: { ...DEFAULTS.policy, ...layer.policy },
    sandbox: { ...DEFAULTS.sandbox, ...layer.sandbox },
    checkpoints: { ...DEFAULTS.checkpoints, ...layer.checkpoints },
    notes: {
      ...DEFAULTS.notes,
      ...layer.notes,
      limits: { ...DEFAULTS.notes.limits, ...layer.notes?.limits },
    },
    mcp: layer.mcp ?? [],
  } as RuneConfig;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

function isEmptyObject(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return (proto === Object.prototype || proto === null) && Reflect.ownKeys(value).length === 0;
}
