// A hardened deployment: the image's home is read-only (read-only root file system) and /tmp is a
// noexec tmpfs, so the native code rune unpacks has nowhere to run from. The build log must name
// that real cause for every probed layer (not a guessed errno), say how to fix it, and strict mode
// must exit 8; with RUNE_HOME on a mount that allows running files, the layers come back.
// Needs root for a private mount namespace (unshare -m); skipped otherwise.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { requireBinary } from '../helpers/rune.ts';

const KEY = 'sk-proj-noexecSecretKey0123456789abcdef';
// A noexec tmpfs needs root and a mount namespace (CI runs as root); elsewhere this file is skipped.
const canMount =
  process.getuid?.() === 0 &&
  spawnSync('unshare', ['-m', 'sh', '-c', 'mount --make-rprivate / && mount -t tmpfs -o noexec tmpfs /mnt'])
    .status === 0;

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** Outside /tmp, which the step's mount namespace covers with a noexec tmpfs. */
function resource() {
  const base = mkdtempSync('/var/tmp/rune-noexec-');
  made.push(base);
  mkdirSync(join(base, 'opt'));
  // The binary itself may live under /tmp (a clone there), which the step covers: it is bound onto
  // this file inside the step's mount namespace before /tmp is, so it stays reachable as `check`.
  writeFileSync(join(base, 'opt', 'check'), '');
  const home = join(base, 'home');
  mkdirSync(home);
  chmodSync(home, 0o755);
  return { base, home };
}

function check(mode: string, env: Record<string, string> = {}) {
  const { base, home } = resource();
  const script = [
    'set -e',
    'mount --make-rprivate /',
    `mount --bind "${requireBinary()}" "${base}/opt/check"`,
    'mount -t tmpfs -o noexec,nosuid tmpfs /tmp',
    `mount --bind "${home}" "${home}"`,
    `mount -o remount,bind,ro "${home}"`,
    `exec "${base}/opt/check"`,
  ].join('\n');
  const input = JSON.stringify({
    source: { api_key: KEY, base_url: 'http://127.0.0.1:9', model: 'm', prompt: 'hi', sandbox: { mode } },
  });
  const result = spawnSync('unshare', ['-m', 'sh', '-c', script], {
    input,
    encoding: 'utf8',
    cwd: base,
    timeout: 60_000,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, ...env },
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr, base };
}

describe.skipIf(!canMount)('a read-only home and a noexec /tmp', () => {
  it('names the real cause of every probed layer and what to do; strict exits 8', () => {
    const auto = check('auto');
    expect(auto.stdout).toBe('');
    const skipped = auto.stderr.split('\n').filter((line) => line.startsWith('rune: sandbox layer SKIPPED'));
    for (const layer of ['seccomp', 'landlock', 'namespaces']) {
      const line = skipped.find((l) => l.startsWith(`rune: sandbox layer SKIPPED: ${layer}:`));
      expect(line, layer).toMatch(/kernel probe failed: .*noexec.*set RUNE_HOME/);
    }
    // Not an errno the kernel never returned.
    expect(auto.stderr).not.toMatch(/failed with ENOSYS/);
    expect(auto.stderr).not.toContain(KEY);

    const strict = check('strict');
    expect(strict.code).toBe(8);
    expect(strict.stdout).toBe('');
    expect(strict.stderr).toMatch(
      /source\.sandbox\.mode is strict, but \d+ sandbox layers? (is|are) missing/,
    );
  });

  it('runs with seccomp and Landlock when RUNE_HOME is on a mount that allows running files', () => {
    const { base } = resource();
    const runeHome = join(base, 'rune-home');
    const result = check('auto', { RUNE_HOME: runeHome });
    const inForce = result.stderr
      .split('\n')
      .find((line) => line.startsWith('rune: sandbox layers in force:'));
    expect(inForce).toMatch(/seccomp \(/);
    expect(inForce).toMatch(/landlock \(ABI \d+\)/);
    expect(result.stderr).not.toMatch(/kernel probe failed/);
  });
});
