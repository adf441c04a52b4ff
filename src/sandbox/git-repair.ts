// The git guard's repairs: each judges one watched file or folder against what it looked like before
// the call (the baseline) and undoes what would make git run a program: config keys removed, hooks
// made non-executable, links and planted commondirs removed, redirected `.git` files put back.
// Every change is made by descriptor inside the folder that holds the file, opened through no link
// (git-fs.ts, src/core/fd): a link, FIFO, socket or device where git reads a file is moved aside or
// removed, never written through, read or blocked on. Each says what it did (or could not do) in
// `actions`, for the model and the person.
import { spawnSync } from 'node:child_process';
import { basename, dirname, join, resolve } from 'node:path';
import {
  changeMode,
  createFile,
  isPathRefused,
  type Root,
  removeEntry,
  replaceFile,
} from '../core/fd/index.ts';
import { moveAside } from './absent.ts';
import {
  type ConfigEntry,
  entryFromName,
  entryName,
  parseGitConfig,
  programRunningReason,
  sanitizeConfig,
} from './git-config.ts';
import { describeEntry, folderOf, hookPrints, isMarker, linkPrint, lstat, real, snapshot } from './git-fs.ts';
import type { GitRepo } from './git-repo.ts';

/** What each watched file looked like at the last look: its contents, or a fingerprint (hooks). */
export type Baseline = ReadonlyMap<string, string | null>;

let gitAvailable: boolean | undefined;

/**
 * `git config --list` of a config's text, as git reads it (an independent second reader): given on
 * stdin (no file is opened, so nothing can block), no includes, no system or global config, run
 * from `/`, so nothing of the file is executed.
 */
function listWithGit(text: string): Array<{ name: string; value?: string }> | undefined {
  if (gitAvailable === false) return undefined;
  const result = spawnSync('git', ['config', '--file', '-', '--no-includes', '--null', '--list'], {
    cwd: '/',
    input: Buffer.from(text, 'latin1'),
    encoding: 'latin1',
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      HOME: '/nonexistent',
    },
    timeout: 5000,
  });
  gitAvailable = !result.error;
  if (result.error || result.status !== 0) return undefined;
  return result.stdout
    .split('\0')
    .filter(Boolean)
    .map((item) => {
      const nl = item.indexOf('\n');
      return nl < 0 ? { name: item } : { name: item.slice(0, nl), value: item.slice(nl + 1) };
    });
}

/** Runs `change` in the folder that holds `path` (opened through no link), with the file's name. */
function inFolder<T>(path: string, change: (folder: Root, name: string) => T): T {
  const folder = folderOf(path);
  try {
    return change(folder, basename(path));
  } finally {
    folder.close();
  }
}

const latin1 = (text: string) => Buffer.from(text, 'latin1');

const pairOf = (e: Pick<ConfigEntry, 'section' | 'subsection' | 'key' | 'value'>) =>
  `${entryName(e)}\u0000${e.value ?? '\u0001'}`;

/** A config file changed since the baseline loses the new keys that run a program or read more config. */
export function judgeConfig(file: string, baseline: Baseline, actions: string[]): void {
  const now = snapshot(file);
  const before = baseline.get(file);
  if (now === null || now === before) return;
  if (isMarker(now)) {
    refuseEntry(file, before, actions);
    return;
  }
  const known = new Set(before && !isMarker(before) ? parseGitConfig(before).entries.map(pairOf) : []);
  const result = sanitizeConfig(now, (e) => !known.has(pairOf(e)));
  if (result.removed.length === 0 && result.cutAt === undefined) {
    doubleCheck(file, now, known, actions);
    return;
  }
  try {
    inFolder(file, (folder, name) => replaceFile(folder, name, latin1(result.text)));
    const what = [
      ...result.removed.map((r) => `${r.name} (${r.reason})`),
      ...(result.cutAt !== undefined ? ['everything from a line git would refuse on'] : []),
    ];
    actions.push(`${file}: removed ${what.join(', ')}`);
    doubleCheck(file, result.text, known, actions);
  } catch (error) {
    actions.push(
      `${file}: could not remove ${result.removed.map((r) => r.name).join(', ')} (${(error as Error).message}): delete them before running git there`,
    );
  }
}

/**
 * A link, FIFO, socket or device where git reads a config: moved aside (its target is never read,
 * copied or written); the regular file that was there before the call, if any, is put back.
 */
function refuseEntry(file: string, before: string | null | undefined, actions: string[]): void {
  const st = lstat(file);
  if (!st || st.kind === 'dir') return; // gone, or a folder git cannot read as a config
  const what = describeEntry(file, st.kind);
  try {
    const aside = inFolder(file, (folder, name) => {
      const moved = moveAside(folder, name);
      if (before && !isMarker(before)) createFile(folder, name, latin1(before));
      return moved;
    });
    const back = before && !isMarker(before) ? '; the file that was there before the call is back' : '';
    actions.push(`${file}: refused: it is ${what}; moved aside to ${aside}${back}`);
  } catch (error) {
    actions.push(`${file}: is ${what} and could not be moved aside (${(error as Error).message}): delete it`);
  }
}

/** git's own reading of a config the guard judged must show nothing new that runs a program. */
function doubleCheck(file: string, text: string, known: ReadonlySet<string>, actions: string[]): void {
  const listed = listWithGit(text);
  if (!listed) return; // no git here, or git refuses the file (and then refuses to run with it)
  const left = listed
    .map((item) => entryFromName(item.name, item.value))
    .filter((e) => !known.has(pairOf(e)) && programRunningReason(e));
  if (left.length === 0) return;
  try {
    const aside = inFolder(file, (folder, name) => {
      const moved = moveAside(folder, name);
      createFile(folder, name, '');
      return moved;
    });
    actions.push(`${file}: git still read ${left.map(entryName).join(', ')} from it; moved it to ${aside}`);
  } catch (error) {
    actions.push(
      `${file}: git still reads ${left.map(entryName).join(', ')} (${(error as Error).message}): delete it`,
    );
  }
}

/** A hooks folder: a link planted in its place goes, new or changed hooks stop being executable. */
export function judgeHooks(dir: string, baseline: Baseline, actions: string[]): void {
  if (lstat(dir)?.kind === 'symlink') {
    // A hooks folder that is a link: the link itself is what the command may have planted.
    if (baseline.get(dir) === linkPrint(dir)) return;
    try {
      inFolder(dir, removeEntry);
      actions.push(`${dir}: removed (a link to a hooks folder elsewhere)`);
    } catch (error) {
      actions.push(
        `${dir}: links to a hooks folder elsewhere and could not be removed (${(error as Error).message}): delete it`,
      );
    }
    return;
  }
  for (const [file, print] of hookPrints(dir)) {
    if (baseline.get(file) === print) continue;
    const st = lstat(file);
    if (!st || file.endsWith('.sample')) continue;
    if (st.kind === 'symlink') {
      try {
        inFolder(file, removeEntry);
        actions.push(`${file}: removed (a hook link the command made)`);
      } catch (error) {
        actions.push(
          `${file}: a hook link the command made could not be removed (${(error as Error).message}): delete it`,
        );
      }
      continue;
    }
    if (st.kind !== 'file' || (st.mode & 0o111) === 0) continue;
    try {
      inFolder(file, (folder, name) => changeMode(folder, name, st.mode & 0o7666));
      actions.push(`${file}: no longer executable (a hook the command wrote; git would run it)`);
    } catch (error) {
      actions.push(
        `${file}: a hook the command wrote stays executable (${(error as Error).message}): delete it`,
      );
    }
  }
}

/** A commondir planted in an old git folder points git at other config and hooks. */
export function judgeCommondir(repo: GitRepo, file: string, baseline: Baseline, actions: string[]): void {
  const now = snapshot(file);
  if (now === null || now === baseline.get(file)) return;
  // `git worktree add` writes worktrees/NAME/commondir pointing back at its own git folder.
  if (
    !isMarker(now) &&
    file !== join(repo.gitDir, 'commondir') &&
    real(resolve(dirname(file), now.trim())) === repo.gitDir
  )
    return;
  const st = lstat(file);
  const what =
    isMarker(now) && st
      ? `it was ${describeEntry(file, st.kind)}`
      : 'it pointed git at other config and hooks';
  try {
    inFolder(file, removeEntry);
    actions.push(`${file}: removed (${what})`);
  } catch (error) {
    actions.push(`${file}: ${what} and could not be removed (${(error as Error).message}): delete it`);
  }
}

/** A `.git` file that pointed at `was` and was redirected elsewhere (or replaced) is put back. */
export function judgeGitFile(file: string, was: string, actions: string[]): void {
  if (isMarker(was)) return; // it was not a regular file before the call: nothing to put back
  let folder: Root;
  try {
    folder = folderOf(file);
  } catch (error) {
    if (isPathRefused(error))
      actions.push(
        `${dirname(file)}: a linked worktree's folder replaced by a link; its .git was not restored through it (${error.message})`,
      );
    return;
  }
  const name = basename(file);
  try {
    const st = folder.stat(name);
    if (st?.kind === 'dir') throw new Error('now a folder');
    if (st?.kind === 'file') {
      if (folder.readText(name, 'latin1') === was) return;
      replaceFile(folder, name, latin1(was));
      actions.push(`${file}: restored (it had been pointed at another git folder)`);
    } else if (st) {
      const what = describeEntry(file, st.kind);
      const aside = moveAside(folder, name);
      createFile(folder, name, latin1(was));
      actions.push(
        `${file}: refused: it is ${what}; moved aside to ${aside}, and the .git file from before the call put back`,
      );
    } else {
      createFile(folder, name, latin1(was));
      actions.push(`${file}: restored (the command had removed it)`);
    }
  } catch (error) {
    actions.push(
      `${file}: was pointed at another git folder and could not be restored (${(error as Error).message})`,
    );
  } finally {
    folder.close();
  }
}
