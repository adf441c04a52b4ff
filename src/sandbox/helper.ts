// Finds the static sandbox helper (native/src/helper.c): written from the binary's embedded asset
// into the private content-addressed cache with exec permission, compared byte for byte with the
// embedded asset before first use and its inode checked before every later use, so a swapped file
// is never executed. (A byte comparison, not a sha256: hashing the whole helper twice and loading
// node:crypto for it would be paid by every `rune sandbox` (bench/sandbox.mjs); the embedded bytes are
// what the build hashed.)
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  existsSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { assetManifest, devAssetDir, isSea, readAsset } from '../core/assets.ts';
import { RuneError } from '../core/errors.ts';
import { nativeCacheCandidates } from '../core/native.ts';
import { choosePrivateDir } from '../core/private-dir.ts';

export const HELPER_ASSET = 'native/rune-sandbox';

interface Verified {
  path: string;
  ino: number;
  size: number;
  ctimeMs: number;
}

let verified: Verified | undefined;

function stamp(path: string): Verified {
  const st = statSync(path);
  return { path, ino: st.ino, size: st.size, ctimeMs: st.ctimeMs };
}

function unchanged(v: Verified): boolean {
  try {
    const now = stamp(v.path);
    return now.ino === v.ino && now.size === v.size && now.ctimeMs === v.ctimeMs;
  } catch {
    return false;
  }
}

/**
 * Whether the file holds exactly `expected`, read through one small buffer: reading the whole file
 * into a new buffer would cost each run its allocation and page faults (bench/sandbox.mjs).
 * O_NOFOLLOW: never a link (libuv adds O_CLOEXEC).
 */
export function fileEquals(path: string, expected: Uint8Array): boolean {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch {
    return false;
  }
  try {
    const chunk = Buffer.allocUnsafe(64 * 1024);
    let offset = 0;
    for (;;) {
      const n = readSync(fd, chunk, 0, chunk.length, offset);
      if (n === 0) return offset === expected.byteLength;
      if (offset + n > expected.byteLength) return false;
      if (Buffer.compare(chunk.subarray(0, n), expected.subarray(offset, offset + n)) !== 0) return false;
      offset += n;
    }
  } catch {
    return false;
  } finally {
    closeSync(fd);
  }
}

function devHelper(): string {
  // Unit tests run from the source tree: the helper scripts/build.mjs compiles there.
  const path = join(process.cwd(), 'native', 'build', 'rune-sandbox');
  if (!existsSync(path))
    throw new RuneError(
      'SANDBOX_SETUP',
      `the sandbox helper is not built (${path} is missing; run the build)`,
    );
  return path;
}

/** Path of a verified helper executable. Throws SANDBOX_SETUP when there is none. */
export function sandboxHelperPath(): string {
  if (verified && unchanged(verified)) return verified.path;
  verified = undefined;
  if (!isSea() && !devAssetDir()) {
    verified = stamp(devHelper());
    return verified.path;
  }
  const expected = assetManifest().sha256[HELPER_ASSET];
  if (!expected) throw new RuneError('SANDBOX_SETUP', `${HELPER_ASSET} is not listed in the build manifest`);
  let bytes: Uint8Array;
  try {
    bytes = readAsset(HELPER_ASSET);
  } catch (cause) {
    throw new RuneError('SANDBOX_SETUP', `the sandbox helper is not in this binary`, { cause });
  }
  const embedded = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const dir = choosePrivateDir(nativeCacheCandidates());
  const file = join(dir.path, `rune-sandbox-${expected.slice(0, 24)}`);
  const sameAsEmbedded = (): boolean => fileEquals(file, embedded);
  const ok = sameAsEmbedded();
  if (!ok) {
    const tmp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      writeFileSync(tmp, bytes, { mode: 0o700, flag: 'wx' });
      renameSync(tmp, file);
    } catch (cause) {
      rmSync(tmp, { force: true });
      throw new RuneError('SANDBOX_SETUP', `cannot write the sandbox helper into ${dir.path}`, { cause });
    }
    if (!sameAsEmbedded())
      throw new RuneError('SANDBOX_SETUP', `${file} does not match the embedded helper; refusing to run it`);
  }
  if (dir.ephemeral) process.once('exit', () => rmSync(dir.path, { recursive: true, force: true }));
  verified = stamp(file);
  return file;
}
