// Loads one mode's bundle. Inside the SEA each mode is an embedded script compiled with a V8 code
// cache kept in the private cache folder (written after the first run); outside it the bundle is
// an ordinary file next to main.cjs. Either way nothing of a mode is parsed until it is chosen.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Script, constants as vmConstants } from 'node:vm';
import { assetManifest, isSea, readAssetText } from './assets.ts';
import { cacheDir } from './paths.ts';
import { checkPrivateDir } from './private-dir.ts';

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

interface PendingCache {
  script: Script;
  file: string;
}

const pendingCaches: PendingCache[] = [];

export function loadMode(name: ModeName): ModeModule {
  if (!isSea()) return require(join(__dirname, `${name}.cjs`)) as ModeModule;

  const asset = `js/${name}.cjs`;
  const code = readAssetText(asset);
  const hash = assetManifest().sha256[asset] ?? 'unknown';
  const cacheFile = join(cacheDir(), 'code', `${name}-${hash.slice(0, 20)}-${process.version}.v8`);
  let cachedData: Buffer | undefined;
  try {
    cachedData = readFileSync(cacheFile);
  } catch {
    cachedData = undefined;
  }
  const script = new Script(`(function (exports, require, module, __filename, __dirname) {${code}\n})`, {
    filename: `rune:${asset}`,
    // Bundled libraries keep a few `import('node:…')` calls; without a loader V8 rejects them.
    importModuleDynamically: vmConstants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
    ...(cachedData ? { cachedData } : {}),
  });
  if (!cachedData || script.cachedDataRejected) pendingCaches.push({ script, file: cacheFile });
  const fn = script.runInThisContext() as (...args: unknown[]) => void;
  const mod = { exports: {} as ModeModule };
  fn.call(mod.exports, mod.exports, require, mod, `rune:${asset}`, 'rune:js');
  return mod.exports;
}

/**
 * Writes the code caches of the bundles that ran without one. Called once before exit, after the
 * mode has run, so the cache covers the functions it compiled lazily. Best-effort: a read-only
 * home only costs the next start its speed.
 */
export function persistCodeCaches(): void {
  for (const { script, file } of pendingCaches.splice(0)) {
    try {
      const dir = join(file, '..');
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      if (!checkPrivateDir(dir).ok) continue;
      const tmp = `${file}.${process.pid}.tmp`;
      writeFileSync(tmp, script.createCachedData(), { mode: 0o600 });
      renameSync(tmp, file);
    } catch {
      // Best-effort by design.
    }
  }
}
