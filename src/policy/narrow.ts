// Pure narrowing by a project's `.rune/rune.toml`: a repository can tighten the policy for work in
// it, never widen it. An entry it lists survives only when the user's own lists already cover it.
import type { PolicyMode } from '../config/schema.ts';
import type { DomainPattern } from '../core/domains.ts';
import { isUnder } from '../core/paths.ts';
import { matchAllowed } from './commands.ts';
import type { EffectiveLists } from './decide.ts';

const STRICTNESS: Record<PolicyMode, number> = { unrestricted: 0, confirm: 1, allowlist: 2 };

export function narrowMode(base: PolicyMode, project: PolicyMode | undefined): PolicyMode {
  return project !== undefined && STRICTNESS[project] > STRICTNESS[base] ? project : base;
}

export interface Narrowed {
  lists: EffectiveLists;
  /** Project entries dropped because they would have widened the user's policy. */
  dropped: string[];
}

function coveredDomain(pattern: DomainPattern, base: readonly DomainPattern[]): boolean {
  return base.some((entry) => {
    if (entry.port !== undefined && entry.port !== pattern.port) return false;
    if (!entry.wildcard) return !pattern.wildcard && entry.host === pattern.host;
    return pattern.host.endsWith(`.${entry.host}`) || (pattern.wildcard && pattern.host === entry.host);
  });
}

function coveredMcp(tool: string, base: readonly string[]): boolean {
  return base.some(
    (entry) => entry === tool || (entry.endsWith('.*') && tool.startsWith(entry.slice(0, -1))),
  );
}

/** The base lists narrowed by every list the project sets; `denied` adds up. */
export function narrowLists(base: EffectiveLists, project: Partial<EffectiveLists>): Narrowed {
  const dropped: string[] = [];
  const keep = <T>(
    list: keyof EffectiveLists,
    entries: readonly T[] | undefined,
    covered: (entry: T) => boolean,
    show: (entry: T) => string,
  ) => {
    if (entries === undefined) return base[list] as unknown as readonly T[];
    return entries.filter((entry) => {
      if (covered(entry)) return true;
      dropped.push(`${list}: ${show(entry)}`);
      return false;
    });
  };
  const readableBase = [...base.pathsRo, ...base.pathsRw];
  const id = (entry: string) => entry;
  return {
    lists: {
      commands: keep(
        'commands',
        project.commands,
        (entry) => !!matchAllowed(entry.trim().split(/\s+/), base.commands),
        id,
      ),
      domains: keep(
        'domains',
        project.domains,
        (entry) => coveredDomain(entry, base.domains),
        (entry) => `${entry.wildcard ? '*.' : ''}${entry.host}${entry.port ? `:${entry.port}` : ''}`,
      ),
      pathsRo: keep(
        'pathsRo',
        project.pathsRo,
        (entry) => readableBase.some((root) => isUnder(entry, root)),
        id,
      ),
      pathsRw: keep(
        'pathsRw',
        project.pathsRw,
        (entry) => base.pathsRw.some((root) => isUnder(entry, root)),
        id,
      ),
      filesRo: keep(
        'filesRo',
        project.filesRo,
        (entry) =>
          [...base.filesRo, ...base.filesRw].includes(entry) ||
          readableBase.some((root) => isUnder(entry, root)),
        id,
      ),
      filesRw: keep(
        'filesRw',
        project.filesRw,
        (entry) => base.filesRw.includes(entry) || base.pathsRw.some((root) => isUnder(entry, root)),
        id,
      ),
      denied: [...base.denied, ...(project.denied ?? [])],
      mcpTools: keep('mcpTools', project.mcpTools, (entry) => coveredMcp(entry, base.mcpTools), id),
    },
    dropped,
  };
}
