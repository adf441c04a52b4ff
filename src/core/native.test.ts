import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dlopenVerified, materialize, sha256 } from './native.ts';
import { checkPrivateDir, choosePrivateDir } from './private-dir.ts';

const ADDON = join(import.meta.dirname, '../../native/build/Release/rune_native.node');
const temp = () => mkdtempSync(join(tmpdir(), 'rune-native-test-'));

describe('materialize + dlopenVerified', () => {
  it('writes the addon once by content hash and loads it', () => {
    const dir = temp();
    const bytes = readFileSync(ADDON);
    const hash = sha256(bytes);
    const file = materialize(dir, 'native/rune_native.node', bytes, hash);
    expect(file).toBe(join(dir, `rune_native-${hash.slice(0, 24)}.node`));
    const mtime = statSync(file).mtimeMs;
    expect(materialize(dir, 'native/rune_native.node', bytes, hash)).toBe(file);
    expect(statSync(file).mtimeMs).toBe(mtime);
    const addon = dlopenVerified(file, hash) as { probe(): { landlockAbi: number } };
    expect(typeof addon.probe().landlockAbi).toBe('number');
  });

  it('refuses a file whose bytes changed, and rewrites it on the next materialize', () => {
    const dir = temp();
    const bytes = readFileSync(ADDON);
    const hash = sha256(bytes);
    const file = materialize(dir, 'rune_native.node', bytes, hash);
    writeFileSync(file, 'tampered');
    expect(() => dlopenVerified(file, hash)).toThrow(/does not match its expected sha256/);
    materialize(dir, 'rune_native.node', bytes, hash);
    expect(sha256(readFileSync(file))).toBe(hash);
  });
});

describe('private cache folders', () => {
  it('creates missing folders 0700', () => {
    const dir = join(temp(), 'a', 'b');
    const choice = choosePrivateDir([dir]);
    expect(choice).toMatchObject({ path: dir, ephemeral: false, skipped: [] });
    expect(statSync(dir).mode & 0o777).toBe(0o700);
  });

  it('tightens a folder of ours that is open to others', () => {
    const dir = temp();
    chmodSync(dir, 0o777);
    expect(checkPrivateDir(dir)).toEqual({ ok: true });
    expect(statSync(dir).mode & 0o777).toBe(0o700);
  });

  it('refuses a symlink, a file, and a folder owned by someone else', () => {
    const base = temp();
    const link = join(base, 'link');
    symlinkSync(temp(), link);
    expect(checkPrivateDir(link)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/symbolic link/),
    });
    writeFileSync(join(base, 'file'), '');
    expect(checkPrivateDir(join(base, 'file'))).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/not a directory/),
    });
    mkdirSync(join(base, 'theirs'));
    const otherUid = (process.getuid?.() ?? 0) + 1;
    expect(checkPrivateDir(join(base, 'theirs'), otherUid)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/owned by uid/),
    });
  });

  it('falls back to a fresh private temporary folder when no candidate is usable', () => {
    const choice = choosePrivateDir(['/dev/null/cannot']);
    expect(choice.ephemeral).toBe(true);
    expect(choice.skipped[0]).toMatch(/cannot create \/dev\/null\/cannot/);
    expect(statSync(choice.path).mode & 0o777).toBe(0o700);
  });
});
