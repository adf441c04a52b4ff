// The environment a tool process or MCP server gets: an allow list, never a deny list. Secrets
// hide under any name (DATABASE_URL with a password, MYSQL_PWD, CI_JOB_JWT, SSH_AUTH_SOCK, proxy
// URLs with credentials), so only the variables a program needs to run are passed on, plus the
// exact names `[sandbox] env_passthrough` lists. Pure.

/** Passed to every tool process and MCP server; `LC_*` stands for the locale categories below. */
export const BASE_ENV = ['PATH', 'HOME', 'LANG', 'LC_*', 'TERM', 'TZ', 'USER', 'LOGNAME', 'SHELL', 'TMPDIR'];

/**
 * The locale categories glibc reads, not every `LC_` name: OpenSSH forwards `LC_*` by default
 * (AcceptEnv), so people pass tokens to servers as `LC_SOMETHING`.
 */
const LOCALE_CATEGORIES = [
  'LC_ALL',
  'LC_CTYPE',
  'LC_NUMERIC',
  'LC_TIME',
  'LC_COLLATE',
  'LC_MONETARY',
  'LC_MESSAGES',
  'LC_PAPER',
  'LC_NAME',
  'LC_ADDRESS',
  'LC_TELEPHONE',
  'LC_MEASUREMENT',
  'LC_IDENTIFICATION',
];

const BASE = new Set([...BASE_ENV.filter((name) => !name.endsWith('*')), ...LOCALE_CATEGORIES]);

function inBase(name: string): boolean {
  return BASE.has(name);
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
