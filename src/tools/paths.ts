// Turns a path from the model into an absolute one (src/core/paths.ts: relative to the working
// directory, `~` to HOME), refusing what a path from the model must not be.
import { absolutePath } from '../core/paths.ts';
import { ToolError } from './types.ts';

export function resolveToolPath(path: string, cwd: string, home: string | undefined): string {
  if (path.includes('\0')) throw new ToolError('the path contains a NUL byte');
  if ((path === '~' || path.startsWith('~/')) && !home) {
    throw new ToolError('`~` cannot be expanded: HOME is not set');
  }
  return absolutePath(path, cwd, home ?? '');
}
