import { describe, expect, it } from 'vitest';
import { idleCores, idleFrom } from './idle-cores.ts';

describe('idleFrom', () => {
  it.each([
    ['0.08 0.03 0.17 1/345 9999', 2, 1],
    ['7.80 3.40 1.47 2/345 9999', 2, 0],
    ['12.0 11.0 9.0 9/900 9999', 2, 0],
    ['0.50 0.50 0.50 1/100 1', 8, 7],
    ['garbage', 2, undefined],
  ])('%s on %i cores → %s idle besides the caller', (text, cores, idle) => {
    expect(idleFrom(text, cores)).toBe(idle);
  });

  it('answers a count on this machine', () => {
    expect(idleCores()).toBeGreaterThanOrEqual(0);
  });
});
