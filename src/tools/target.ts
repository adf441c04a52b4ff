// Where a file tool acts: the canonical path the policy judged this call by (not wherever the name
// leads by the time the tool runs), resolved from the run's pinned grant that holds it, or from '/',
// through no symbolic link (src/core/fd/). A name swapped for a link after the check is refused.
import { Grants, isPathRefused, type Root } from '../core/fd/index.ts';
import { canonicalise } from '../core/paths.ts';
import { resolveToolPath } from './paths.ts';
import { type ToolContext, ToolError } from './types.ts';

export interface ToolTarget {
  /** The path as the call named it (absolute), for messages. */
  shown: string;
  /** The canonical path acted on. */
  real: string;
  /** The held folder `rel` is resolved from. */
  root: Root;
  rel: string;
}

/** The target of a file tool's `path` argument. */
export function toolTarget(path: string, context: ToolContext): ToolTarget {
  const shown = resolveToolPath(path, context.cwd, context.env.HOME);
  const real = context.judged?.[shown] ?? canonicalise(shown);
  try {
    const { root, rel } = (context.grants ?? new Grants()).locate(real);
    return { shown, real, root, rel };
  } catch (error) {
    throw toolFsError('open', shown, error);
  }
}

/** A refusal says what was refused; any other failure its errno code. */
export function toolFsError(what: string, path: string, error: unknown): ToolError {
  if (error instanceof ToolError) return error;
  if (isPathRefused(error)) return new ToolError(error.message);
  const code = (error as NodeJS.ErrnoException).code;
  return new ToolError(`cannot ${what} ${path}: ${code ?? (error as Error).message}`);
}
