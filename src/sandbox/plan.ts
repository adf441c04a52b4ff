// Turns one sandbox request into the helper's command line: which paths are read-only, writable,
// protected or hidden, which addresses the net guard lets through, which limits apply. Pure: the
// file-system facts it needs (protected files found, resolved addresses) are passed in.
import { isIP } from 'node:net';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { allowAddrArg } from './targets.ts';
import type { LayerReport, SandboxRequest } from './types.ts';

/** Folders every command needs to read and run programs. */
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
  '/proc',
  '/sys',
  '/dev',
];

/** Device files and folders a command may write; /tmp is the private tmpfs of the call. */
export const SYSTEM_READ_WRITE = [
  '/dev/null',
  '/dev/zero',
  '/dev/full',
  '/dev/tty',
  '/dev/ptmx',
  '/dev/pts',
  '/dev/shm',
];

/** Files that are readable by root under /etc but none of a tool's business. */
export const HIDDEN_SYSTEM_FILES = ['/etc/shadow', '/etc/gshadow', '/etc/sudoers', '/etc/security/opasswd'];

/** Credential stores under the home folder: hidden even when a writable root contains them. */
export const HOME_CREDENTIALS = [
  '.ssh',
  '.gnupg',
  '.aws',
  '.azure',
  '.config/gcloud',
  '.kube',
  '.docker/config.json',
  '.netrc',
  '.git-credentials',
  '.pypirc',
  // The rest of the policy's floor (src/policy/paths.ts).
  '.npmrc',
  '.password-store',
  '.vault-token',
  '.config/gh',
  '.config/hub',
  '.cargo/credentials',
  '.cargo/credentials.toml',
  '.terraform.d/credentials.tfrc.json',
];

/**
 * Paths replaced by an empty file or folder inside the mount namespace: system secrets, the
 * policy's denied_paths, and the home folder's credential stores unless allowed by name. Only
 * those inside an allowed root need it; elsewhere Landlock already refuses them (with EACCES).
 */
export function hiddenPaths(
  home: string | undefined,
  deniedPaths: readonly string[],
  roots: readonly string[],
  namedAllowed: readonly string[],
): string[] {
  const named = new Set(namedAllowed.map((p) => resolve(p)));
  const expand = (p: string) => (home && (p === '~' || p.startsWith('~/')) ? join(home, p.slice(1)) : p);
  const out = [...HIDDEN_SYSTEM_FILES, ...deniedPaths.map((p) => resolve(expand(p)))];
  if (home) for (const p of HOME_CREDENTIALS) if (!named.has(join(home, p))) out.push(join(home, p));
  return [...new Set(out)].filter((p) => roots.some((root) => isInside(p, resolve(root))));
}

/** Names (relative to a writable root) that stay read-only even inside it. */
export function protectedCandidates(
  root: string,
  entries: readonly string[],
  submodules: readonly string[] = [],
): string[] {
  const out = ['.git/hooks', '.git/config', 'rune.toml', '.rune'].map((p) => join(root, p));
  for (const name of entries) if (name.startsWith('.env')) out.push(join(root, name));
  // A submodule's git folder (.git/modules/NAME) has hooks and config of its own.
  for (const name of submodules)
    out.push(...['hooks', 'config'].map((p) => join(root, '.git/modules', name, p)));
  return out;
}

export function isInside(child: string, parent: string): boolean {
  const rel = relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

export interface ResolvedName {
  /** Host name or IP literal (no port). */
  name: string;
  /** The only TCP port the entry allows; undefined: any. */
  port?: number;
  addresses: string[];
  /** The `allowed_domains` entry, for messages (defaults to the name). */
  entry?: string;
}

export interface PlanInput {
  request: Pick<SandboxRequest, 'argv' | 'cwd' | 'readOnlyPaths' | 'readWritePaths' | 'allowedDomains'>;
  strict: boolean;
  namespaces: boolean;
  /** Protected paths that exist (found by the caller under the writable roots). */
  protectedPaths: string[];
  /** Folders bound onto themselves so they cannot be renamed away (.git). */
  pinPaths: string[];
  hidePaths: string[];
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
}

export function planHelperArgs(input: PlanInput): Plan {
  const { request } = input;
  const cwd = resolve(request.cwd);
  const rw = [...new Set(request.readWritePaths.map((p) => resolve(cwd, p)))];
  const ro = [...new Set([...SYSTEM_READ_ONLY, cwd, ...request.readOnlyPaths.map((p) => resolve(cwd, p))])];
  const args: string[] = ['--report', String(input.reportFd), '--cwd', cwd];
  for (const p of ro) args.push('--ro', p);
  for (const p of [...SYSTEM_READ_WRITE, ...(input.namespaces ? ['/tmp'] : []), ...rw]) args.push('--rw', p);
  for (const p of input.pinPaths) args.push('--pin', p);
  for (const p of input.protectedPaths) args.push('--protect', p);
  for (const p of input.hidePaths) args.push('--hide', p);
  const allow = new Set<string>();
  const hosts = new Set<string>();
  for (const entry of input.resolved) {
    for (const address of entry.addresses) {
      allow.add(allowAddrArg(address, entry.port));
      // An IP literal resolves by itself; only names go into the sandbox's /etc/hosts.
      if (isIP(entry.name) === 0) hosts.add(`${address} ${entry.name}`);
    }
  }
  for (const line of hosts) args.push('--host', line);
  for (const address of allow) args.push('--allow-addr', address);
  args.push('--tmp-mb', String(input.limits.tmpMb));
  args.push('--fsize', String(input.limits.fsizeBytes), '--nofile', String(input.limits.nofile));
  if (input.limits.nproc !== undefined) args.push('--nproc', String(input.limits.nproc));
  if (input.limits.dataBytes !== undefined) args.push('--data', String(input.limits.dataBytes));
  for (const dir of input.cgroupDirs ?? []) args.push('--cgroup', dir);
  if (input.strict) args.push('--strict');
  if (!input.namespaces) args.push('--no-namespaces');
  args.push('--', ...request.argv);

  const notes: LayerReport[] = [];
  const wildcards = request.allowedDomains.filter((d) => d.startsWith('*.'));
  const unresolved = input.resolved.filter((r) => r.addresses.length === 0).map((r) => r.entry ?? r.name);
  if (wildcards.length > 0 || unresolved.length > 0) {
    const parts = [];
    if (wildcards.length > 0) parts.push(`wildcards cannot be resolved ahead: ${wildcards.join(', ')}`);
    if (unresolved.length > 0) parts.push(`did not resolve: ${unresolved.join(', ')}`);
    notes.push({ layer: 'dns', applied: true, detail: parts.join('; ') });
  }
  return { args, notes };
}

/** Parses the helper's "layer<TAB>state<TAB>detail" lines; the last line of a layer wins. */
export function parseReport(text: string): { layers: Map<string, LayerReport>; setupError?: string } {
  const layers = new Map<string, LayerReport>();
  let setupError: string | undefined;
  for (const line of text.split('\n')) {
    const [layer, state, ...rest] = line.split('\t');
    if (!layer || !state) continue;
    const detail = rest.join('\t');
    if (layer === 'setup' || layer === 'exec') {
      if (state === 'failed') setupError = `${layer}: ${detail}`;
      continue;
    }
    const previous = layers.get(layer);
    // A partial skip (one bind failed) must not hide that the layer itself applied, and vice versa.
    if (previous?.applied && state !== 'applied') {
      previous.detail += `; ${state}: ${detail}`;
      continue;
    }
    if (previous && !previous.applied && state === 'applied') {
      layers.set(layer, {
        layer: layer as LayerReport['layer'],
        applied: true,
        detail: `${detail}; ${previous.detail}`,
      });
      continue;
    }
    layers.set(layer, { layer: layer as LayerReport['layer'], applied: state === 'applied', detail });
  }
  return setupError === undefined ? { layers } : { layers, setupError };
}
