// The folders a command line moves into: `cd DIR` (a shell builtin that by itself changes nothing
// but where later relative paths point) and git's `-C DIR`. Pure: paths come in canonicalised by the
// gate, and readability and writability are answered by the caller's allow lists.
//
// Each command is judged from the folders it may run in: after `cd DIR &&` only DIR (the rest of
// the && chain runs only when cd succeeded); after `;` or `||` DIR or where the line was before; a
// cd inside a pipeline changes nothing (each part is a subshell). `cd DIR` is allowed without being
// in allowed_commands when DIR is readable. `git -C DIR` is judged as the same git command without
// `-C DIR`, when DIR is readable, and its relative words from DIR. What makes git in another folder
// dangerous is which repository it then obeys: its .git/config can name programs git runs and its
// hooks run. In a writable folder the agent could have planted those; the sandbox's git guard
// (docs/adr/0017-sandbox-git.md) keeps every git folder's config and hooks under a writable root
// read-only during a call and undoes what a call planted after it, so with the guard on git may run
// there. With `sandbox.mode = off` there is no guard, and git in a writable folder other than the
// working directory is refused.
import { absolutePath } from '../core/paths.ts';
import type { ShellAnalysis, SimpleCommand } from './shell.ts';

type Analysis = Extract<ShellAnalysis, { ok: true }>;

/** Beyond this many possible working folders the line is judged too involved to prove safe. */
const MAX_BASES = 32;

export interface DirectoryContext {
  cwd: string;
  home: string;
  /** Lexical absolute path → canonical path (the gate resolved every path commandPaths named). */
  canonical: Readonly<Record<string, string>>;
  /** The allow-list rule that makes a canonical path readable or writable, if any. */
  readable(path: string): boolean;
  writable(path: string): boolean;
  /** The sandbox's git guard runs around every command (off only with sandbox.mode = off). */
  gitGuard: boolean;
}

export interface DirectoryProblem {
  reason: string;
  /** A folder to add to allowed_paths_ro that would allow the line. */
  folder?: string;
}

/** One command of the line with the folders its relative words are resolved in. */
export interface PlacedCommand {
  /** As the line has it. */
  command: SimpleCommand;
  /** As the allow list judges it: git's `-C DIR` pairs removed. */
  listed: SimpleCommand;
  /** Where its relative words point (lexical, absolute): where it runs, or git's -C folders. */
  folders: string[];
  /** A `cd`: judged by its folder, never by the allow list. */
  cd: boolean;
}

export interface DirectoryCheck {
  commands: PlacedCommand[];
  problem?: DirectoryProblem;
}

/** The folder word of `cd [-L|-P] [--] DIR`, or why the cd is not one the policy can follow. */
export function cdTarget(command: SimpleCommand): { dir: string } | { problem: string } | undefined {
  if (command.argv[0] !== 'cd') return undefined;
  const args = command.argv.slice(1);
  let index = 0;
  while (index < args.length && (args[index] === '-L' || args[index] === '-P')) index += 1;
  if (args[index] === '--') index += 1;
  const rest = args.slice(index);
  if (rest.length === 0) return { problem: 'cd without a folder goes to $HOME' };
  const dir = rest[0]!;
  if (dir === '-') return { problem: 'cd - goes back to a folder the policy cannot know' };
  if (dir.startsWith('-')) return { problem: `cd ${dir}: an unknown option` };
  if (rest.length > 1) return { problem: 'cd with more than one folder' };
  if (command.globs[index + 1]) return { problem: 'cd with a glob' };
  return { dir };
}

/**
 * git's top-level `-C DIR` options (each relative to the one before, as git applies them) split
 * from the rest of the command line; anything after the subcommand is left alone.
 */
export function gitDirectories(command: SimpleCommand): { argv: string[]; globs: boolean[]; dirs: string[] } {
  const { argv, globs } = command;
  if (argv[0] !== 'git') return { argv, globs, dirs: [] };
  const outArgv = [argv[0]];
  const outGlobs = [globs[0] ?? false];
  const dirs: string[] = [];
  let index = 1;
  while (index < argv.length && argv[index]!.startsWith('-')) {
    if (argv[index] === '-C' && index + 1 < argv.length) {
      dirs.push(argv[index + 1]!);
      // A glob in the folder word cannot be proven: it stays in, and git's own rule refuses it.
      if (globs[index + 1]) return { argv, globs, dirs: [] };
      index += 2;
      continue;
    }
    outArgv.push(argv[index]!);
    outGlobs.push(globs[index] ?? false);
    index += 1;
  }
  return {
    argv: [...outArgv, ...argv.slice(index)],
    globs: [...outGlobs, ...globs.slice(index)],
    dirs,
  };
}

interface Step {
  command: SimpleCommand;
  /** The folders this command may run in (before its own cd or -C). */
  before: string[];
  /** cd's target or git's -C folders, each resolved against every folder it may be relative to. */
  entered: string[];
  /** Where its relative words point: `before`, or git's last -C folders. */
  folders: string[];
}

/** The commands of the pipeline that `index` belongs to. */
function inPipeline(commands: readonly SimpleCommand[], index: number): boolean {
  return commands[index]?.connector === '|' || commands[index + 1]?.connector === '|';
}

/**
 * Walks the line in order, tracking where each command may run (see the header). Undefined when
 * the line has too many possible folders to follow.
 */
function walk(shell: Analysis, cwd: string, home: string): { steps: Step[]; bases: string[] } | undefined {
  const possible = new Set([cwd]);
  /** Folders an unbroken && chain after a cd guarantees. */
  let chain: string[] | undefined;
  let pipelineStart: string[] = [cwd];
  const steps: Step[] = [];
  for (const [index, command] of shell.commands.entries()) {
    let before: string[];
    if (command.connector === '|') before = pipelineStart;
    else {
      if (command.connector !== '&&') chain = undefined;
      before = chain ?? [...possible];
      pipelineStart = before;
    }
    const entered: string[] = [];
    const cd = cdTarget(command);
    // pushd is not followed (it must be on the allow list), but its folder moves later paths too.
    const pushd =
      command.argv[0] === 'pushd' ? command.argv.slice(1).find((arg) => !arg.startsWith('-')) : undefined;
    const target = cd && 'dir' in cd ? cd.dir : pushd;
    if (target !== undefined) {
      for (const base of before) entered.push(absolutePath(target, base, home));
      // Inside a pipeline a cd runs in a subshell and moves nothing after it.
      if (!inPipeline(shell.commands, index)) {
        for (const folder of entered) possible.add(folder);
        chain = [...new Set(entered)];
      }
    }
    let folders = before;
    for (const dir of gitDirectories(command).dirs) {
      if (dir === '') continue;
      folders = folders.map((base) => absolutePath(dir, base, home));
      entered.push(...folders);
    }
    if (possible.size > MAX_BASES) return undefined;
    steps.push({ command, before, entered: [...new Set(entered)], folders });
  }
  return { steps, bases: [...new Set([...possible, ...steps.flatMap((step) => step.folders)])] };
}

/** Every folder the line's relative words may be resolved against; undefined when too many. */
export function directoryBases(shell: Analysis, cwd: string, home: string): string[] | undefined {
  return walk(shell, cwd, home)?.bases;
}

/** Checks the line's cd and git -C folders; each command comes back with where it runs. */
export function checkDirectories(shell: Analysis, context: DirectoryContext): DirectoryCheck {
  const walked = walk(shell, context.cwd, context.home);
  if (!walked) {
    return { commands: [], problem: { reason: 'the command changes folders too often to follow' } };
  }
  const canonical = (path: string): string => context.canonical[path] ?? path;
  const commands: PlacedCommand[] = [];
  const cwdReal = canonical(context.cwd);
  for (const step of walked.steps) {
    const { command } = step;
    const cd = cdTarget(command);
    if (cd && 'problem' in cd) return { commands, problem: { reason: cd.problem } };
    const git = gitDirectories(command);
    const word = cd ? `cd ${(cd as { dir: string }).dir}` : `git -C ${git.dirs.join(' -C ')}`;
    for (const folder of step.entered.map(canonical)) {
      if (!context.readable(folder)) {
        return { commands, problem: { reason: `${word}: ${folder} is outside the readable paths`, folder } };
      }
    }
    if (command.argv[0] === 'git' && !context.gitGuard) {
      const planted = step.folders
        .map(canonical)
        .find((folder) => folder !== cwdReal && context.writable(folder));
      if (planted) {
        return {
          commands,
          problem: {
            reason: `git would run in ${planted}, a writable folder whose .git config and hooks the agent could have planted, and with sandbox.mode = off no git guard undoes them; run git in the working directory or a read-only folder`,
          },
        };
      }
    }
    const listed = { ...command, argv: git.argv, globs: git.globs, globbed: git.globs.some(Boolean) };
    commands.push({ command, listed, folders: step.folders, cd: cd !== undefined });
  }
  return { commands };
}
