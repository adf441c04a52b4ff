// The sandbox helper's command line, written against its declaration (native/src/helper_contract.h,
// generated into native-contract.ts): a flag the helper does not know, or the wrong number of values
// after one, does not type-check.
import type { HELPER_FLAGS } from './native-contract.ts';

export type HelperFlag = keyof typeof HELPER_FLAGS;

type Values<N> = N extends 0 ? [] : N extends 1 ? [string] : N extends 2 ? [string, string] : never;

/** One flag with its values, as argv words. */
export function flag<F extends HelperFlag>(name: F, ...values: Values<(typeof HELPER_FLAGS)[F]>): string[] {
  return [name, ...values];
}
