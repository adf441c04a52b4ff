// Loads one mode's bundle. Inside the SEA each mode is an embedded script compiled with a V8 code
// cache kept in the private cache folder (written after the first run, and once more after the
// first run of the mode's main path); outside it the bundle is an ordinary file next to main.cjs.
// Either way nothing of a mode is parsed until it is chosen.
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Script, constants as vmConstants } from 'node:vm';
import { assetManifest, isSea, readAssetAscii } from './assets.ts';
import { ranMainPath } from './code-cache.ts';
import { lazyBuiltinRequire } from './lazy-builtins.ts';
import { makeDir } from './make-dir.ts';
import { cacheDir } from './paths.ts';
import { checkPrivateDir, readPrivateFile } from './private-dir.ts';
import { restoreRunFlags } from './v8-flags.ts';

export type ModeName = 'cli' | 'notes' | 'concourse' | 'sandbox';

export interface ModeContext {
  /** Arguments after the program name (and after `notes` for the notes mode). */
  args: string[];
  /** Base name the binary was invoked as: `rune`, `check`, `in`, `out`. */
  invokedAs: string;
}

export interface ModeModule {
  run(context: ModeContext): Promise<number> | number;
}

interface LoadedScript {
  script: Script;
  /** Cache file for a run through the mode's main path (see markMainPath). */
  mainFile: string;
  /** Cache file written by any other run: replaced once the main path has run. */
  partialFile: string;
  /** What the script was compiled with: an accepted cache of either kind, or none. */
  cached: 'main' | 'partial' | 'none';
  /** A main cache V8 rejected (other flags or V8): rewritten in place, as any rejected cache. */
  mainRejected: boolean;
}

const loadedScripts: LoadedScript[] = [];

type RequireFn = (id: string) => unknown;

export function loadMode(name: ModeName): ModeModule {
  const exports = runBundle(name) as ModeModule & { __runeHost?: Record<string, () => unknown> };
  if (name === 'cli') cliHost = exports.__runeHost;
  return exports;
}

// The cli is two bundles (scripts/cli-chunks.mjs, docs/adr/0029-cli-lazy-chunk.md): each module
// the cli reaches through a dynamic import() is `require('rune-lazy:<file>')`, found in the
// `cli-lazy` bundle, loaded then; `cli-lazy` takes every module the cli already holds from it
// (`rune-host:<file>`), so each module exists once.
const LAZY = 'rune-lazy:';
const HOST = 'rune-host:';
let cliHost: Record<string, () => unknown> | undefined;
let lazyChunk: Record<string, () => unknown> | undefined;

function chunkModule(table: Record<string, () => unknown> | undefined, file: string, id: string): unknown {
  const get = table?.[file];
  if (!get) throw new Error(`rune: ${id} is not in this build (rebuild with scripts/build.mjs)`);
  return get();
}

/** The `require` a bundle runs with: the chunks' own ids, then builtins (heavy ones deferred). */
function bundleRequire(): RequireFn {
  const builtins = lazyBuiltinRequire(require);
  return (id) => {
    if (id.startsWith(LAZY)) {
      lazyChunk ??= runBundle('cli-lazy') as Record<string, () => unknown>;
      return chunkModule(lazyChunk, id.slice(LAZY.length), id);
    }
    if (id.startsWith(HOST)) return chunkModule(cliHost, id.slice(HOST.length), id);
    return builtins(id);
  };
}

const WRAPPER_START = '(function (exports, require, module, __filename, __dirname) {';

/** Compiles and runs one bundle (js/<name>.cjs) as a CommonJS module; returns its exports. */
function runBundle(name: ModeName | 'cli-lazy'): unknown {
  const asset = `js/${name}.cjs`;
  const script = isSea() ? compileWithCache(asset) : compileFile(asset);
  const fn = script.runInThisContext() as (...args: unknown[]) => void;
  const mod = { exports: {} as unknown };
  // Heavy builtins the bundle names load on first use (src/core/lazy-builtins.ts).
  fn.call(mod.exports, mod.exports, bundleRequire(), mod, `rune:${asset}`, 'rune:js');
  return mod.exports;
}

/** Outside a SEA (the unpacked bundles next to main.cjs): compiled from the file, no cache. */
function compileFile(asset: string): Script {
  const file = join(__dirname, asset.slice('js/'.length));
  return new Script(`${WRAPPER_START}${readFileSync(file, 'latin1')}\n})`, {
    filename: file,
    importModuleDynamically: vmConstants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
}

function compileWithCache(asset: string): Script {
  const code = readAssetAscii(asset);
  const hash = assetManifest().sha256[asset] ?? 'unknown';
  const base = join(
    cacheDir(),
    'code',
    `${asset.slice('js/'.length, -'.cjs'.length)}-${hash.slice(0, 20)}-${process.version}`,
  );
  const mainFile = `${base}.v8`;
  const partialFile = `${base}.partial.v8`;
  // A cache written after `--help` lacks everything an agent run compiles (lazily, on every run).
  let kind: 'main' | 'partial' = 'main';
  const trusted = checkPrivateDir(dirname(mainFile)).ok;
  let cachedData = trusted ? readPrivateFile(mainFile) : undefined;
  if (trusted && !cachedData) {
    kind = 'partial';
    cachedData = readPrivateFile(partialFile);
  }
  const script = new Script(`${WRAPPER_START}${code}\n})`, {
    filename: `rune:${asset}`,
    // Bundled libraries keep a few `import('node:…')` calls; without a loader V8 rejects them.
    importModuleDynamically: vmConstants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
    ...(cachedData ? { cachedData } : {}),
  });
  const rejected = cachedData !== undefined && script.cachedDataRejected === true;
  const cached = !cachedData || rejected ? 'none' : kind;
  loadedScripts.push({ script, mainFile, partialFile, cached, mainRejected: rejected && kind === 'main' });
  return script;
}

/**
 * Writes the code caches of the bundles that ran without one, or with one from a side path when
 * this run went through the main path. Called once before exit, after the mode has run, so the
 * cache covers the functions it compiled lazily. Best-effort: a read-only home only costs the next
 * start its speed.
 */
export function persistCodeCaches(): void {
  const mainPath = ranMainPath();
  // A cache stamped with a flag the run changed (shell-parser.ts) would be rejected by every start.
  if (loadedScripts.length > 0) restoreRunFlags();
  for (const { script, mainFile, partialFile, cached, mainRejected } of loadedScripts.splice(0)) {
    if (cached === 'main' || (cached === 'partial' && !mainPath)) continue;
    const file = mainPath || mainRejected ? mainFile : partialFile;
    try {
      const dir = join(file, '..');
      makeDir(dir);
      if (!checkPrivateDir(dir).ok) continue;
      const tmp = `${file}.${process.pid}.tmp`;
      writeFileSync(tmp, script.createCachedData(), { mode: 0o600 });
      renameSync(tmp, file);
      if (mainPath) rmSync(partialFile, { force: true });
    } catch {
      // Best-effort by design.
    }
  }
}
