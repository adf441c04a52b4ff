// `rune notes`: the collaborative Markdown notes server (SPEC §2).
import type { ModeContext } from '../core/bundles.ts';
import { RuneError } from '../core/errors.ts';

export function run(_context: ModeContext): number {
  throw new RuneError('USAGE', 'rune notes is not part of this build yet');
}
