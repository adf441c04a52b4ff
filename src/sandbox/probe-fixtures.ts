// A kernel probe of a machine where every layer is available, for tests that vary one field of it.
import type { KernelProbe } from './capabilities.ts';

export const OPEN_PROBE: KernelProbe = Object.freeze({
  landlockAbi: 7,
  seccompFilter: 0,
  seccompUserNotif: 0,
  currentSeccomp: 0,
  noNewPrivs: 0,
  userns: 0,
  netns: 0,
  mountns: 0,
  pidns: 0,
  unshareNoop: 0,
});
