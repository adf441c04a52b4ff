// Turns a path from the model into an absolute one: relative to the working directory, `~` to HOME.
import { isAbsolute, join, resolve } from 'node:path';
import { ToolError } from './types.ts';

export function resolveToolPath(path: string, cwd: string, home: string | undefined): string {
  if (path.includes('\0')) throw new ToolError('the path contains a NUL byte');
  if (path === '~' || path.startsWith('~/')) {
    if (!home) throw new ToolError('`~` cannot be expanded: HOME is not set');
    return join(home, path.slice(1));
  }
  return isAbsolute(path) ? resolve(path) : resolve(cwd, path);
}
