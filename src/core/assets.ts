// Files the build embeds in the binary: SEA assets when running as the single executable, the
// matching files under dist/assets when running the unpacked bundles during development.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { processSlot } from './process-slot.ts';

type SeaModule = {
  isSea(): boolean;
  getAsset(key: string): ArrayBuffer;
  getAsset(key: string, encoding: string): string;
  getRawAsset(key: string): ArrayBuffer;
};

let sea: SeaModule | null | undefined;

function seaModule(): SeaModule | null {
  if (sea === undefined) {
    // node:sea exists from Node 20.12; getBuiltinModule works the same from CJS bundles and ESM tests.
    const mod = process.getBuiltinModule?.('node:sea') as SeaModule | undefined;
    sea = mod?.isSea() ? mod : null;
  }
  return sea;
}

export function isSea(): boolean {
  return seaModule() !== null;
}

/**
 * Where unpacked assets live outside a SEA: main.ts sets `dir` next to the bundles, the walk worker
 * to what its parent passed, tests and benches to a folder of their own.
 */
export const devAssets = processSlot('rune.assets.devDir', (): { dir?: string } => ({}));

export function devAssetDir(): string | undefined {
  return devAssets.dir;
}

export class AssetMissingError extends Error {}

/** The bytes of an embedded asset. Inside a SEA this is a view of the binary's own memory, not a copy. */
export function readAsset(name: string): Uint8Array {
  const s = seaModule();
  if (s) {
    try {
      return new Uint8Array(s.getRawAsset(name));
    } catch (cause) {
      throw new AssetMissingError(`asset ${name} is not in this binary`, { cause });
    }
  }
  const dir = devAssetDir();
  if (!dir) throw new AssetMissingError(`asset ${name}: not running from a build`);
  try {
    return readFileSync(join(dir, name));
  } catch (cause) {
    throw new AssetMissingError(`asset ${name} not found under ${dir}`, { cause });
  }
}

export function readAssetText(name: string): string {
  const s = seaModule();
  if (s) {
    try {
      return s.getAsset(name, 'utf8');
    } catch (cause) {
      throw new AssetMissingError(`asset ${name} is not in this binary`, { cause });
    }
  }
  return Buffer.from(readAsset(name)).toString('utf8');
}

/**
 * An asset known to be ASCII (the build checks every bundle under js/), read as Latin-1: one copy
 * into a one-byte string. UTF-8 decoding the cli bundle, the largest, would be paid by every start
 * (bench/startup.mjs).
 */
export function readAssetAscii(name: string): string {
  const bytes = readAsset(name);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
}

export interface AssetManifest {
  version: string;
  /** asset name → sha256 hex of its bytes, computed at build time. */
  sha256: Record<string, string>;
}

let manifest: AssetManifest | undefined;

export function assetManifest(): AssetManifest {
  manifest ??= JSON.parse(readAssetAscii('manifest.json')) as AssetManifest;
  return manifest;
}
