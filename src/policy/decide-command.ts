// The decision on one execute_cmd line (docs/adr/0037-run-what-was-judged.md). Every path the
// line names is held to the floor and denied_paths; constructs rune does not model block it; each
// command is judged from the folders it runs in: what its program's rules say it writes must be
// writable (or the sandbox's private /tmp), what it reads recursively must not hold a secret, and
// its program must be on allowed_commands. An allowed line runs as rune re-wrote it (`script`):
// the commands and words it judged, so no shell can read anything else into it.
import { dirname } from 'node:path';
import { absolutePath, isUnder } from '../core/paths.ts';
import { matchAllowed } from './commands.ts';
import {
  floorOrDenied,
  type PolicyInput,
  readable,
  runsLater,
  SAFE_SINKS,
  uncovered,
  writable,
} from './decide-kit.ts';
import { checkDirectories, directoryBases, type PlacedCommand } from './directories.ts';
import { globAcrossFolders } from './paths.ts';
import type { ShellAnalysis, SimpleCommand } from './shell.ts';
import type { PolicyDecision } from './types.ts';

type Analysis = Extract<ShellAnalysis, { ok: true }>;

export interface CommandPath {
  path: string;
  kind: 'argument' | 'read' | 'write';
  /** The word holds an unquoted glob: the gate lists what it matches (`globs`). */
  glob?: boolean;
}

/**
 * Every path the line may name, lexical and absolute: each relative word resolved against every
 * folder it may be relative to (cd and git -C move them), for the gate to canonicalise.
 */
export function commandPaths(shell: Analysis, cwd: string, home: string): CommandPath[] {
  // The gate asks twice (paths, globs) and the decision once, for the same line.
  const cached = pathCache.get(shell);
  if (cached?.cwd === cwd && cached.home === home) return cached.paths;
  const listed = listPaths(shell, cwd, home);
  // Past the bound the gate resolves nothing (each path is a realpath) and the line is refused.
  const paths = new Set(listed.map((entry) => entry.path)).size > MAX_JUDGED_PATHS ? [] : listed;
  pathCache.set(shell, { cwd, home, paths, overflow: paths !== listed });
  return paths;
}

/**
 * A line naming more paths (each word against each folder it may be relative to) is refused: the
 * gate resolves every one, and a decision must not hold the run loop for long (bench/policy.mjs).
 */
export const MAX_JUDGED_PATHS = 512;

function tooManyPaths(shell: Analysis, cwd: string, home: string): boolean {
  commandPaths(shell, cwd, home);
  return pathCache.get(shell)?.overflow === true;
}

const pathCache = new WeakMap<
  Analysis,
  { cwd: string; home: string; paths: CommandPath[]; overflow: boolean }
>();

function listPaths(shell: Analysis, cwd: string, home: string): CommandPath[] {
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
      const eq = word.indexOf('=');
      if (glob) add(word.startsWith('-') && eq !== -1 ? word.slice(eq + 1) : word, 'argument', true);
      else if (!word.startsWith('-')) add(word, 'argument');
      else if (eq !== -1) add(word.slice(eq + 1), 'argument');
      // A short option with its value attached (`-f~/.ssh/key`, `-o/tmp/x`).
      else if (!word.startsWith('--') && word.length > 2 && /^[~/.]|\//.test(word.slice(2))) {
        add(word.slice(2), 'argument');
      }
    }
    const program = command.program;
    for (const word of program?.writes ?? []) add(word, 'write');
    for (const word of [...(program?.reads ?? []), ...(program?.trees ?? [])]) add(word, 'read');
  }
  for (const redirect of shell.redirects) {
    if (!redirect.dup) add(redirect.target, redirect.writes ? 'write' : 'read');
  }
  return out;
}

export function decideCommand(input: PolicyInput): PolicyDecision {
  const text = input.call.args.cmd;
  if (typeof text !== 'string' || text.trim() === '') {
    return { kind: 'deny', reason: `${input.call.tool} needs a non-empty "cmd"`, rule: 'args.invalid' };
  }
  const question = `Execute: ${text}`;
  const shell = input.shell;
  if (!shell)
    return { kind: 'deny', reason: 'the shell parser is not available', rule: 'command.parser-unavailable' };
  if (!shell.ok) return uncovered(input, `not auto-allowed: ${shell.error}`, 'command.parse-error', question);
  if (tooManyPaths(shell, input.cwd, input.home)) {
    return uncovered(
      input,
      `not auto-allowed: the command names more than ${MAX_JUDGED_PATHS} paths (counting each folder a cd may leave it in); split it`,
      'command.parse-error',
      question,
    );
  }

  const paths = checkPaths(input, shell);
  if (paths.decision) return paths.decision;
  const directories = checkDirectories(shell, {
    cwd: input.cwd,
    home: input.home,
    canonical: input.canonical,
    readable: (path) => readable(input.lists, path) !== undefined,
    writable: (path) => writable(input.lists, path) !== undefined,
    gitGuard: input.sandbox?.gitGuard ?? false,
  });
  const placed = directories.problem
    ? shell.commands.map((command) => ({
        command,
        listed: command,
        folders: allBases(input, shell),
        cd: false,
      }))
    : directories.commands;
  const recursive = recursiveIntoFloor(input, placed);
  if (recursive) return recursive;
  const hazards = paths.acrossFolders ? [...shell.hazards, 'a glob across folders'] : shell.hazards;
  if (hazards.length > 0) {
    return uncovered(
      input,
      `not auto-allowed: the command uses ${hazards.join(', ')}`,
      'command.construct',
      question,
    );
  }
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
  for (const { command } of placed) {
    const refused = command.program?.refused;
    if (refused) {
      return uncovered(
        input,
        `not auto-allowed: ${refused}; rune never auto-allows this use, whatever allowed_commands says`,
        'command.dangerous',
        question,
      );
    }
  }
  // The redirections first (the question names them), then the list, then what listed programs write.
  return (
    checkAccess(input, placed, question, 'redirections') ??
    notListed(input, placed, question) ??
    checkAccess(input, placed, question, 'programs') ?? {
      kind: 'allow',
      rule: 'allowed_commands',
      args: { cmd: shell.script },
    }
  );
}

function allBases(input: PolicyInput, shell: Analysis): string[] {
  return directoryBases(shell, input.cwd, input.home) ?? [input.cwd];
}

/** The floor and denied_paths for every path the line names; globs through what they match now. */
function checkPaths(
  input: PolicyInput,
  shell: Analysis,
): { decision?: PolicyDecision; acrossFolders: boolean } {
  let acrossFolders = false;
  for (const entry of commandPaths(shell, input.cwd, input.home)) {
    if (entry.glob) {
      if (globAcrossFolders(entry.path)) {
        acrossFolders = true;
        continue;
      }
      const matches = input.globs?.[entry.path];
      if (matches === undefined) {
        return {
          decision: { kind: 'deny', reason: `${entry.path} could not be listed`, rule: 'path.unresolved' },
          acrossFolders,
        };
      }
      for (const match of matches) {
        const blocked = floorOrDenied(input, match, input.canonical[match] ?? match);
        if (blocked) return { decision: blocked, acrossFolders };
      }
      continue;
    }
    const canonical = input.canonical[entry.path];
    if (canonical === undefined) {
      return {
        decision: { kind: 'deny', reason: `${entry.path} could not be resolved`, rule: 'path.unresolved' },
        acrossFolders,
      };
    }
    const blocked = floorOrDenied(input, entry.path, canonical);
    if (blocked) return { decision: blocked, acrossFolders };
  }
  return { acrossFolders };
}

/** A tree walk from a folder that holds a secret (`grep -r key ~`, `rg token` in $HOME) reads the secret. */
function recursiveIntoFloor(
  input: PolicyInput,
  placed: readonly PlacedCommand[],
): PolicyDecision | undefined {
  for (const { command, folders } of placed) {
    for (const word of command.program?.trees ?? []) {
      for (const folder of folders) {
        const lexical = absolutePath(word, folder, input.home);
        const root = input.canonical[lexical] ?? lexical;
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
  }
  return undefined;
}

/** Files git reads as a repository's configuration when it finds them in a folder. */
const GIT_REPOSITORY_FILES = new Set([
  'config',
  'config.worktree',
  'HEAD',
  'commondir',
  'gitdir',
  'packed-refs',
]);

/**
 * What each command writes (its redirections, what its program's rules name) must be writable and
 * not run later; what it reads through `<` must be readable. The sandbox's /tmp is private to the
 * call when it has the namespaces layer: writes there reach nothing outside.
 */
function checkAccess(
  input: PolicyInput,
  placed: readonly PlacedCommand[],
  question: string,
  which: 'redirections' | 'programs',
): PolicyDecision | undefined {
  const runsGit = placed.some(({ command }) => programName(command) === 'git');
  for (const { command, folders } of placed) {
    const writes =
      which === 'redirections'
        ? command.redirects
            .filter((r) => !r.dup && r.writes)
            .map((r) => ({ word: r.target, what: `redirection ${r.operator}`, rule: 'command.redirect' }))
        : (command.program?.writes ?? []).map((word) => ({
            word,
            what: `${command.argv[0]} writes`,
            rule: 'command.write',
          }));
    const reads =
      which === 'redirections'
        ? command.redirects.filter((r) => !r.dup && !r.writes).map((r) => r.target)
        : [];
    for (const folder of folders) {
      for (const { word, what, rule } of writes) {
        const lexical = absolutePath(word, folder, input.home);
        const canonical = input.canonical[lexical] ?? lexical;
        if (SAFE_SINKS.includes(lexical) || privateTmp(input, lexical, canonical)) continue;
        if (runsLater(canonical)) {
          return uncovered(
            input,
            `not auto-allowed: ${word} is run later by git or the shell`,
            'path.runs-later',
            question,
          );
        }
        if (runsGit && GIT_REPOSITORY_FILES.has(canonical.slice(canonical.lastIndexOf('/') + 1))) {
          return uncovered(
            input,
            `not auto-allowed: ${word} is a name git reads as repository configuration, and the line runs git`,
            'path.runs-later',
            question,
          );
        }
        if (!writable(input.lists, canonical)) {
          return uncovered(
            input,
            `not auto-allowed: ${what} ${word}, which is outside the writable paths`,
            rule,
            question,
            { list: 'allowed_files_rw', value: canonical },
          );
        }
      }
      for (const word of reads) {
        const lexical = absolutePath(word, folder, input.home);
        const canonical = input.canonical[lexical] ?? lexical;
        if (SAFE_SINKS.includes(lexical) || privateTmp(input, lexical, canonical)) continue;
        if (!readable(input.lists, canonical)) {
          return uncovered(
            input,
            `not auto-allowed: redirection < ${word} is outside the readable paths`,
            'command.redirect',
            question,
            { list: 'allowed_files_ro', value: canonical },
          );
        }
      }
    }
  }
  return undefined;
}

/**
 * A path in the sandbox's own /tmp: under /tmp in both forms, and neither at, inside nor above a
 * folder or file the lists grant (the view binds those at their real paths over the private /tmp,
 * so a working directory under /tmp is the host's folder there, judged by the lists).
 */
function privateTmp(input: PolicyInput, lexical: string, canonical: string): boolean {
  if (input.sandbox?.privateTmp !== true || !isUnder(lexical, '/tmp') || !isUnder(canonical, '/tmp'))
    return false;
  const { pathsRo, pathsRw, filesRo, filesRw } = input.lists;
  const bound = (path: string) => (entry: string) => isUnder(path, entry) || isUnder(entry, path);
  return ![...pathsRo, ...pathsRw, ...filesRo, ...filesRw].some(
    (entry) => bound(lexical)(entry) || bound(canonical)(entry),
  );
}

function programName(command: SimpleCommand): string {
  const program = command.argv[0] ?? '';
  return program.slice(program.lastIndexOf('/') + 1);
}

/** The programs not on allowed_commands (cd and the harmless builtins need no entry). */
function notListed(
  input: PolicyInput,
  placed: readonly PlacedCommand[],
  question: string,
): PolicyDecision | undefined {
  const missing: string[] = [];
  for (const { listed, cd } of placed) {
    if (cd || listed.program?.builtin) continue;
    if (!matchAllowed(listed.argv, input.lists.commands)) missing.push(listed.argv[0]!);
  }
  if (missing.length === 0) return undefined;
  const programs = [...new Set(missing)];
  return uncovered(
    input,
    `${programs.map((name) => `'${name}'`).join(', ')} ${programs.length > 1 ? 'are' : 'is'} not in allowed_commands`,
    'command.not-allowed',
    question,
    programs.length === 1 ? { list: 'allowed_commands', value: programs[0]! } : undefined,
  );
}
