// What a server process gets from the sandbox: its argv, the environment allow list plus the
// table's `env`, and only the paths and domains its table grants besides its own program and package.
// Planning is pure; finding the program and package on disk is in locate.ts.
import type { McpServerConfig } from '../config/mcp-schema.ts';
import type { SandboxRequest } from '../sandbox/types.ts';

/** The program and package of a server, found on disk (see locate.ts). */
export interface LocatedServer {
  /** Absolute path of the program, or undefined when it cannot be found. */
  program: string | undefined;
  /** Folders holding the program and its script package, readable by the server. */
  ownPaths: string[];
}

function definedOnly(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined) out[name] = value;
  return out;
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
    // The executor passes on only the allow list of rune's environment (src/sandbox/env.ts), the same
    // rule as for every tool; the table's `env` is configured on purpose and passed as it is.
    env: definedOnly(runeEnv),
    ...(server.env ? { configuredEnv: { ...server.env } } : {}),
    readOnlyPaths: unique([...located.ownPaths, ...(server.allowed_paths_ro ?? [])]).filter(
      (path) => !readWritePaths.includes(path),
    ),
    readWritePaths,
    allowedDomains: unique(server.allowed_domains ?? []),
  };
}
