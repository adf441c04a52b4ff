// The policy decision: a pure function from a tool call (paths already canonicalised by the gate),
// the effective lists, the mode and the home folder to allow / deny / ask. No I/O, no env, no clock.

import { dirname } from 'node:path';
import type { PolicyMode } from '../config/schema.ts';
import { type DomainPattern, hostAllowed } from '../core/domains.ts';
import { absolutePath, isUnder } from '../core/paths.ts';
import { dangerousUse, matchAllowed } from './commands.ts';
import { checkDirectories, directoryBases } from './directories.ts';
import { floorEntryFor, globAcrossFolders } from './paths.ts';
import type { ShellAnalysis } from './shell.ts';
import type { AllowlistSuggestion, PolicyDecision, ToolAccess, ToolCallForPolicy } from './types.ts';

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
}

/** What a call of a rune tool reaches (what its tool declares); MCP tools are judged apart. */
function accessOf(call: ToolCallForPolicy): ToolAccess | undefined {
  return call.source === 'builtin' ? call.access : undefined;
}

/** A rune tool running a shell command: its `cmd` is what is judged. */
export function runsCommand(call: ToolCallForPolicy): boolean {
  return accessOf(call)?.kind === 'command';
}

/** A walk over a tree: `path` may be left out and means the working directory. */
function walks(call: ToolCallForPolicy): boolean {
  const access = accessOf(call);
  return access?.kind === 'read' && access.target === 'tree';
}

/** The path a file tool names: its `path` argument, or '.' for a walk without one. */
function toolPath(call: ToolCallForPolicy): unknown {
  const path = call.args.path;
  return path === undefined && walks(call) ? '.' : path;
}
const SAFE_SINKS = ['/dev/null', '/dev/stdout', '/dev/stderr'];

/** The lexical absolute paths a call names, which the gate must canonicalise before deciding. */
export function callPaths(
  call: ToolCallForPolicy,
  cwd: string,
  home: string,
  shell?: ShellAnalysis,
): string[] {
  const kind = accessOf(call)?.kind;
  const path = toolPath(call);
  if ((kind === 'read' || kind === 'write') && typeof path === 'string' && path !== '') {
    return [absolutePath(path, cwd, home)];
  }
  if (kind === 'command' && shell?.ok) {
    return commandPaths(shell, cwd, home)
      .filter((entry) => !entry.glob)
      .map((entry) => entry.path);
  }
  return [];
}

/** The one-folder glob words of a command (lexical, absolute) whose matches the gate must list. */
export function callGlobs(
  call: ToolCallForPolicy,
  cwd: string,
  home: string,
  shell?: ShellAnalysis,
): string[] {
  if (!runsCommand(call) || !shell?.ok) return [];
  return commandPaths(shell, cwd, home)
    .filter((entry) => entry.glob && !globAcrossFolders(entry.path))
    .map((entry) => entry.path);
}

interface CommandPath {
  path: string;
  kind: 'argument' | 'read' | 'write';
  /** The word holds an unquoted glob: the gate lists what it matches (`globs`). */
  glob?: boolean;
}

function commandPaths(shell: Extract<ShellAnalysis, { ok: true }>, cwd: string, home: string): CommandPath[] {
  // cd and git -C move later relative paths (a list chains them, a pipeline does not): relative
  // words are checked against every folder they might be resolved in.
  const bases = directoryBases(shell, cwd, home) ?? [cwd];
  const out: CommandPath[] = [];
  const add = (word: string, kind: CommandPath['kind'], glob = false) => {
    if (word === '' || word === '-') return;
    const paths =
      word.startsWith('/') || word.startsWith('~')
        ? [absolutePath(word, cwd, home)]
        : bases.map((base) => absolutePath(word, base, home));
    for (const path of paths) {
      out.push({ path, kind, ...(glob ? { glob } : {}) });
      // The folder a glob lists is checked like any other path.
      if (glob) out.push({ path: dirname(path), kind });
    }
  };
  for (const command of shell.commands) {
    for (const [index, word] of command.argv.entries()) {
      if (index === 0) continue;
      const glob = command.globs[index] === true;
      if (glob) {
        const eq = word.indexOf('=');
        add(word.startsWith('-') && eq !== -1 ? word.slice(eq + 1) : word, 'argument', true);
        continue;
      }
      if (word.startsWith('-')) {
        const eq = word.indexOf('=');
        if (eq !== -1) add(word.slice(eq + 1), 'argument');
        // A short option with its value attached (`-f~/.ssh/key`, `-o/tmp/x`).
        else if (!word.startsWith('--') && word.length > 2 && /^[~/.]|\//.test(word.slice(2))) {
          add(word.slice(2), 'argument');
        }
      } else {
        add(word, 'argument');
      }
    }
  }
  for (const redirect of shell.redirects) add(redirect.target, redirect.writes ? 'write' : 'read');
  return out;
}

export function decide(input: PolicyInput): PolicyDecision {
  const { call, mode } = input;
  if (mode === 'unrestricted') return { kind: 'allow', rule: 'mode.unrestricted' };
  if (call.source === 'mcp') return decideMcp(input);
  const access = accessOf(call);
  switch (access?.kind) {
    case 'read':
    case 'write':
      return decidePath(input, access);
    case 'command':
      return decideCommand(input);
    case 'url':
      return decideUrl(input);
    case 'own-files':
      return { kind: 'allow', rule: 'notes.own-files' };
    case 'none':
      return { kind: 'allow', rule: `tool.${call.tool}` };
    case undefined:
      return { kind: 'deny', reason: `unknown tool "${call.tool}"`, rule: 'tool.unknown' };
  }
}

/** Not covered by any list: blocked in allowlist mode, asked in confirm mode. */
function uncovered(
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

function floorOrDenied(input: PolicyInput, lexical: string, canonical: string): PolicyDecision | undefined {
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

function runsLater(path: string): boolean {
  const parts = path.split('/');
  return (
    parts.slice(0, -1).includes('.git') ||
    RUNS_LATER_NAMES.has(parts.at(-1) ?? '') ||
    parts.at(-1) === '.gitmodules' ||
    RUNS_LATER_FOLDERS.some((folder) => path.includes(`/${folder}/`))
  );
}

/** The question's verb for each kind of read. */
const READ_VERBS = { file: 'Read', folder: 'List', tree: 'Search' } as const;

function decidePath(
  input: PolicyInput,
  tool: Extract<ToolAccess, { kind: 'read' | 'write' }>,
): PolicyDecision {
  const access = tool.kind;
  const raw = toolPath(input.call);
  if (typeof raw !== 'string' || raw === '') {
    return { kind: 'deny', reason: `${input.call.tool} needs a non-empty "path"`, rule: 'args.invalid' };
  }
  const lexical = absolutePath(raw, input.cwd, input.home);
  const canonical = input.canonical[lexical];
  if (canonical === undefined) {
    return { kind: 'deny', reason: `${raw} could not be resolved`, rule: 'path.unresolved' };
  }
  const blocked = floorOrDenied(input, lexical, canonical);
  if (blocked) return blocked;
  if (access === 'write' && runsLater(canonical)) {
    return uncovered(
      input,
      `${canonical} is run by git or the shell later (hooks, config); writing it is never auto-allowed`,
      'path.runs-later',
      `Write ${canonical}?`,
    );
  }
  const rule = access === 'read' ? readable(input.lists, canonical) : writable(input.lists, canonical);
  if (rule) return { kind: 'allow', rule };
  const folder = tool.kind === 'read' && tool.target !== 'file';
  const suggestion: AllowlistSuggestion = folder
    ? { list: 'allowed_paths_ro', value: canonical }
    : { list: access === 'read' ? 'allowed_files_ro' : 'allowed_files_rw', value: canonical };
  const shown = canonical === lexical ? canonical : `${lexical} (${canonical})`;
  const verb = tool.kind === 'write' ? tool.verb : READ_VERBS[tool.target];
  return uncovered(
    input,
    `${shown} is outside the ${access === 'read' ? 'readable' : 'writable'} paths`,
    'path.not-allowed',
    `${verb} ${shown}?`,
    suggestion,
  );
}

function decideCommand(input: PolicyInput): PolicyDecision {
  const text = input.call.args.cmd;
  if (typeof text !== 'string' || text.trim() === '') {
    return { kind: 'deny', reason: `${input.call.tool} needs a non-empty "cmd"`, rule: 'args.invalid' };
  }
  const question = `Execute: ${text}`;
  const shell = input.shell;
  if (!shell)
    return { kind: 'deny', reason: 'the shell parser is not available', rule: 'command.parser-unavailable' };
  if (!shell.ok) return uncovered(input, `not auto-allowed: ${shell.error}`, 'command.parse-error', question);

  let acrossFolders = false;
  for (const entry of commandPaths(shell, input.cwd, input.home)) {
    if (entry.glob) {
      if (globAcrossFolders(entry.path)) {
        acrossFolders = true;
        continue;
      }
      const matches = input.globs?.[entry.path];
      if (matches === undefined) {
        return { kind: 'deny', reason: `${entry.path} could not be listed`, rule: 'path.unresolved' };
      }
      for (const match of matches) {
        const blocked = floorOrDenied(input, match, input.canonical[match] ?? match);
        if (blocked) return blocked;
      }
      continue;
    }
    const canonical = input.canonical[entry.path];
    if (canonical === undefined) {
      return { kind: 'deny', reason: `${entry.path} could not be resolved`, rule: 'path.unresolved' };
    }
    const blocked = floorOrDenied(input, entry.path, canonical);
    if (blocked) return blocked;
  }
  const recursive = recursiveIntoFloor(input, shell);
  if (recursive) return recursive;
  const hazards = acrossFolders ? [...shell.hazards, 'a glob across folders'] : shell.hazards;
  if (hazards.length > 0) {
    return uncovered(
      input,
      `not auto-allowed: the command uses ${hazards.join(', ')}`,
      'command.construct',
      question,
    );
  }
  for (const redirect of shell.redirects) {
    const lexical = absolutePath(redirect.target, input.cwd, input.home);
    const canonical = input.canonical[lexical] ?? lexical;
    if (SAFE_SINKS.includes(lexical)) continue;
    if (redirect.writes && runsLater(canonical)) {
      return uncovered(
        input,
        `not auto-allowed: ${redirect.target} is run later by git or the shell`,
        'path.runs-later',
        question,
      );
    }
    const ok = redirect.writes ? writable(input.lists, canonical) : readable(input.lists, canonical);
    if (!ok) {
      return uncovered(
        input,
        `not auto-allowed: redirection ${redirect.operator} ${redirect.target} is outside the ${redirect.writes ? 'writable' : 'readable'} paths`,
        'command.redirect',
        question,
      );
    }
  }
  // cd DIR and git -C DIR are followed when DIR is readable; the allow list judges the rest.
  const directories = checkDirectories(shell, {
    cwd: input.cwd,
    home: input.home,
    canonical: input.canonical,
    readable: (path) => readable(input.lists, path) !== undefined,
    writable: (path) => writable(input.lists, path) !== undefined,
  });
  if (directories.problem) {
    const { reason, folder } = directories.problem;
    return uncovered(
      input,
      `not auto-allowed: ${reason}`,
      'command.directory',
      question,
      folder ? { list: 'allowed_paths_ro', value: folder } : undefined,
    );
  }
  const missing: string[] = [];
  for (const command of directories.commands) {
    const danger = dangerousUse(command);
    if (danger) return uncovered(input, `not auto-allowed: ${danger}`, 'command.dangerous', question);
    if (!matchAllowed(command.argv, input.lists.commands)) missing.push(command.argv[0]!);
  }
  if (missing.length === 0) return { kind: 'allow', rule: 'allowed_commands' };
  const programs = [...new Set(missing)];
  return uncovered(
    input,
    `${programs.map((name) => `'${name}'`).join(', ')} ${programs.length > 1 ? 'are' : 'is'} not in allowed_commands`,
    'command.not-allowed',
    question,
    programs.length === 1 ? { list: 'allowed_commands', value: programs[0]! } : undefined,
  );
}

/** Programs that read whole folder trees (rg searches the working directory with no path). */
const RECURSIVE_READERS = new Set(['rg', 'ag', 'ack', 'tar', 'zip', 'cp', 'rsync', 'scp']);
const GREPS = new Set(['grep', 'egrep', 'fgrep', 'zgrep']);

function readsRecursively(argv: readonly string[]): boolean {
  const [program = '', ...args] = argv;
  if (RECURSIVE_READERS.has(program)) return true;
  if (!GREPS.has(program)) return false;
  return args.some(
    (arg, index) =>
      /^-[a-zA-Z]*[rR]/.test(arg) ||
      arg.startsWith('--recursive') ||
      arg.startsWith('--dereference-recursive') ||
      arg === '--directories=recurse' ||
      (arg === '-d' && args[index + 1] === 'recurse'),
  );
}

/** A tree walk from a folder that holds a secret (`grep -r key ~`, `rg token` in $HOME) reads the secret. */
function recursiveIntoFloor(
  input: PolicyInput,
  shell: Extract<ShellAnalysis, { ok: true }>,
): PolicyDecision | undefined {
  for (const command of shell.commands) {
    if (!readsRecursively(command.argv)) continue;
    const words = command.argv.slice(1).filter((word) => !word.startsWith('-'));
    // With only a pattern (or nothing), grep -r and rg search the working directory.
    const roots = words.length <= 1 ? [input.cwd] : [];
    for (const word of words) {
      const lexical = absolutePath(word, input.cwd, input.home);
      roots.push(input.canonical[lexical] ?? lexical);
    }
    for (const root of roots) {
      const inside = input.floor.find((entry) => entry !== root && isUnder(entry, root));
      if (inside) {
        return {
          kind: 'deny',
          reason: `${command.argv[0]} would read ${root} recursively, which holds the protected ${inside}; name a narrower folder`,
          rule: 'floor',
        };
      }
    }
  }
  return undefined;
}

function decideUrl(input: PolicyInput): PolicyDecision {
  const raw = input.call.args.url;
  let url: URL;
  try {
    url = new URL(String(raw));
  } catch {
    return { kind: 'deny', reason: `"${String(raw)}" is not a URL`, rule: 'args.invalid' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return {
      kind: 'deny',
      reason: `only http and https URLs can be fetched, not ${url.protocol}`,
      rule: 'url.scheme',
    };
  }
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (hostAllowed(host, port, input.lists.domains)) return { kind: 'allow', rule: 'allowed_domains' };
  return uncovered(input, `${host} is not in allowed_domains`, 'domain.not-allowed', `Fetch ${url.href}?`, {
    list: 'allowed_domains',
    value: host,
  });
}

function decideMcp(input: PolicyInput): PolicyDecision {
  const { call } = input;
  const qualified = call.server ? `${call.server}.${call.tool}` : call.tool;
  const hit = input.lists.mcpTools.find(
    (entry) =>
      entry === call.tool ||
      entry === qualified ||
      (call.server !== undefined && entry === `${call.server}.*`),
  );
  if (hit) return { kind: 'allow', rule: 'allowed_mcp_tools' };
  if (call.readOnly) return { kind: 'allow', rule: 'mcp.read-only' };
  return uncovered(
    input,
    `MCP tool ${qualified} is not in allowed_mcp_tools`,
    'mcp.not-allowed',
    `Call MCP tool ${qualified}?`,
    { list: 'allowed_mcp_tools', value: call.tool },
  );
}
