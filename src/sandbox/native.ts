// The sandbox's native addon (native/, C + N-API), loaded from the binary's embedded copy.
import { join } from 'node:path';
import { loadNative } from '../core/native.ts';
import type { KernelProbe } from './capabilities.ts';

export interface RuneNative {
  probe(): KernelProbe;
  /** PR_SET_DUMPABLE 0 for rune's own process; whether it holds. */
  undumpable(): boolean;
}

export const NATIVE_ASSET = 'native/rune_native.node';

export function runeNative(): RuneNative {
  return loadNative<RuneNative>(
    NATIVE_ASSET,
    join(process.cwd(), 'native', 'build', 'Release', 'rune_native.node'),
  );
}
