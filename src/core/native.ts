// Native addons travel inside the binary as SEA assets. They are written once into a
// content-addressed private cache, checked against the build-time sha256 before every load, and
// loaded with process.dlopen (inside a SEA, require() only knows builtins).
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, renameSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { constants, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { assetManifest, devAssetDir, isSea, readAsset } from './assets.ts';
import { RuneError } from './errors.ts';
import { cacheDir } from './paths.ts';
import { choosePrivateDir } from './private-dir.ts';

export interface NativeLoad {
  asset: string;
  path: string;
  sha256: string;
  /** The folder was a per-process fallback; the file was removed after loading. */
  ephemeral: boolean;
  /** Candidate cache folders passed over, with the reason. */
  skipped: string[];
}

const loaded = new Map<string, { exports: unknown; info: NativeLoad }>();

export function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

export function nativeCacheCandidates(env: NodeJS.ProcessEnv = process.env): string[] {
  const uid = process.getuid?.() ?? 'user';
  return [join(cacheDir(env), 'native'), join(tmpdir(), `rune-${uid}`, 'native')];
}

/** Writes `bytes` under `dir` by content hash unless an identical file is there already; returns its path. */
export function materialize(dir: string, name: string, bytes: Uint8Array, expected: string): string {
  const file = join(dir, `${basename(name, '.node')}-${expected.slice(0, 24)}.node`);
  if (fileHasHash(file, expected)) return file;
  const tmp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  writeFileSync(tmp, bytes, { mode: 0o700, flag: 'wx' });
  renameSync(tmp, file);
  return file;
}

function fileHasHash(file: string, expected: string): boolean {
  try {
    return sha256(readFileSync(file)) === expected;
  } catch {
    return false;
  }
}

/** dlopen after checking the file on disk still has the expected hash. */
export function dlopenVerified(file: string, expected: string): unknown {
  if (!fileHasHash(file, expected)) {
    throw new RuneError('IO', `native addon ${file} does not match its expected sha256; refusing to load it`);
  }
  const mod = { exports: {} as unknown };
  process.dlopen(mod, file, constants.dlopen.RTLD_NOW);
  return mod.exports;
}

/**
 * Loads the embedded addon `asset` (for example `native/rune_native.node`). Outside a build (unit
 * tests) `devPath` is loaded directly.
 */
export function loadNative<T>(asset: string, devPath?: string): T {
  const cached = loaded.get(asset);
  if (cached) return cached.exports as T;

  if (!isSea() && !devAssetDir()) {
    if (!devPath)
      throw new RuneError('INTERNAL', `native addon ${asset} requested outside a build with no dev path`);
    const mod = { exports: {} as unknown };
    process.dlopen(mod, devPath, constants.dlopen.RTLD_NOW);
    const info = {
      asset,
      path: devPath,
      sha256: sha256(readFileSync(devPath)),
      ephemeral: false,
      skipped: [],
    };
    loaded.set(asset, { exports: mod.exports, info });
    return mod.exports as T;
  }

  const expected = assetManifest().sha256[asset];
  if (!expected) throw new RuneError('INTERNAL', `native addon ${asset} is not listed in the build manifest`);
  const bytes = readAsset(asset);
  if (sha256(bytes) !== expected) {
    throw new RuneError('INTERNAL', `embedded asset ${asset} does not match the build manifest`);
  }
  const dir = choosePrivateDir(nativeCacheCandidates());
  let file: string;
  try {
    file = materialize(dir.path, asset, bytes, expected);
  } catch (cause) {
    throw new RuneError('IO', `cannot write native addon ${asset} into ${dir.path}`, { cause });
  }
  let exports: unknown;
  try {
    exports = dlopenVerified(file, expected);
  } catch (cause) {
    throw notExecutable(dir.path, cause, dir.skipped);
  } finally {
    if (dir.ephemeral) {
      // The mapping stays valid after unlink; nothing is left behind in /tmp.
      rmSync(file, { force: true });
      try {
        rmdirSync(dir.path);
      } catch {
        // Not empty or already gone: harmless.
      }
    }
  }
  const info: NativeLoad = {
    asset,
    path: file,
    sha256: expected,
    ephemeral: dir.ephemeral,
    skipped: dir.skipped,
  };
  loaded.set(asset, { exports, info });
  return exports as T;
}

/** A folder on a noexec mount (a hardened container's /tmp) takes the file but cannot map it. */
export function notExecutable(dir: string, cause: unknown, passedOver: readonly string[] = []): unknown {
  const message = (cause as Error).message ?? String(cause);
  if (!/failed to map segment|Operation not permitted|EACCES|EPERM/i.test(message)) return cause;
  return new RuneError(
    'SANDBOX_SETUP',
    `cannot load rune's native code from ${dir}: ${message}; the folder is on a mount that forbids running files (noexec)${passedOver.length ? ` and the others were passed over (${passedOver.join('; ')})` : ''}; set RUNE_HOME to a writable folder on a mount that allows it`,
    { cause },
  );
}

/** rune's own addon (native/): the kernel probe, the walk thread's Landlock, descriptor file operations. */
export const RUNE_ADDON = 'native/rune_native.node';

/** rune's addon; outside a build, the one `npm run build:native` made in the checkout. */
export function runeAddon<T>(): T {
  return loadNative<T>(RUNE_ADDON, join(process.cwd(), 'native', 'build', 'Release', 'rune_native.node'));
}

export function loadedNatives(): NativeLoad[] {
  return [...loaded.values()].map((entry) => entry.info);
}
