import { describe, expect, it } from 'vitest';
import { formatLayerSummary, skippedLayersNote, strictModeError } from './summary.ts';
import type { LayerReport } from './types.ts';

const all: LayerReport[] = [
  { layer: 'cgroups', applied: true, detail: 'cgroup v1: memory.max 2048 MiB' },
  { layer: 'network', applied: true, detail: 'empty network namespace' },
  { layer: 'seccomp', applied: true, detail: 'filter mode' },
  { layer: 'landlock', applied: true, detail: 'ABI 7' },
];
const cause = 'unshare(CLONE_NEWUSER) failed with EPERM: a seccomp filter stacked on rune refuses unshare';
const container: LayerReport[] = [
  { layer: 'cgroups', applied: false, detail: 'no writable cgroup' },
  {
    layer: 'network',
    applied: false,
    detail: `no network namespace: needs a user namespace first: ${cause}`,
  },
  { layer: 'seccomp', applied: true, detail: 'filter mode, stacked' },
  { layer: 'landlock', applied: true, detail: 'ABI 7' },
];

describe('formatLayerSummary', () => {
  it('puts the layers in force on one line and each skipped one, with its cause, on its own', () => {
    expect(formatLayerSummary(container)).toEqual([
      'sandbox layers in force: seccomp (filter mode, stacked); landlock (ABI 7)',
      'sandbox layer SKIPPED: cgroups: no writable cgroup',
      `sandbox layer SKIPPED: network: no network namespace: needs a user namespace first: ${cause}`,
    ]);
  });
  it('says "none" when nothing applies', () => {
    const off = all.map((layer) => ({ ...layer, applied: false, detail: 'sandbox.mode = off' }));
    expect(formatLayerSummary(off)[0]).toBe('sandbox layers in force: none');
    expect(formatLayerSummary(off)).toHaveLength(5);
  });
});

describe('skippedLayersNote', () => {
  const cases: [string, LayerReport[] | undefined, string | undefined][] = [
    ['no layers reported (a tool that runs no process)', undefined, undefined],
    ['every layer applied', all, undefined],
    [
      'some skipped: named, and the rest said to apply',
      container,
      '[sandbox: this ran without the cgroups and network layers, which this machine does not offer; the other layers applied]',
    ],
    [
      'one skipped',
      [container[0]!, ...all.slice(1)],
      '[sandbox: this ran without the cgroups layer, which this machine does not offer; the other layers applied]',
    ],
    [
      'all skipped: the reason (the sandbox is off)',
      all.map((layer) => ({ ...layer, applied: false, detail: 'sandbox.mode = off' })),
      '[sandbox: this ran without any sandbox layer (sandbox.mode = off)]',
    ],
  ];
  for (const [name, layers, note] of cases) it(name, () => expect(skippedLayersNote(layers)).toBe(note));
});

describe('strictModeError', () => {
  it('is nothing when every layer applies', () => {
    expect(strictModeError(all, '--sandbox')).toBeUndefined();
  });
  it('names the setting, each missing layer with its cause, and what to do, in the message itself', () => {
    const error = strictModeError(container, 'source.sandbox.mode');
    expect(error?.code).toBe('SANDBOX_SETUP');
    expect(error?.exitCode).toBe(8);
    expect(error?.message).toContain(
      'source.sandbox.mode is strict, but 2 sandbox layers are missing here (cgroups, network)',
    );
    expect(error?.message).toContain('\n  cgroups: no writable cgroup\n');
    expect(error?.message).toContain(
      `\n  network: no network namespace: needs a user namespace first: ${cause}\n`,
    );
    expect(error?.message).toContain('set source.sandbox.mode to auto');
    expect(strictModeError(container, '--sandbox')?.message).toContain('or pass --sandbox auto to run');
  });
});
