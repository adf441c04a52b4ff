// Credentials handed to a program on its command line or in its environment: an MCP server started
// as `server --api-key=…` or with `env = { GITHUB_TOKEN = "…" }`. rune shows a server's command
// line (/mcp, /config, failure messages, the Concourse build log) and a failing server may echo its
// environment, so these values are registered as secrets. Pure: which words count is decided here
// and tested by table; the caller registers what it returns.

// Name parts that mark a value as a credential: `--auth-token`, `API_KEY`, `clientSecret`, `PGPASSWORD`.
const SECRET_PARTS = new Set([
  'key',
  'apikey',
  'token',
  'secret',
  'password',
  'passwd',
  'pass',
  'pwd',
  'auth',
  'credential',
  'credentials',
  'bearer',
  'cookie',
  'pat',
]);
// Whole names that end in a secret word without a separator (PGPASSWORD, MYSQL_PWD's neighbours).
const SECRET_SUFFIX = /(?:password|passwd|token|secret|apikey)$/;

/** Whether a flag, variable or header name (any case, `-`/`_`/`.`/camelCase separated) names a credential. */
export function namesCredential(name: string): boolean {
  const words = name
    .replace(/^-+/, '')
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
  if (words.some((word) => SECRET_PARTS.has(word))) return true;
  return SECRET_SUFFIX.test(words.join(''));
}

/** A URL's password and the values of its credential-named query parameters. */
function credentialsInUrl(text: string): string[] {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(text) || !URL.canParse(text)) return [];
  const url = new URL(text);
  const found: string[] = [];
  if (url.password) found.push(url.password, safeDecode(url.password));
  for (const [name, value] of url.searchParams) if (namesCredential(name)) found.push(value);
  return found;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * The values a command line passes as credentials: `--token X`, `--api-key=X`, `API_KEY=X` (as
 * `env` takes it), `Authorization: Bearer X` / `X-Api-Key: X` header words, `Bearer X`, and URL
 * passwords or credential-named query values. Short flags (`-k X`) are ambiguous and left alone.
 */
export function credentialsInArgs(args: readonly string[]): string[] {
  const found: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    found.push(...credentialsInUrl(arg));
    const header = /^([A-Za-z0-9-]+):\s*(.+)$/.exec(arg);
    if (header && !arg.includes('://')) {
      const [, name, value] = header as unknown as [string, string, string];
      if (namesCredential(name) || CREDENTIAL_HEADERS.has(name.toLowerCase())) {
        const scheme = schemeValue(value);
        found.push(...(scheme.length > 0 ? scheme : [value]));
      }
      continue;
    }
    found.push(...schemeValue(arg));
    if (SCHEME_WORD.test(arg) && args[i + 1] !== undefined) found.push(args[i + 1] as string);
    const assignment = /^(--?[A-Za-z][\w.-]*|[A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(arg);
    if (assignment) {
      const [, name, value] = assignment as unknown as [string, string, string];
      if (namesCredential(name)) found.push(value);
      continue;
    }
    if (/^--[A-Za-z]/.test(arg) && namesCredential(arg)) {
      const next = args[i + 1];
      // `--auth Bearer X`: X is taken by the scheme word on the next turn, never the word itself.
      if (next !== undefined && !next.startsWith('-') && !SCHEME_WORD.test(next)) found.push(next);
    }
  }
  return found.filter((value) => value.length > 0);
}

const SCHEME_WORD = /^(?:bearer|basic)$/i;
const CREDENTIAL_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie']);

/** `Bearer X` / `Basic X` inside one word: X. */
function schemeValue(text: string): string[] {
  const match = /^(?:bearer|basic|token)\s+(\S+)$/i.exec(text.trim());
  return match ? [match[1] as string] : [];
}

/** Values of credential-named variables (`GITHUB_TOKEN`, `PGPASSWORD`, `OPENAI_API_KEY`, …). */
export function credentialsInEnv(env: Readonly<Record<string, string | undefined>>): string[] {
  const found: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (value && namesCredential(name)) found.push(value);
  }
  return found;
}
