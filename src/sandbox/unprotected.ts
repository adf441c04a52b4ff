// Writable grants that only the view can make safe. Without namespaces (a container runtime's
// seccomp profile) Landlock grants a folder whole: it cannot keep a path inside it read-only or
// hidden. A writable grant that holds the home folder's start-up files (run by the person's next
// shell, outside any sandbox) or rune's own folder (its code and addon caches, checkpoints, probe
// cache: loaded by rune's next start, outside the sandbox) would then let a command escape through
// what runs later. Such a grant is refused there unless the person accepts it
// (`sandbox.accept_unprotected_grants`). Pure: real paths arrive resolved.
import { join } from 'node:path';
import { RuneError } from '../core/errors.ts';
import { HOME_RUNS_LATER, isInside } from './plan.ts';

export const ACCEPT_SETTING = 'sandbox.accept_unprotected_grants';

export interface ProtectedPlaces {
  /**
   * The home folders (real paths) whose start-up files and git config run later: the person's
   * `$HOME`, the call's, and the account's own (a login shell starts there).
   */
  userHomes: readonly string[];
  /** rune's own folders (real paths): `$RUNE_HOME`, and `~/.rune` when RUNE_HOME is elsewhere. */
  runeFolders: readonly string[];
}

export interface Unprotected {
  /** The writable grant (real path). */
  grant: string;
  /** What it would let a command change, in words, for the message. */
  exposes: string[];
}

/**
 * Each writable grant that holds a protected place: rune's folder (or lies inside it), the home
 * folder itself, or a start-up file of it. A grant that *is* one start-up file (`allowed_files_rw =
 * ["~/.bashrc"]`) is the person's own choice and is writable with namespaces too; it is not listed.
 */
export function unprotectedGrants(rwRoots: readonly string[], places: ProtectedPlaces): Unprotected[] {
  const out: Unprotected[] = [];
  for (const grant of rwRoots) {
    const exposes: string[] = [];
    for (const folder of places.runeFolders)
      if (isInside(folder, grant) || isInside(grant, folder))
        exposes.push(`${folder} (rune's own folder: its caches are loaded by rune's next start)`);
    for (const home of places.userHomes) exposes.push(...homeExposed(grant, home));
    if (exposes.length > 0) out.push({ grant, exposes: [...new Set(exposes)] });
  }
  return out;
}

/** The home folder, or the start-up files of it, that a writable `grant` holds. */
function homeExposed(grant: string, home: string): string[] {
  if (isInside(home, grant))
    return [`the home folder ${home} (its start-up files ~/.bashrc, ~/.profile, … and ~/.gitconfig)`];
  return HOME_RUNS_LATER.map((name) => join(home, name)).filter(
    (path) => path !== grant && isInside(path, grant),
  );
}

export type GrantDecision =
  | { kind: 'ok' }
  | { kind: 'refused'; error: RuneError }
  | { kind: 'accepted'; note: string };

/** What a call with these writable grants may do: with namespaces every grant is fine (the view protects). */
export function decideGrants(
  rwRoots: readonly string[],
  namespaces: boolean,
  accepted: boolean,
  places: ProtectedPlaces,
  /** How this person sets it: `sandbox.accept_unprotected_grants`, `source.sandbox.…` in Concourse. */
  setting: string = ACCEPT_SETTING,
): GrantDecision {
  if (namespaces) return { kind: 'ok' };
  const found = unprotectedGrants(rwRoots, places);
  if (found.length === 0) return { kind: 'ok' };
  const list = found.map((u) => `writable grant ${u.grant} holds ${u.exposes.join(', ')}`);
  if (accepted)
    return {
      kind: 'accepted',
      note: `accepted by ${setting}: without namespaces Landlock cannot keep paths inside a writable grant read-only, so a command may change what runs later outside the sandbox: ${list.join('; ')}`,
    };
  return {
    kind: 'refused',
    error: new RuneError(
      'SANDBOX_SETUP',
      `without namespaces (a container runtime's seccomp profile, or a kernel that refuses them) Landlock cannot keep a path inside a writable grant read-only, so a command could change what runs later outside the sandbox; refused, nothing ran:\n${list.map((line) => `  ${line}`).join('\n')}\n  Run rune in a project folder and grant narrower folders (not your home folder, a folder holding it, or rune's folder), or set ${setting} = true to accept this.`,
    ),
  };
}
