// What every part of the policy decision shares: the effective lists, the input, and the pure
// helpers that answer "readable?", "writable?", "a secret?", "run later?" and shape a refusal.
import type { PolicyMode } from '../config/schema.ts';
import type { DomainPattern } from '../core/domains.ts';
import { isUnder } from '../core/paths.ts';
import { floorEntryFor } from './paths.ts';
import type { ShellAnalysis } from './shell.ts';
import type { AllowlistSuggestion, PolicyDecision, ToolCallForPolicy } from './types.ts';

/** The allowlists with every path absolute and canonical, and domains parsed. */
export interface EffectiveLists {
  commands: readonly string[];
  domains: readonly DomainPattern[];
  pathsRo: readonly string[];
  pathsRw: readonly string[];
  filesRo: readonly string[];
  filesRw: readonly string[];
  denied: readonly string[];
  mcpTools: readonly string[];
}

export interface PolicyInput {
  call: ToolCallForPolicy;
  mode: PolicyMode;
  lists: EffectiveLists;
  /** Floor entries, lexical and canonical forms both. */
  floor: readonly string[];
  cwd: string;
  home: string;
  /** Lexical absolute path → canonical path, for every path `callPaths` named. */
  canonical: Readonly<Record<string, string>>;
  /** The analysis of execute_cmd's text; absent means the parser could not run. */
  shell?: ShellAnalysis;
  /** Lexical glob path → the lexical paths it matches now, for every path `callGlobs` named. */
  globs?: Readonly<Record<string, readonly string[]>>;
  /** How the user names an allow list in hints (default `[policy] allowed_commands`, as in rune.toml). */
  listName?: (list: string) => string;
  /** What the sandbox guarantees commands (absent: neither, the careful answer). */
  sandbox?: SandboxFacts;
}

export interface SandboxFacts {
  /** Commands get a private, empty /tmp (the namespaces layer's view). */
  privateTmp: boolean;
  /** The git guard keeps git folders under writable roots from running what a command planted. */
  gitGuard: boolean;
}

/** Where a redirection or a program may write or read whatever the lists say. */
export const SAFE_SINKS = ['/dev/null', '/dev/stdout', '/dev/stderr'];

/** Not covered by any list: blocked in allowlist mode, asked in confirm mode. */
export function uncovered(
  input: PolicyInput,
  reason: string,
  rule: string,
  question: string,
  suggestion?: AllowlistSuggestion,
): PolicyDecision {
  if (input.mode === 'confirm')
    return { kind: 'ask', question, reason, rule, ...(suggestion ? { suggestion } : {}) };
  const list = suggestion && (input.listName?.(suggestion.list) ?? `[policy] ${suggestion.list}`);
  const hint = suggestion ? ` (add '${suggestion.value}' to ${list} to allow it)` : '';
  return { kind: 'deny', reason: `${reason}${hint}`, rule, ...(suggestion ? { suggestion } : {}) };
}

export function floorOrDenied(
  input: PolicyInput,
  lexical: string,
  canonical: string,
): PolicyDecision | undefined {
  for (const path of new Set([lexical, canonical])) {
    const floor = floorEntryFor(path, input.floor);
    if (floor) {
      return {
        kind: 'deny',
        reason: `${lexical} is a protected secret (${floor}); no configuration allows it, only --unrestricted`,
        rule: 'floor',
      };
    }
    const denied = input.lists.denied.find((entry) => isUnder(path, entry));
    if (denied)
      return { kind: 'deny', reason: `${lexical} is under denied path ${denied}`, rule: 'denied_paths' };
  }
  return undefined;
}

export function readable(lists: EffectiveLists, path: string): string | undefined {
  if (lists.filesRo.includes(path)) return 'allowed_files_ro';
  if (lists.filesRw.includes(path)) return 'allowed_files_rw';
  if (lists.pathsRo.some((root) => isUnder(path, root))) return 'allowed_paths_ro';
  if (lists.pathsRw.some((root) => isUnder(path, root))) return 'allowed_paths_rw';
  return undefined;
}

export function writable(lists: EffectiveLists, path: string): string | undefined {
  if (lists.filesRw.includes(path)) return 'allowed_files_rw';
  if (lists.pathsRw.some((root) => isUnder(path, root))) return 'allowed_paths_rw';
  return undefined;
}

// Files whose contents an allowlisted program executes later: a write there turns `git status` (or
// the next shell) into arbitrary code. Anything inside a .git folder counts (hooks, config, info).
const RUNS_LATER_NAMES = new Set([
  '.bashrc',
  '.bash_profile',
  '.profile',
  '.zshrc',
  '.zprofile',
  '.bash_login',
  '.envrc',
  '.gitconfig',
  '.zshenv',
  '.zlogin',
  '.zlogout',
  '.bash_logout',
  '.xprofile',
  '.xsessionrc',
  // A .git file ("gitdir: elsewhere") points git at hooks and config the agent wrote.
  '.git',
]);

// Folders whose files a desktop session, systemd or a shell start by themselves.
const RUNS_LATER_FOLDERS = ['.config/autostart', '.config/systemd', '.config/fish', '.config/environment.d'];

export function runsLater(path: string): boolean {
  const parts = path.split('/');
  return (
    parts.slice(0, -1).includes('.git') ||
    RUNS_LATER_NAMES.has(parts.at(-1) ?? '') ||
    parts.at(-1) === '.gitmodules' ||
    RUNS_LATER_FOLDERS.some((folder) => path.includes(`/${folder}/`))
  );
}
