// Pure path rules of the policy: whole-component containment, `~` expansion and the secrets floor
// that no configuration relaxes. Only node:path's string functions are used; nothing touches disk.
import { isAbsolute, join, resolve, sep } from 'node:path';

/** True when `path` is `root` or lies below it, comparing whole components (`/proj-evil` is not under `/proj`). */
export function isUnder(path: string, root: string): boolean {
  if (path === root) return true;
  const prefix = root.endsWith(sep) ? root : root + sep;
  return path.startsWith(prefix);
}

/** `~` and `~/x` become the home folder; relative paths are taken from `cwd`; `..` is folded. */
export function absolutePath(path: string, cwd: string, home: string): string {
  if (path === '~') return resolve(home);
  if (path.startsWith('~/')) return resolve(home, path.slice(2));
  return isAbsolute(path) ? resolve(path) : resolve(cwd, path);
}

/** Home-relative secrets (SPEC §1 "Policy"): credentials of common tools. */
const HOME_SECRETS = [
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
  '.rune',
];

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
  return [...HOME_SECRETS.map((entry) => join(home, entry)), resolve(runeHome), ...SYSTEM_SECRETS];
}

// Another process's environment and memory hold the secrets the sandbox scrubbed from ours.
const PROC_SECRET = /^\/proc\/[^/]+\/(environ|mem|cmdline|auxv)$/;

/** The floor entry that covers `path`, if any. `path` must already be canonical. */
export function floorEntryFor(path: string, floor: readonly string[]): string | undefined {
  if (PROC_SECRET.test(path)) return '/proc/*/environ';
  return floor.find((entry) => isUnder(path, entry));
}
