// What a server process gets from the sandbox: its argv, a scrubbed environment plus the table's
// `env`, and only the paths and domains its table grants besides its own program and package.
// Planning is pure; finding the program and package on disk is in locate.ts.
import type { McpServerConfig } from '../config/schema.ts';
import type { SandboxRequest } from '../sandbox/types.ts';

/** Variables a server inherits from rune (as sudo and the MCP SDK do); everything else must be given in `env`. */
export const INHERITED_ENV = [
  'HOME',
  'LOGNAME',
  'USER',
  'PATH',
  'SHELL',
  'TERM',
  'LANG',
  'LC_ALL',
  'TZ',
  'TMPDIR',
];

export function serverEnvironment(
  runeEnv: NodeJS.ProcessEnv,
  configured: Record<string, string> | undefined,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of INHERITED_ENV) {
    const value = runeEnv[key];
    // Exported shell functions ("() { … }") are a known injection path; they are never passed on.
    if (value !== undefined && !value.startsWith('()')) env[key] = value;
  }
  return { ...env, ...configured };
}

/** The program and package of a server, found on disk (see locate.ts). */
export interface LocatedServer {
  /** Absolute path of the program, or undefined when it cannot be found. */
  program: string | undefined;
  /** Folders holding the program and its script package, readable by the server. */
  ownPaths: string[];
}

export type ServerSandboxPlan = Omit<SandboxRequest, 'timeoutMs' | 'maxOutputBytes' | 'stdin' | 'signal'>;

export function planServerSandbox(
  server: McpServerConfig,
  located: LocatedServer & { program: string },
  cwd: string,
  runeEnv: NodeJS.ProcessEnv,
): ServerSandboxPlan {
  const unique = (paths: string[]) => [...new Set(paths)];
  const readWritePaths = unique(server.allowed_paths_rw ?? []);
  return {
    argv: [located.program, ...(server.args ?? [])],
    cwd,
    env: serverEnvironment(runeEnv, server.env),
    readOnlyPaths: unique([...located.ownPaths, ...(server.allowed_paths_ro ?? [])]).filter(
      (path) => !readWritePaths.includes(path),
    ),
    readWritePaths,
    allowedDomains: unique(server.allowed_domains ?? []),
  };
}
