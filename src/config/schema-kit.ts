// What the schema of rune.toml is built from (schema.ts and the tables beside it): each piece is
// built on first use, zod itself loaded only then (ADR 0024), and the value types several tables
// share.
import { domainPatternProblem } from '../core/domains.ts';

/** A value built on its first use, then kept. */
export function once<T extends object>(build: () => T): () => T {
  let value: T | undefined;
  return () => {
    value ??= build();
    return value;
  };
}

/**
 * zod, loaded when the first schema is built: its module set-up is paid by every start that loads
 * it (bench/startup.mjs), and a run whose layers are empty (`rune sandbox` with no rune.toml, say)
 * never builds one.
 */
export const z = once(() => (require('./zod.ts') as typeof import('./zod.ts')).z);

export const positiveInt = once(() => z().number().int().positive());
export const pathList = once(() => z().array(z().string().min(1, 'must not be empty')));
// `*`, `*.com` and other whole-TLD wildcards are refused here, at load, never narrowed silently later.
export const domainList = once(() =>
  z().array(
    z()
      .string()
      .min(1, 'must not be empty')
      .superRefine((entry, ctx) => {
        const problem = domainPatternProblem(entry);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      }),
  ),
);
