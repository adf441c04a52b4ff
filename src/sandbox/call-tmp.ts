// The call's own temporary folder on the host (no view: TMPDIR points there), removed when the call
// ends, by descriptor (src/core/fd): what a command or a process it left behind put there is
// removed without following a link into a folder never granted, or crossing into a mount.
import { removeFolderAt } from '../core/fd/index.ts';
import type { Logger } from '../core/logger.ts';

/**
 * Removes the call's temporary folder by descriptor (src/core/fd): a link the command left there is
 * removed, never followed, and a folder swapped in from elsewhere or a mount is left alone. Returns
 * what was left, for the model and the person ('' when everything went).
 */
export function removeCallTmp(prepared: { tmpDir?: string }, logger: Logger): string {
  if (!prepared.tmpDir) return '';
  const left = removeFolderAt(prepared.tmpDir);
  if (left.length === 0) return '';
  const message = `rune: the call's temporary folder was not removed entirely:\n${left.map((l) => `  - ${l}`).join('\n')}`;
  logger.warn('sandbox.tmp_left', { message });
  return `${message}\n`;
}
