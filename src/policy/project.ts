// A project's `.rune/rune.toml` and the one resolved policy of a run: the config's lists as the
// gate reads them (paths canonical), and the config narrowed by the project for everything else.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { deriveConfig, parseTomlText } from '../config/load.ts';
import { policySchema, type RuneConfig } from '../config/schema.ts';
import { type DomainPattern, parseDomainPattern } from '../core/domains.ts';
import { RuneError } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import { absolutePath, canonicalise, homeDir } from '../core/paths.ts';
import type { EffectiveLists } from './decide.ts';
import { narrowLists, narrowMode } from './narrow.ts';

type PolicyLists = Partial<Omit<RuneConfig['policy'], 'mode' | 'max_memory_mb' | 'max_pids'>>;

export function listsOf(policy: PolicyLists, cwd: string, home: string): Partial<EffectiveLists> {
  const paths = (list: readonly string[] | undefined) =>
    list?.map((entry) => canonicalise(absolutePath(entry, cwd, home)));
  const out: Partial<EffectiveLists> = {};
  if (policy.allowed_commands) out.commands = policy.allowed_commands;
  // The schema rejected bad patterns at load; anything unparsable here is dropped, never widened.
  if (policy.allowed_domains) {
    out.domains = policy.allowed_domains
      .map(parseDomainPattern)
      .filter((pattern): pattern is DomainPattern => typeof pattern !== 'string');
  }
  const set = <K extends keyof EffectiveLists>(key: K, value: EffectiveLists[K] | undefined) => {
    if (value !== undefined) out[key] = value;
  };
  set('pathsRo', paths(policy.allowed_paths_ro));
  set('pathsRw', paths(policy.allowed_paths_rw));
  set('filesRo', paths(policy.allowed_files_ro));
  set('filesRw', paths(policy.allowed_files_rw));
  set('denied', paths(policy.denied_paths));
  if (policy.allowed_mcp_tools) out.mcpTools = policy.allowed_mcp_tools;
  return out;
}

export function effectiveLists(config: RuneConfig, cwd: string, home: string): EffectiveLists {
  const lists = listsOf(config.policy, cwd, home) as EffectiveLists;
  // The working directory joins the readable paths at start (README "Policy").
  return { ...lists, pathsRo: [...lists.pathsRo, canonicalise(cwd)] };
}

/** The [policy] table of `<cwd>/.rune/rune.toml`, checked against the schema; undefined when there is none. */
export function readProjectPolicy(cwd: string, logger: Logger): Partial<RuneConfig['policy']> | undefined {
  const file = join(cwd, '.rune', 'rune.toml');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new RuneError('CONFIG_INVALID', `cannot read the project config ${file}`, { cause: error });
  }
  const problems: string[] = [];
  const raw = parseTomlText(file, text, problems);
  const parsed =
    raw &&
    policySchema()
      .partial()
      .safeParse(raw.policy ?? {});
  if (parsed && !parsed.success) {
    for (const issue of parsed.error.issues)
      problems.push(`${file}: policy.${issue.path.join('.')}: ${issue.message}`);
  }
  if (problems.length > 0 || !parsed?.success) {
    throw new RuneError('CONFIG_INVALID', `invalid project configuration ${file}`, { details: problems });
  }
  const ignored = Object.keys(raw ?? {}).filter((key) => key !== 'policy');
  if (ignored.length > 0) {
    logger.warn('policy.project_keys_ignored', {
      message: `${file}: only [policy] is read from a project config; ignored: ${ignored.join(', ')}`,
    });
  }
  return parsed.data;
}

const LIST_KEYS = [
  'allowed_commands',
  'allowed_domains',
  'allowed_paths_ro',
  'allowed_paths_rw',
  'allowed_files_ro',
  'allowed_files_rw',
  'allowed_mcp_tools',
] as const;
const PATH_KEYS = new Set<string>([
  'allowed_paths_ro',
  'allowed_paths_rw',
  'allowed_files_ro',
  'allowed_files_rw',
]);

/** True when `config` is the resolved policy of a run in `cwd`: narrowing it again would warn twice. */
export function isResolvedFor(config: RuneConfig, cwd: string): boolean {
  return config.project_policy?.cwd === cwd;
}

/**
 * The run's policy, resolved once: the layered config narrowed by `<cwd>/.rune/rune.toml`'s [policy]
 * (a project can tighten, never widen), with project paths made absolute. Every mode calls this
 * before it builds anything from the config — the CLI, each notes chat run (in the note's
 * workspace) and a Concourse step (in its folder) — and hands the result to the gate, the sandbox
 * plan, MCP servers, fetch_url and `/policy` alike. The result says what narrowed it in
 * `project_policy`, a plain field, so copies of the config keep it.
 */
export function resolveRunPolicy(
  config: RuneConfig,
  cwd: string,
  env: NodeJS.ProcessEnv,
  logger: Logger,
): RuneConfig {
  if (isResolvedFor(config, cwd)) return config;
  const project = readProjectPolicy(cwd, logger);
  if (!project) return deriveConfig(config, { project_policy: { cwd, ignored: [] } });
  const file = join(cwd, '.rune', 'rune.toml');
  const home = homeDir(env);
  const base = effectiveLists(config, cwd, home);
  const policy: Record<string, unknown> = {
    ...config.policy,
    mode: narrowMode(config.policy.mode, project.mode),
  };
  const dropped: string[] = [];
  for (const key of LIST_KEYS) {
    const entries = project[key];
    if (entries === undefined) continue;
    policy[key] = entries
      .filter((entry) => {
        const ok = narrowLists(base, listsOf({ [key]: [entry] }, cwd, home)).dropped.length === 0;
        if (!ok) dropped.push(`${key}: ${entry}`);
        return ok;
      })
      .map((entry) => (PATH_KEYS.has(key) ? absolutePath(entry, cwd, home) : entry));
  }
  policy.denied_paths = [
    ...config.policy.denied_paths,
    ...(project.denied_paths ?? []).map((entry) => absolutePath(entry, cwd, home)),
  ];
  for (const key of ['max_memory_mb', 'max_pids'] as const) {
    const value = project[key];
    if (value !== undefined) policy[key] = Math.min(value, config.policy[key]);
  }
  if (dropped.length > 0) {
    logger.warn('policy.project_widening_ignored', {
      message: `the project config ${file} can only narrow the policy; ignored: ${dropped.join('; ')}`,
    });
  }
  return deriveConfig(config, {
    policy: policy as RuneConfig['policy'],
    project_policy: { cwd, file, ignored: dropped },
  });
}
