// Container runtimes refuse the same calls with different errnos: Docker's profile gives EPERM for
// unshare, Podman's and containerd's variants ENOSYS, a hardened profile EACCES for stacking a
// seccomp filter. The build log must name the errno the kernel really returned for each missing
// layer, and strict mode must exit 8. Each run gets a fresh RUNE_HOME (no cached probe).
import { spawnSync } from 'node:child_process';
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { requireBinary, tempDir } from '../helpers/rune.ts';

const KEY = 'sk-proj-variantSecretKey0123456789abcdef';
const PYTHON = '/usr/bin/python3';
// The runtime's profile is applied with libseccomp's Python binding (.ci/run installs
// python3-seccomp); without it this file is skipped, not faked.
const available = spawnSync(PYTHON, ['-c', 'import seccomp']).status === 0;

/** Loads a filter allowing everything but `call`, which fails with `errno`, then execs argv. */
const WRAPPER = `
import errno, os, sys, seccomp
f = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
f.add_rule(seccomp.ERRNO(getattr(errno, sys.argv[2])), sys.argv[1])
f.load()
os.execv(sys.argv[3], sys.argv[3:])
`;

function check(call: string, errno: string, mode: string) {
  const dir = tempDir('rune-variant-');
  mkdirSync(join(dir, 'opt'));
  symlinkSync(requireBinary(), join(dir, 'opt', 'check'));
  const input = JSON.stringify({
    source: { api_key: KEY, base_url: 'http://127.0.0.1:9', model: 'm', prompt: 'hi', sandbox: { mode } },
  });
  const result = spawnSync(PYTHON, ['-c', WRAPPER, call, errno, join(dir, 'opt', 'check')], {
    input,
    encoding: 'utf8',
    cwd: dir,
    timeout: 60_000,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, RUNE_HOME: join(dir, 'rune-home') },
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe.skipIf(!available)("a runtime's seccomp profile refusing with its own errno", () => {
  it('unshare refused with ENOSYS is reported as ENOSYS, and strict exits 8', () => {
    const auto = check('unshare', 'ENOSYS', 'auto');
    expect(auto.stdout).toBe('');
    expect(auto.stderr).toMatch(
      /sandbox layer SKIPPED: namespaces: unshare\(CLONE_NEWUSER\) failed with ENOSYS/,
    );
    expect(auto.stderr).not.toMatch(/ENXIO/);
    const strict = check('unshare', 'ENOSYS', 'strict');
    expect(strict.code).toBe(8);
    expect(strict.stdout).toBe('');
    expect(strict.stderr).toMatch(/\n {2}namespaces: unshare\(CLONE_NEWUSER\) failed with ENOSYS/);
    expect(strict.stderr).not.toContain(KEY);
  });

  it('seccomp(2) refused with EACCES: the seccomp layer is reported missing, and strict exits 8', () => {
    const auto = check('seccomp', 'EACCES', 'auto');
    expect(auto.stdout).toBe('');
    expect(auto.stderr).toMatch(/sandbox layer SKIPPED: seccomp: .*EACCES/);
    expect(auto.stderr.split('\n').find((l) => l.startsWith('rune: sandbox layers in force:'))).not.toMatch(
      /seccomp \(/,
    );
    const strict = check('seccomp', 'EACCES', 'strict');
    expect(strict.code).toBe(8);
    expect(strict.stderr).toMatch(/sandbox layers? (is|are) missing here \([^)]*seccomp/);
  });
});
