// The sandbox's native addon (native/, C + N-API), loaded from the binary's embedded copy.
import { RUNE_ADDON, runeAddon } from '../core/native.ts';
import type { KernelProbe } from './capabilities.ts';

export interface RuneNative {
  probe(): KernelProbe;
  /** PR_SET_DUMPABLE 0 for rune's own process; whether it holds. */
  undumpable(): boolean;
}

export const NATIVE_ASSET = RUNE_ADDON;

export function runeNative(): RuneNative {
  return runeAddon<RuneNative>();
}
