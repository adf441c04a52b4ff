// Turns one sandbox request into the helper's command line: which paths are read-only, writable,
// protected or hidden, which addresses the net guard lets through, which limits apply. Pure: the
// file-system facts it needs (real paths, protected files found, resolved addresses) are passed in.
import { isIP } from 'node:net';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { addressListed } from '../core/addresses.ts';
import { expandHome } from '../core/paths.ts';
import { HOME_CREDENTIAL_STORES } from '../policy/paths.ts';
import { flag } from './helper-args.ts';
import { REPORT_STEPS } from './native-contract.ts';
import { guardPlan, type ResolvedName } from './targets.ts';

export type { ResolvedName } from './targets.ts';

import type { LayerReport, SandboxRequest } from './types.ts';

/**
 * System folders of the view, bound read-only (a symlink such as /bin -> usr/bin stays a symlink).
 * The helper adds its own /proc, /sys, /dev and /tmp; nothing else of the host exists in the view.
 */
export const SYSTEM_READ_ONLY = [
  '/usr',
  '/bin',
  '/sbin',
  '/lib',
  '/lib32',
  '/lib64',
  '/libx32',
  '/etc',
  '/opt',
];

/** The system folder whose entries others may not read are hidden as a class (shadow-, keys…). */
export const MASKED_SYSTEM_FOLDER = '/etc';

/**
 * Files that are readable by root under /etc but none of a tool's business: hidden by name even
 * when their mode is looser than it should be (the helper hides the unreadable ones as a class).
 */
export const HIDDEN_SYSTEM_FILES = [
  '/etc/shadow',
  '/etc/shadow-',
  '/etc/gshadow',
  '/etc/gshadow-',
  '/etc/sudoers',
  '/etc/sudoers.d',
  '/etc/security/opasswd',
  '/etc/ssl/private',
];

/**
 * Hidden under the home folder even when a writable root contains them: the policy's credential
 * stores, and the folders where container runtimes keep API sockets (root on the host) and TLS
 * client keys, since a read-only grant of the home folder would not stop connect(2) on a socket.
 */
export const HOME_CREDENTIALS = [
  ...HOME_CREDENTIAL_STORES,
  '.docker',
  '.colima',
  '.lima',
  '.rd',
  '.local/share/containers/podman/machine',
];

/**
 * Files and folders under the home folder that the shell, git or the desktop run later (the
 * policy's "runs later" class, src/policy/decide.ts): read-only even when a writable root contains
 * them, and moved aside after a call that created them (src/sandbox/absent.ts).
 */
export const HOME_RUNS_LATER = [
  '.bashrc',
  '.bash_profile',
  '.bash_login',
  '.bash_logout',
  '.profile',
  '.zshrc',
  '.zshenv',
  '.zprofile',
  '.zlogin',
  '.zlogout',
  '.gitconfig',
  '.config/git/config',
  '.config/autostart',
  '.config/systemd',
  '.config/fish',
  '.config/environment.d',
];

/**
 * Paths replaced by an empty file or folder in the view: system secrets, the policy's
 * denied_paths, and the home folder's credential stores unless allowed by name. Decided on real
 * paths (`real` resolves symlinks; `roots` are real already), so a grant that reaches a store
 * through any symlink (`docs -> ~`) still hides it. Only those inside a root need it: elsewhere
 * they are not in the view at all.
 */
export function hiddenPaths(
  home: string | undefined,
  deniedPaths: readonly string[],
  roots: readonly string[],
  namedAllowed: readonly string[],
  real: (path: string) => string = (path) => path,
): string[] {
  const named = new Set(namedAllowed.flatMap((p) => [resolve(p), real(resolve(p))]));
  const candidates = [...HIDDEN_SYSTEM_FILES, ...deniedPaths.map((p) => resolve(expandHome(p, home)))];
  if (home) {
    for (const p of HOME_CREDENTIALS) {
      const path = join(home, p);
      if (!named.has(path) && !named.has(real(path))) candidates.push(path);
    }
  }
  const out = candidates.flatMap((p) => [p, real(p)]);
  // Resolved once, not per candidate: every candidate against every root would repeat the same
  // path.resolve calls candidates × roots times.
  const resolvedRoots = roots.map((root) => resolve(root));
  return [...new Set(out)].filter((p) => resolvedRoots.some((root) => isInside(p, root)));
}

/**
 * Names (relative to a writable root) that stay read-only even inside it. Git folders are found
 * and protected by src/sandbox/git.ts.
 */
export function protectedCandidates(root: string, entries: readonly string[]): string[] {
  const out = ['rune.toml', '.rune'].map((p) => join(root, p));
  for (const name of entries) if (name.startsWith('.env')) out.push(join(root, name));
  return out;
}

/** Absolute, no `.`/`..` segment, no doubled or trailing slash: a prefix test then decides. */
const NOT_NORMAL = /\/\/|\/\.\.?(\/|$)|.\/$/;

export function isInside(child: string, parent: string): boolean {
  // Called for every path against every root while a call is planned: a string test where the
  // paths are already normal (they almost always are), path.relative only otherwise.
  if (child.startsWith('/') && parent.startsWith('/') && !NOT_NORMAL.test(child) && !NOT_NORMAL.test(parent))
    return child === parent || parent === '/' || (child.startsWith(parent) && child[parent.length] === '/');
  const rel = relative(parent, child);
  return rel === '' || (rel !== '..' && !rel.startsWith('../') && !isAbsolute(rel)); // `..b` is a name
}

/** 0.0.0.0/8 or `::`: as a destination, Linux takes it for this host (every local listener). */
export function isUnspecifiedAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return address.startsWith('0.');
  if (family === 6) return /^[0:]+$/.test(address) || /^::ffff:0\.\d/i.test(address);
  return false;
}

export interface PlanInput {
  /** The command's TMPDIR: made (empty, private) in the view's /tmp when it lies there. */
  tmpDir?: string;
  /** Paths are real (symlinks resolved) and absolute, or relative to the real `cwd`. */
  request: Pick<SandboxRequest, 'argv' | 'cwd' | 'readOnlyPaths' | 'readWritePaths' | 'allowedDomains'>;
  /** Grants named through a symlink: the view gets the same symlink pointing at the real path. */
  links?: { path: string; target: string }[];
  strict: boolean;
  namespaces: boolean;
  /** Protected paths that exist (found by the caller under the writable roots). */
  protectedPaths: string[];
  /** Folders bound onto themselves so they cannot be renamed away (.git). */
  pinPaths: string[];
  hidePaths: string[];
  /** Folders whose entries others may not read the helper finds and hides itself, on every call. */
  hideClosedIn?: string[];
  resolved: ResolvedName[];
  limits: { fsizeBytes: number; nofile: number; nproc?: number; tmpMb: number; dataBytes?: number };
  /** cgroups the helper joins before creating the namespaces (one per hierarchy). */
  cgroupDirs?: string[];
  reportFd: number;
}

export interface Plan {
  args: string[];
  /** Layer reports decided here rather than by the helper (the DNS view of wildcard names). */
  notes: LayerReport[];
  /** What the view holds, for the namespaces layer's report. */
  view: ViewSummary;
}

export interface ViewSummary {
  readOnly: string[];
  writable: string[];
  protected: string[];
  hidden: string[];
  /** Well-known host folders that do not exist in the view. */
  absent: string[];
}

/** Host folders worth naming when they are absent from the view. */
const NOTABLE_ABSENT = ['/home', '/root', '/run', '/var', '/srv', '/mnt', '/media', '/boot'];

export function planHelperArgs(input: PlanInput): Plan {
  const { request } = input;
  const cwd = resolve(request.cwd);
  const rw = [...new Set(request.readWritePaths.map((p) => resolve(cwd, p)))];
  const ro = [...new Set([cwd, ...request.readOnlyPaths.map((p) => resolve(cwd, p))])].filter(
    (p) => !rw.includes(p),
  );
  const args = [...flag('--report', String(input.reportFd)), ...flag('--cwd', cwd)];
  for (const p of SYSTEM_READ_ONLY) args.push(...flag('--sys', p));
  for (const p of ro) args.push(...flag('--ro', p));
  for (const p of rw) args.push(...flag('--rw', p));
  for (const link of input.links ?? []) args.push(...flag('--link', link.path, link.target));
  if (input.tmpDir && isAbsolute(input.tmpDir) && isInside(resolve(input.tmpDir), '/tmp'))
    args.push(...flag('--tmpdir', resolve(input.tmpDir)));
  for (const p of input.pinPaths) args.push(...flag('--pin', p));
  for (const p of input.protectedPaths) args.push(...flag('--protect', p));
  for (const p of input.hidePaths) args.push(...flag('--hide', p));
  for (const p of input.hideClosedIn ?? []) args.push(...flag('--hide-closed', p));
  const guard = guardPlan(input.resolved, request.allowedDomains);
  for (const line of guard.hosts) args.push(...flag('--host', line));
  for (const address of guard.allow) args.push(...flag('--allow-addr', address));
  args.push(...flag('--tmp-mb', String(input.limits.tmpMb)));
  args.push(
    ...flag('--fsize', String(input.limits.fsizeBytes)),
    ...flag('--nofile', String(input.limits.nofile)),
  );
  if (input.limits.nproc !== undefined) args.push(...flag('--nproc', String(input.limits.nproc)));
  if (input.limits.dataBytes !== undefined) args.push(...flag('--data', String(input.limits.dataBytes)));
  for (const dir of input.cgroupDirs ?? []) args.push(...flag('--cgroup', dir));
  if (input.strict) args.push(...flag('--strict'));
  if (!input.namespaces) args.push(...flag('--no-namespaces'));
  args.push('--', ...request.argv);

  const notes: LayerReport[] = [];
  const wildcards = request.allowedDomains.filter((d) => d.startsWith('*.'));
  const unresolved = input.resolved.filter((r) => r.addresses.length === 0).map((r) => r.entry ?? r.name);
  // The net guard never lets these through (native/src/netguard.c): say so rather than let the
  // person wonder why an allowed name cannot be reached.
  const thisHost = input.resolved
    .flatMap((r) =>
      r.addresses
        .filter(
          (a) =>
            isUnspecifiedAddress(a) &&
            (isIP(r.name) !== 0 || addressListed(a, undefined, request.allowedDomains)),
        )
        .map((a) => `${r.entry ?? r.name}${a === r.name ? '' : ` (${a})`}`),
    )
    .filter((v, i, all) => all.indexOf(v) === i);
  if (wildcards.length > 0 || unresolved.length > 0 || thisHost.length > 0 || guard.refused.length > 0) {
    const parts = [];
    if (wildcards.length > 0) parts.push(`wildcards cannot be resolved ahead: ${wildcards.join(', ')}`);
    if (unresolved.length > 0) parts.push(`did not resolve: ${unresolved.join(', ')}`);
    if (guard.refused.length > 0)
      parts.push(
        `an allowed name leads to a loopback, private or link-local address only when that address is listed itself; refused: ${guard.refused.join('; ')}`,
      );
    if (thisHost.length > 0)
      parts.push(`an unspecified address means this host and is never allowed: ${thisHost.join(', ')}`);
    notes.push({ layer: 'dns', applied: true, detail: parts.join('; ') });
  }
  const granted = [...SYSTEM_READ_ONLY, ...ro, ...rw, ...(input.links ?? []).map((l) => l.path)];
  const view: ViewSummary = {
    readOnly: [...SYSTEM_READ_ONLY, '/sys', ...ro],
    writable: ['/tmp (private)', '/dev/shm (private)', ...rw],
    protected: input.protectedPaths,
    hidden: [
      ...input.hidePaths,
      ...(input.hideClosedIn ?? []).map((folder) => `(every entry of ${folder} others may not read)`),
    ],
    absent: NOTABLE_ABSENT.filter((folder) => !granted.some((p) => isInside(p, folder))),
  };
  return { args, notes, view };
}

/** The view in one line: read-only and writable binds, what is hidden and what is absent. */
export function describeView(view: ViewSummary): string {
  const list = (paths: readonly string[]) => (paths.length > 0 ? paths.join(' ') : 'none');
  const parts = [
    `read-only: ${list(view.readOnly)}`,
    `writable: ${list(view.writable)}`,
    ...(view.protected.length > 0 ? [`read-only inside writable: ${list(view.protected)}`] : []),
    `hidden: ${list(view.hidden)}`,
    `absent: ${list([...view.absent, 'everything else not granted'])}`,
  ];
  return parts.join('; ');
}

/**
 * Parses the helper's "layer<TAB>state<TAB>detail" lines. A layer is applied when any of its lines
 * says so; every other line of the layer adds its detail (a partial skip must not hide that the
 * layer applied, nor an applied step what was lost).
 */
export function parseReport(text: string): { layers: Map<string, LayerReport>; setupError?: string } {
  const layers = new Map<string, LayerReport>();
  let setupError: string | undefined;
  for (const line of text.split('\n')) {
    const [layer, state, ...rest] = line.split('\t');
    if (!layer || !state) continue;
    const detail = rest.join('\t');
    if ((REPORT_STEPS as readonly string[]).includes(layer)) {
      if (state === 'failed') setupError = `${layer}: ${detail}`;
      continue;
    }
    const name = layer as LayerReport['layer'];
    const previous = layers.get(layer);
    if (!previous) {
      layers.set(layer, { layer: name, applied: state === 'applied', detail });
    } else if (state === 'applied' && !previous.applied) {
      layers.set(layer, { layer: name, applied: true, detail: `${detail}; ${previous.detail}` });
    } else {
      const prefix = previous.applied && state !== 'applied' ? `${state}: ` : '';
      previous.detail += `; ${prefix}${detail}`;
    }
  }
  return setupError === undefined ? { layers } : { layers, setupError };
}
