// Pure path rules of the policy: globs and the secrets floor that no configuration relaxes. Only
// node:path's string functions are used; nothing touches disk. What a path means (`~`, relative,
// containment) is src/core/paths.ts's.
import { join, resolve } from 'node:path';
import { isUnder } from '../core/paths.ts';

/** A glob character in a folder part of the path (`~/.ss?/id_rsa`): the gate cannot list every match. */
export function globAcrossFolders(path: string): boolean {
  const glob = path.search(/[*?[]/);
  return glob !== -1 && glob < path.lastIndexOf('/');
}

/**
 * The file names a one-folder glob pattern can match. Wider than the shell (dot files match too,
 * escapes are gone), so every file the shell could pass is checked.
 */
export function globToRegExp(pattern: string): RegExp {
  let out = '';
  for (let index = 0; index < pattern.length; index++) {
    const ch = pattern[index]!;
    if (ch === '*') out += '.*';
    else if (ch === '?') out += '.';
    else if (ch === '[') {
      const close = pattern.indexOf(']', index + 2);
      if (close === -1) out += '\\[';
      else {
        // Any class is widened to "any one character": a superset of what the shell matches.
        out += '.';
        index = close;
      }
    } else out += ch.replace(/[.+^${}()|\\\]]/g, '\\$&');
  }
  return new RegExp(`^${out}$`, 's');
}

/**
 * Credential stores of common tools under the home folder (README "Policy"), the one list: the
 * floor refuses them to every tool, and the sandbox's view hides them even inside a writable grant
 * (src/sandbox/plan.ts), unless a grant names one.
 */
export const HOME_CREDENTIAL_STORES: readonly string[] = [
  '.ssh',
  '.gnupg',
  '.aws',
  '.azure',
  '.kube',
  '.docker/config.json',
  '.netrc',
  '.git-credentials',
  '.npmrc',
  '.pypirc',
  '.password-store',
  '.vault-token',
  '.config/gcloud',
  '.config/gh',
  '.config/hub',
  '.cargo/credentials',
  '.cargo/credentials.toml',
  '.terraform.d/credentials.tfrc.json',
];

/** The floor under the home folder: the credential stores and rune's own default folder. */
const HOME_SECRETS = [...HOME_CREDENTIAL_STORES, '.rune'];

const SYSTEM_SECRETS = [
  '/etc/shadow',
  '/etc/shadow-',
  '/etc/gshadow',
  '/etc/gshadow-',
  '/etc/sudoers',
  '/etc/sudoers.d',
  '/etc/ssl/private',
  '/etc/ssh/ssh_host_rsa_key',
  '/etc/ssh/ssh_host_ecdsa_key',
  '/etc/ssh/ssh_host_ed25519_key',
];

/** Every path of the floor for this home folder and rune's own folder (RUNE_HOME), lexically. */
export function floorPaths(home: string, runeHome: string): string[] {
  // $RUNE_HOME is ~/.rune unless moved: listed once either way.
  return [
    ...new Set([...HOME_SECRETS.map((entry) => join(home, entry)), resolve(runeHome), ...SYSTEM_SECRETS]),
  ];
}

// Another process's environment and memory hold the secrets the sandbox scrubbed from ours.
// A thread's entry (/proc/PID/task/TID/…, where /proc/thread-self leads) shows the same.
const PROC_SECRET = /^\/proc\/[^/]+\/(?:task\/[^/]+\/)?(environ|mem|cmdline|auxv)$/;

/** The floor entry that covers `path`, if any. `path` must already be canonical. */
export function floorEntryFor(path: string, floor: readonly string[]): string | undefined {
  if (PROC_SECRET.test(path)) return '/proc/*/environ';
  return floor.find((entry) => isUnder(path, entry));
}
