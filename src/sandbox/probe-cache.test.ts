import { chmodSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { KernelProbe } from './capabilities.ts';
import {
  cachedKernelProbe,
  probeContext,
  readCachedProbe,
  underOutsideSeccompFilter,
  validProbe,
  writeCachedProbe,
} from './probe-cache.ts';
import { OPEN_PROBE } from './probe-fixtures.ts';

const PROBE: KernelProbe = OPEN_PROBE;

function cacheFile(): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'rune-probe-cache-')), 'probe');
  mkdirSync(dir, { mode: 0o700 });
  return join(dir, 'kernel.json');
}

/** A probe function that counts its calls. */
function counting(answer: () => KernelProbe | undefined = () => PROBE) {
  const calls = { n: 0 };
  const probe = () => {
    calls.n++;
    return answer();
  };
  return { calls, probe };
}

describe('the kernel probe cache', () => {
  it('probes once, then answers from the file while the context is the same', () => {
    const file = cacheFile();
    const { calls, probe } = counting();
    expect(cachedKernelProbe('helper-a', probe, file, 'ctx-1')).toEqual(PROBE);
    expect(cachedKernelProbe('helper-a', probe, file, 'ctx-1')).toEqual(PROBE);
    expect(calls.n).toBe(1);
  });

  it('probes again when anything of the context changed (kernel, boot, binary, confinement)', () => {
    const file = cacheFile();
    const { calls, probe } = counting();
    cachedKernelProbe('h', probe, file, 'ctx-1');
    const other = { ...PROBE, userns: -1 };
    expect(cachedKernelProbe('h', () => other, file, 'ctx-2')).toEqual(other);
    // The file now holds the new context's answer.
    expect(readCachedProbe('ctx-2', file)).toEqual(other);
    expect(readCachedProbe('ctx-1', file)).toBeUndefined();
    expect(calls.n).toBe(1);
  });

  it('under a seccomp filter rune did not install, probes every run and stores nothing', () => {
    const file = cacheFile();
    const { calls, probe } = counting();
    expect(cachedKernelProbe('h', probe, file, 'ctx', true)).toEqual(PROBE);
    expect(cachedKernelProbe('h', probe, file, 'ctx', true)).toEqual(PROBE);
    expect(calls.n).toBe(2);
    expect(readCachedProbe('ctx', file)).toBeUndefined();
  });

  it.each([
    ['Seccomp:\t0\nSeccomp_filters:\t0\n', false],
    ['Seccomp:\t2\nSeccomp_filters:\t1\n', true],
    ['Seccomp:\t2\nSeccomp_filters:\t3\n', true],
    ['Seccomp:\t2\n', true],
    ['Name:\tnode\n', false],
  ])('reads an outside filter from the status %j as %s', (status, stacked) => {
    expect(underOutsideSeccompFilter(status)).toBe(stacked);
  });

  it('never stores a probe that failed', () => {
    const file = cacheFile();
    const { calls, probe } = counting(() => undefined);
    expect(cachedKernelProbe('h', probe, file, 'ctx')).toBeUndefined();
    expect(cachedKernelProbe('h', probe, file, 'ctx')).toBeUndefined();
    expect(calls.n).toBe(2);
  });

  it('believes no file that others could have written, and no symlink', () => {
    const file = cacheFile();
    writeCachedProbe('ctx', PROBE, file);
    expect(readCachedProbe('ctx', file)).toEqual(PROBE);
    chmodSync(file, 0o620);
    expect(readCachedProbe('ctx', file)).toBeUndefined();
    chmodSync(file, 0o600);

    const planted = cacheFile();
    const elsewhere = join(mkdtempSync(join(tmpdir(), 'rune-probe-planted-')), 'kernel.json');
    writeFileSync(elsewhere, JSON.stringify({ context: 'ctx', probe: PROBE }), { mode: 0o600 });
    symlinkSync(elsewhere, planted);
    expect(readCachedProbe('ctx', planted)).toBeUndefined();
  });

  it('believes no file in a folder that is a symlink', () => {
    const real = mkdtempSync(join(tmpdir(), 'rune-probe-real-'));
    chmodSync(real, 0o700);
    writeFileSync(join(real, 'kernel.json'), JSON.stringify({ context: 'ctx', probe: PROBE }), {
      mode: 0o600,
    });
    const link = join(mkdtempSync(join(tmpdir(), 'rune-probe-link-')), 'probe');
    symlinkSync(real, link);
    expect(readCachedProbe('ctx', join(link, 'kernel.json'))).toBeUndefined();
  });

  it('believes only a well-formed probe', () => {
    const file = cacheFile();
    for (const bad of [
      'not json',
      JSON.stringify({ context: 'ctx' }),
      JSON.stringify({ context: 'ctx', probe: { ...PROBE, landlockAbi: '7' } }),
      JSON.stringify({ context: 'ctx', probe: { ...PROBE, userns: 1.5 } }),
      JSON.stringify({ context: 'ctx', probe: { ...PROBE, unshareNoop: null } }),
      JSON.stringify({ context: 'ctx', probe: { seccompFilter: 0 } }),
    ]) {
      writeFileSync(file, bad, { mode: 0o600 });
      expect(readCachedProbe('ctx', file), bad).toBeUndefined();
    }
    // Extra keys are dropped, not carried into the capabilities.
    expect(validProbe({ ...PROBE, extra: 1 })).toEqual(PROBE);
  });

  it('writes the file private to this user', () => {
    const file = cacheFile();
    writeCachedProbe('ctx', PROBE, file);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ context: 'ctx', probe: PROBE });
  });

  it('keys the context on the kernel, the boot, the binary and this process', () => {
    const context = JSON.parse(probeContext('helper-sha'));
    expect(context.kernel).toContain(readFileSync('/proc/sys/kernel/osrelease', 'utf8').trim());
    expect(context.boot).toBe(readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim());
    expect(context.binary).toContain(process.execPath);
    expect(context.binary).toContain('helper-sha');
    expect(context.status).toMatch(/Seccomp:/);
    expect(context.status).toMatch(/CapEff:/);
    expect(context.namespaces[0]).toMatch(/^user:\[\d+\]$/);
    expect(probeContext('other-helper')).not.toBe(probeContext('helper-sha'));
    expect(probeContext('helper-sha', '/bin/sh')).not.toBe(probeContext('helper-sha'));
  });
});
