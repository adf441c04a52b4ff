// Prepares one sandboxed call: the environment it gets, its grants as real paths, what stays
// read-only or is hidden inside them, its cgroups, and the helper's command line (plan.ts). Each
// step is a function of its own; prepareCall puts them together in the order the comments give.
import { existsSync, lstatSync, mkdtempSync, readdirSync, realpathSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { settingName } from '../config/load.ts';
import type { RuneConfig, SandboxMode } from '../config/schema.ts';
import { RuneError } from '../core/errors.ts';
import { Grants as Pins } from '../core/fd/index.ts';
import type { Logger } from '../core/logger.ts';
import { runeHome } from '../core/paths.ts';
import { type Watched, watchAbsent } from './absent.ts';
import type { CgroupPlan, CgroupPool } from './cgroups.ts';
import { allowedEnvironment } from './env.ts';
import type { GitGuard } from './git.ts';
import { sandboxHelperPath } from './helper.ts';
import { type Reported, switchedOff } from './layers.ts';
import {
  HOME_RUNS_LATER,
  hiddenPaths,
  isInside,
  MASKED_SYSTEM_FOLDER,
  planHelperArgs,
  protectedCandidates,
  type ResolvedName,
  SYSTEM_READ_ONLY,
} from './plan.ts';
import type { LayerReport, SandboxRequest } from './types.ts';
import { ACCEPT_SETTING, decideGrants } from './unprotected.ts';

export const REPORT_FD = 3;

export type CallRequest = Omit<SandboxRequest, 'timeoutMs' | 'maxOutputBytes' | 'stdin'>;

export interface Prepared extends Reported {
  argv: string[];
  env: Record<string, string>;
  cwd: string;
  cgroupDirs: string[];
  /** Without a view: the call's own temporary folder on the host, removed when it ends. */
  tmpDir?: string;
  /** Writable roots whose git folders are judged after the call (src/sandbox/git.ts). */
  gitRoots?: string[];
  /** Hidden or protected paths that did not exist before the call (src/sandbox/absent.ts). */
  absent?: Watched[];
}

/** What the executor shares with the preparation of each of its calls. */
export interface PrepareContext {
  config: RuneConfig;
  logger: Logger;
  mode: SandboxMode;
  /** The layers a call gets on this machine (expectedLayers). */
  describe(): LayerReport[];
  cgroupPlan(): CgroupPlan;
  /** The executor's pool of cgroups, made on first use. */
  cgroupPool(plan: CgroupPlan): CgroupPool;
  gitGuard(): GitGuard;
  /** Whether a long-lived sandboxed process with writable roots is running (git baseline rule). */
  liveWriters(): boolean;
}

/** The real path (every symlink resolved) of a path that exists; the path itself otherwise. */
export function realPath(path: string): string {
  // Most candidates (credential stores, start-up files) do not exist: asking first avoids a thrown
  // error per path, which cost a call's planning several ms.
  if (!existsSync(path)) return path;
  try {
    return realpathSync.native(path);
  } catch {
    return path;
  }
}

export function listDir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** A call that runs without the helper: sandbox off, or (auto mode) no helper on this machine. */
function unsandboxed(request: CallRequest, env: Record<string, string>, cwd: string, why: string): Prepared {
  return {
    argv: request.argv,
    env,
    cwd,
    base: switchedOff(why),
    notes: [],
    cgroupDirs: [],
    sandboxed: false,
  };
}

interface Grants {
  realCwd: string;
  links: { path: string; target: string }[];
  callTmp?: string;
  rwRoots: string[];
  roRoots: string[];
}

/**
 * Every grant is resolved to its real path here, through the run's pinned grants: a grant whose
 * path a call replaced (a link or another folder in its place) refuses the call, never leads the
 * next one elsewhere. The view puts each grant at its real place and hides by real path; the helper
 * refuses a path that turned into a symlink since. A grant named through a symlink keeps that name
 * as a symlink.
 */
function realGrants(
  request: CallRequest,
  cwd: string,
  namespaces: boolean,
  vet: (rwRoots: readonly string[]) => void,
): Grants {
  const pins = request.grants ?? new Pins();
  try {
    return pinnedGrants(request, cwd, namespaces, pins, vet);
  } finally {
    if (!request.grants) pins.close();
  }
}

function pinnedGrants(
  request: CallRequest,
  cwd: string,
  namespaces: boolean,
  pins: Pins,
  vet: (rwRoots: readonly string[]) => void,
): Grants {
  const realCwd = pins.pin(cwd);
  const links: { path: string; target: string }[] = [];
  const realGrant = (path: string): string => {
    const absolute = resolve(cwd, path);
    const real = pins.pin(absolute);
    if (real !== absolute && !links.some((l) => l.path === absolute))
      links.push({ path: absolute, target: real });
    return real;
  };
  if (realCwd !== cwd) links.push({ path: cwd, target: realCwd });
  const granted = request.readWritePaths.map(realGrant);
  vet(granted);
  // Without a view there is no private /tmp: the call gets its own folder instead (TMPDIR), made
  // here with mode 0700 and removed when the call ends.
  const callTmp = namespaces ? undefined : mkdtempSync(join(tmpdir(), 'rune-call-'));
  const rwRoots = [...new Set([...granted, ...(callTmp ? [realPath(callTmp)] : [])])];
  const roRoots = [...new Set(request.readOnlyPaths.map(realGrant))];
  return { realCwd, links, ...(callTmp ? { callTmp } : {}), rwRoots, roRoots };
}

interface Protection {
  protectedPaths: string[];
  pinPaths: string[];
  /** The home folder's start-up files (they may not exist yet). */
  runsLater: string[];
  gitNotes: string[];
}

/** What stays read-only inside the writable roots: rune.toml, .env files, rune's home, start-up files, git folders. */
function protectInside(
  ctx: PrepareContext,
  request: CallRequest,
  rwRoots: readonly string[],
  home: string,
): Protection {
  const protectedPaths: string[] = [];
  for (const root of rwRoots) {
    // A writable file (allowed_files_rw, an approved redirect target) holds nothing to protect.
    if (!lstatSync(root, { throwIfNoEntry: false })?.isDirectory()) continue;
    // Only what exists can be bound read-only (and is worth naming in the report).
    protectedPaths.push(
      ...protectedCandidates(root, listDir(root))
        .filter((path) => lstatSync(path, { throwIfNoEntry: false }) !== undefined)
        .map(realPath),
    );
    if (isInside(home, root)) protectedPaths.push(home);
  }
  // The home folder's start-up files and git config stay read-only in a writable home.
  const userHome = request.env.HOME ?? process.env.HOME;
  const runsLater = userHome ? HOME_RUNS_LATER.map((p) => join(realPath(resolve(userHome)), p)) : [];
  for (const path of runsLater) {
    const real = listDir(dirname(path)).includes(basename(path)) ? realPath(path) : undefined;
    if (real && rwRoots.some((root) => isInside(real, root) && real !== root)) protectedPaths.push(real);
  }
  // Every git folder under the writable roots: config, hooks, info, commondir and .git files
  // read-only in the view, .git folders pinned (src/sandbox/git.ts). Its paths are real already.
  const git = ctx.gitGuard().prepare(rwRoots, !ctx.liveWriters());
  protectedPaths.push(...git.protect);
  const gitNotes =
    git.pin.length + git.protect.length > 0
      ? [
          `git folders under writable roots: config, hooks, info and .git files read-only (${git.protect.length} path(s))`,
        ]
      : [];
  return { protectedPaths, pinPaths: git.pin, runsLater, gitNotes: [...gitNotes, ...git.notes] };
}

/** Credential stores, denied paths, rune's own folder and /etc's host keys, hidden in the view. */
function hideInside(
  ctx: PrepareContext,
  request: CallRequest,
  cwd: string,
  grants: Grants,
  home: string,
): Set<string> {
  return new Set([
    ...hiddenPaths(
      request.env.HOME ?? process.env.HOME,
      // rune's own folder (rune.toml with the API key, sessions, audit log) is part of the floor.
      [
        ...ctx.config.policy.denied_paths,
        home,
        ...(request.env.HOME ? [join(request.env.HOME, '.rune')] : []),
      ],
      [...SYSTEM_READ_ONLY, grants.realCwd, ...grants.roRoots, ...grants.rwRoots],
      [...request.readOnlyPaths, ...request.readWritePaths].map((p) => resolve(cwd, p)),
      realPath,
    ),
    ...listDir('/etc/ssh')
      .filter((n) => n.endsWith('_key'))
      .map((n) => join('/etc/ssh', n)),
  ]);
}

/** Hidden and protected paths missing now cannot be mounted over: they are watched instead. */
function watchMissing(
  request: CallRequest,
  hidden: Set<string>,
  protection: Protection,
  rwRoots: string[],
  home: string,
) {
  // rune's own folder is left out: rune itself may create it during the call (sessions, journal).
  const ownFolders = [
    home,
    ...(request.env.HOME ? [join(realPath(resolve(request.env.HOME)), '.rune')] : []),
  ];
  return watchAbsent(
    [...hidden, ...protection.runsLater].filter((p) => !ownFolders.some((own) => isInside(p, own))),
    rwRoots,
  );
}

/**
 * Without namespaces, a writable grant holding rune's folder or the home folder's start-up files is
 * refused (src/sandbox/unprotected.ts), unless the person accepted it: then the note the
 * namespaces layer's report carries.
 */
function vetWritable(
  config: RuneConfig,
  request: CallRequest,
  rwRoots: readonly string[],
  namespaces: boolean,
  runeFolder: string,
): string | undefined {
  const homes = [request.env.HOME, process.env.HOME, accountHome()].filter((h): h is string => !!h);
  const userHomes = [...new Set(homes.map((h) => realPath(resolve(h))))];
  const decision = decideGrants(
    rwRoots,
    namespaces,
    config.sandbox.accept_unprotected_grants,
    { userHomes, runeFolders: [...new Set([runeFolder, ...userHomes.map((h) => join(h, '.rune'))])] },
    settingName(config, ACCEPT_SETTING),
  );
  if (decision.kind === 'refused') throw decision.error;
  return decision.kind === 'accepted' ? decision.note : undefined;
}

/** The account's home folder from the password database, where a login shell starts. */
function accountHome(): string | undefined {
  try {
    return userInfo().homedir || undefined;
  } catch {
    return undefined;
  }
}

/** The call's cgroups from the executor's pool, and the cgroups layer as this call gets it. */
function acquireCgroups(ctx: PrepareContext): {
  cgroupDirs: string[];
  report: LayerReport;
  prefix: string[];
} {
  const plan = ctx.cgroupPlan();
  let cgroupDirs: string[] = [];
  let cgroupError: string | undefined;
  if (plan.kind === 'delegated' || plan.kind === 'v1') {
    try {
      cgroupDirs = ctx.cgroupPool(plan).acquire();
    } catch (error) {
      cgroupError = (error as Error).message;
      ctx.logger.warn('sandbox.cgroup_failed', { message: cgroupError });
    }
  }
  const report: LayerReport =
    cgroupError !== undefined
      ? { layer: 'cgroups', applied: false, detail: `creating the cgroup failed: ${cgroupError}` }
      : { layer: 'cgroups', applied: plan.kind !== 'none', detail: plan.detail };
  return { cgroupDirs, report, prefix: plan.kind === 'systemd' ? plan.prefix : [] };
}

/** The layers this call can get; strict mode refuses to run with fewer than all of them. */
function expectedOrRefuse(ctx: PrepareContext): LayerReport[] {
  const base = ctx.describe();
  const missing = base.filter((l) => !l.applied);
  if (ctx.mode === 'strict' && missing.length > 0) {
    throw new RuneError('SANDBOX_SETUP', 'sandbox strict: a layer this machine lacks would be skipped', {
      details: missing.map((l) => `${l.layer}: ${l.detail}`),
    });
  }
  return base;
}

/** Everything one call needs before the helper starts: its argv, environment, and what to check after. */
export function prepareCall(ctx: PrepareContext, request: CallRequest, resolved: ResolvedName[]): Prepared {
  const { config, logger, mode } = ctx;
  // The allow list holds in every mode, sandbox off included: it is about what a tool may see.
  const allowed = allowedEnvironment(request.env, config.sandbox.env_passthrough);
  if (allowed.removed.length > 0) logger.debug('sandbox.env_not_passed', { names: allowed.removed });
  const env = { ...allowed.env, ...request.configuredEnv };
  const cwd = resolve(request.cwd);
  if (mode === 'off') return unsandboxed(request, env, cwd, 'sandbox.mode = off');
  const base = expectedOrRefuse(ctx);
  let helper: string;
  try {
    helper = sandboxHelperPath();
  } catch (error) {
    if (mode === 'strict') throw error;
    const why = `sandbox helper unavailable: ${(error as Error).message}`;
    logger.warn('sandbox.helper_missing', { message: why });
    return unsandboxed(request, env, cwd, why);
  }
  const namespaces = base.find((l) => l.layer === 'namespaces')?.applied ?? false;
  // rune's own folder (rune.toml with the API key, sessions, audit log), as a real path.
  const home = realPath(resolve(runeHome()));
  let accepted: string | undefined;
  const grants = realGrants(request, cwd, namespaces, (rwRoots) => {
    accepted = vetWritable(config, request, rwRoots, namespaces, home);
  });
  if (grants.callTmp) env.TMPDIR = grants.callTmp;
  const protection = protectInside(ctx, request, grants.rwRoots, home);
  const hidden = hideInside(ctx, request, cwd, grants, home);
  const absent = watchMissing(request, hidden, protection, grants.rwRoots, home);
  const cgroups = acquireCgroups(ctx);
  const plan = planHelperArgs({
    request: {
      ...request,
      cwd: grants.realCwd,
      readOnlyPaths: grants.roRoots,
      readWritePaths: grants.rwRoots,
    },
    links: grants.links,
    ...(env.TMPDIR ? { tmpDir: env.TMPDIR } : {}),
    strict: mode === 'strict',
    namespaces,
    protectedPaths: protection.protectedPaths,
    pinPaths: protection.pinPaths,
    hidePaths: [...hidden],
    // Everything else of /etc that others may not read, as a class (shadow-, keys, passwords…),
    // found by the helper of this call: no scan here, and none that could be out of date.
    hideClosedIn: [MASKED_SYSTEM_FOLDER],
    resolved,
    limits: {
      fsizeBytes: config.sandbox.max_file_mb * 1024 * 1024,
      nofile: 4096,
      nproc: config.policy.max_pids,
      tmpMb: config.sandbox.tmp_mb,
      dataBytes: config.policy.max_memory_mb * 1024 * 1024,
    },
    cgroupDirs: cgroups.cgroupDirs,
    reportFd: REPORT_FD,
  });
  const gitNote = [...protection.gitNotes, ...(accepted ? [accepted] : [])].join('; ');
  const notes = gitNote
    ? [...plan.notes, { layer: 'namespaces' as const, applied: true, detail: gitNote }]
    : plan.notes;
  // The exact command line, for debugging and for bench/sandbox.mjs to replay a tool call.
  logger.debug('sandbox.helper_argv', { argv: [helper, ...plan.args] });
  return {
    argv: [...cgroups.prefix, helper, ...plan.args],
    env,
    cwd,
    base: base.map((l) => (l.layer === 'cgroups' ? cgroups.report : l)),
    notes,
    view: plan.view,
    ...(grants.callTmp ? { tmpDir: grants.callTmp } : {}),
    cgroupDirs: cgroups.cgroupDirs,
    sandboxed: true,
    gitRoots: grants.rwRoots,
    absent,
  };
}
