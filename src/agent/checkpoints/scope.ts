// What one tool call could change, for its checkpoint: write_file and edit_file exactly their file
// (the canonical path the policy judged); a command (execute_cmd, or any other built-in that
// writes) the run's writable grants; an MCP tool the folders its server may write. Read-only
// tools change nothing. Paths come out canonical; grants that do not exist are left out.
import { lstatSync } from 'node:fs';
import { absolutePath, canonicalise, homeDir } from '../../core/paths.ts';
import { resolveToolPath } from '../../tools/paths.ts';
import type { RegisteredTool } from '../../tools/registry.ts';
import type { ToolContext } from '../../tools/types.ts';
import type { CallScope } from './recorder.ts';

const FILE_TOOLS = new Set(['write_file', 'edit_file']);

export function callScope(
  tool: RegisteredTool,
  args: Record<string, unknown>,
  context: ToolContext,
): CallScope | undefined {
  if (tool.readOnly) return undefined;
  if (tool.source === 'builtin' && FILE_TOOLS.has(tool.definition.name)) {
    if (typeof args.path !== 'string') return undefined;
    try {
      const shown = resolveToolPath(args.path, context.cwd, context.env.HOME);
      return { roots: [], files: [context.judged?.[shown] ?? canonicalise(shown)] };
    } catch {
      return undefined; // a path the tool refuses itself
    }
  }
  const granted =
    tool.source === 'mcp'
      ? (tool.writablePaths ?? []).map((path) => absolutePath(path, context.cwd, homeDir(context.env)))
      : context.readWritePaths;
  if (granted.length === 0) return undefined;
  const scope = grantScope(granted, (path) =>
    context.grants ? context.grants.pin(path) : canonicalise(path),
  );
  return scope.roots.length + scope.files.length > 0 ? scope : undefined;
}

/** Writable grants (absolute paths) as real folders and files; what does not exist is left out. */
export function grantScope(
  granted: readonly string[],
  real: (path: string) => string = canonicalise,
): CallScope {
  const scope: CallScope = { roots: [], files: [] };
  for (const path of new Set(granted)) {
    let at: string;
    try {
      at = real(path);
    } catch {
      continue; // replaced since it was pinned: the call itself is refused for the same reason
    }
    const st = lstatSync(at, { throwIfNoEntry: false });
    if (st?.isDirectory()) scope.roots.push(at);
    else if (st?.isFile()) scope.files.push(at);
  }
  return scope;
}
