// The git guard's repairs: each judges one watched file or folder against what it looked like before
// the call (the baseline) and undoes what would make git run a program: config keys removed, hooks
// made non-executable, links and planted commondirs removed, redirected `.git` files put back.
// Each says what it did (or could not do) in `actions`, for the model and the person.
import { spawnSync } from 'node:child_process';
import { chmodSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import {
  type ConfigEntry,
  entryFromName,
  entryName,
  parseGitConfig,
  programRunningReason,
  sanitizeConfig,
} from './git-config.ts';
import { folderIsReal, hookPrints, linkPrint, lstat, readText, real } from './git-fs.ts';
import type { GitRepo } from './git-repo.ts';

/** What each watched file looked like at the last look: its contents, or a fingerprint (hooks). */
export type Baseline = ReadonlyMap<string, string | null>;

let gitAvailable: boolean | undefined;

/**
 * `git config --list` of one file, as git reads it (an independent second reader): no includes,
 * no system or global config, run from `/`, so nothing of the file is executed.
 */
function listWithGit(file: string): Array<{ name: string; value?: string }> | undefined {
  if (gitAvailable === false) return undefined;
  const result = spawnSync('git', ['config', '--file', file, '--no-includes', '--null', '--list'], {
    cwd: '/',
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

const pairOf = (e: Pick<ConfigEntry, 'section' | 'subsection' | 'key' | 'value'>) =>
  `${entryName(e)}\u0000${e.value ?? '\u0001'}`;

/** A config file changed since the baseline loses the new keys that run a program or read more config. */
export function judgeConfig(file: string, baseline: Baseline, actions: string[]): void {
  const now = readText(file);
  const before = baseline.get(file);
  if (now === null || now === before) return;
  const known = new Set(before ? parseGitConfig(before).entries.map(pairOf) : []);
  const result = sanitizeConfig(now, (e) => !known.has(pairOf(e)));
  const link = lstat(file)?.isSymbolicLink() ?? false;
  if (!folderIsReal(file)) return; // swapped for a link since the scan: the next check judges its new place
  if (result.removed.length === 0 && result.cutAt === undefined && !link) {
    doubleCheck(file, known, actions);
    return;
  }
  try {
    // A symlinked config is replaced by a plain file: its target is left alone.
    if (link) unlinkSync(file);
    writeFileSync(file, result.text, 'latin1');
    const what = [
      ...result.removed.map((r) => `${r.name} (${r.reason})`),
      ...(result.cutAt !== undefined ? ['everything from a line git would refuse on'] : []),
      ...(link ? ['the symlink (now a plain file)'] : []),
    ];
    actions.push(`${file}: removed ${what.join(', ')}`);
    doubleCheck(file, known, actions);
  } catch (error) {
    actions.push(
      `${file}: could not remove ${result.removed.map((r) => r.name).join(', ')} (${(error as Error).message}): delete them before running git there`,
    );
  }
}

/** git's own reading of a file the guard judged must show nothing new that runs a program. */
function doubleCheck(file: string, known: ReadonlySet<string>, actions: string[]): void {
  const listed = listWithGit(file);
  if (!listed) return; // no git here, or git refuses the file (and then refuses to run with it)
  const left = listed
    .map((item) => entryFromName(item.name, item.value))
    .filter((e) => !known.has(pairOf(e)) && programRunningReason(e));
  if (left.length === 0) return;
  const aside = `${file}.rune-rejected`;
  try {
    renameSync(file, aside);
    writeFileSync(file, '');
    actions.push(`${file}: git still read ${left.map(entryName).join(', ')} from it; moved it to ${aside}`);
  } catch (error) {
    actions.push(
      `${file}: git still reads ${left.map(entryName).join(', ')} (${(error as Error).message}): delete it`,
    );
  }
}

/** A hooks folder: a link planted in its place goes, new or changed hooks stop being executable. */
export function judgeHooks(dir: string, baseline: Baseline, actions: string[]): void {
  const st = lstat(dir);
  if (st?.isSymbolicLink()) {
    // A hooks folder that is a link: the link itself is what the command may have planted.
    if (baseline.get(dir) === linkPrint(dir)) return;
    try {
      unlinkSync(dir);
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
    if (st.isSymbolicLink()) {
      try {
        unlinkSync(file);
        actions.push(`${file}: removed (a hook link the command made)`);
      } catch (error) {
        actions.push(
          `${file}: a hook link the command made could not be removed (${(error as Error).message}): delete it`,
        );
      }
      continue;
    }
    if (!st.isFile() || (st.mode & 0o111) === 0) continue;
    try {
      chmodSync(file, st.mode & 0o7666);
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
  const now = readText(file);
  if (now === null || now === baseline.get(file)) return;
  // `git worktree add` writes worktrees/NAME/commondir pointing back at its own git folder.
  if (file !== join(repo.gitDir, 'commondir') && real(resolve(dirname(file), now.trim())) === repo.gitDir)
    return;
  try {
    unlinkSync(file);
    actions.push(`${file}: removed (it pointed git at other config and hooks)`);
  } catch (error) {
    actions.push(
      `${file}: points git at other config and hooks and could not be removed (${(error as Error).message}): delete it`,
    );
  }
}

/** A `.git` file that pointed at `was` and was redirected elsewhere (or replaced) is put back. */
export function judgeGitFile(file: string, was: string, actions: string[]): void {
  if (!folderIsReal(file)) {
    if (lstat(dirname(file))?.isSymbolicLink())
      actions.push(
        `${dirname(file)}: a linked worktree's folder replaced by a link; its .git was not restored through it`,
      );
    return;
  }
  const now = readText(file);
  if (now === was) return;
  try {
    if (lstat(file)?.isDirectory()) throw new Error('now a folder');
    if (now !== null) unlinkSync(file);
    writeFileSync(file, was, 'latin1');
    actions.push(`${file}: restored (it had been pointed at another git folder)`);
  } catch (error) {
    actions.push(
      `${file}: was pointed at another git folder and could not be restored (${(error as Error).message})`,
    );
  }
}
