// The environment a tool process or MCP server gets: an allow list, never a deny list. Secrets
// hide under any name (DATABASE_URL with a password, MYSQL_PWD, CI_JOB_JWT, SSH_AUTH_SOCK, proxy
// URLs with credentials), so only the variables a program needs to run are passed on, plus the
// exact names `[sandbox] env_passthrough` lists. Pure.

/** Passed to every tool process and MCP server; `LC_*` stands for every locale variable. */
export const BASE_ENV = ['PATH', 'HOME', 'LANG', 'LC_*', 'TERM', 'TZ', 'USER', 'LOGNAME', 'SHELL', 'TMPDIR'];

const BASE = new Set(BASE_ENV.filter((name) => !name.endsWith('*')));

function inBase(name: string): boolean {
  return BASE.has(name) || (name.startsWith('LC_') && /^LC_[A-Z_]+$/.test(name));
}

export interface AllowedEnvironment {
  env: Record<string, string>;
  /** Names that were dropped (never their values). */
  removed: string[];
}

/**
 * The allow-listed part of `env`. `passthrough` holds exact names (no patterns: a pattern would
 * let the next secret-looking name through). A bash function exported through a variable
 * ("() { …") is never passed on, whatever its name.
 */
export function allowedEnvironment(
  env: Readonly<Record<string, string | undefined>>,
  passthrough: readonly string[],
): AllowedEnvironment {
  const extra = new Set(passthrough);
  const out: Record<string, string> = {};
  const removed: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if ((inBase(name) || extra.has(name)) && !value.startsWith('() {')) out[name] = value;
    else removed.push(name);
  }
  return { env: out, removed };
}

/** One line for `/policy full` and the docs. */
export function describeEnvironmentRule(passthrough: readonly string[]): string {
  const extra = passthrough.length > 0 ? passthrough.join(', ') : '(none)';
  return `tools and MCP servers get only ${BASE_ENV.join(', ')}; env_passthrough: ${extra}; MCP servers also their table's env`;
}
