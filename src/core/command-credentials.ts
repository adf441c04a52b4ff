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
// A last word that makes the name about a credential, not one: `--token-file PATH`,
// `--api-key-env NAME`, `TOKEN_LIMIT=100000` (whose value, registered, would redact every 100000).
const NOT_A_CREDENTIAL = new Set([
  'file',
  'path',
  'dir',
  'type',
  'kind',
  'mode',
  'limit',
  'count',
  'size',
  'name',
  'url',
  'uri',
  'endpoint',
  'env',
  'var',
  'length',
  'ttl',
  'timeout',
  'format',
  'method',
  // Switches: `--auth-disabled DIR`, `--skip-token-verify CMD` take no value.
  'enabled',
  'disabled',
  'required',
  'optional',
  'verify',
]);
// Query parameters that carry a signed URL's credential without naming one.
const QUERY_CREDENTIALS = new Set(['sig', 'signature', 'x-amz-signature', 'x-goog-signature']);

/** Whether a flag, variable or header name (any case, `-`/`_`/`.`/camelCase separated) names a credential. */
export function namesCredential(name: string): boolean {
  const words = name
    .replace(/^-+/, '')
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
  if (words.length > 1 && NOT_A_CREDENTIAL.has(words.at(-1) as string)) return false;
  // `--no-auth`: a switch that turns a credential off, followed by the command's own words.
  if (words.length > 1 && words[0] === 'no') return false;
  if (words.some((word) => SECRET_PARTS.has(word))) return true;
  return SECRET_SUFFIX.test(words.join(''));
}

/**
 * A URL's password and the values of its credential-named query parameters, each as written in
 * the URL (percent-encoded: how the URL is printed) and decoded (how a server may echo it). The
 * password also as the client sends it, `Authorization: Basic base64(user:password)`, which a
 * server logs with its request headers.
 */
function credentialsInUrl(text: string): string[] {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(text) || !URL.canParse(text)) return [];
  const url = new URL(text);
  const found: string[] = [];
  if (url.password) {
    const password = safeDecode(url.password);
    found.push(url.password, password, basicToken(`${safeDecode(url.username)}:${password}`));
  }
  for (const pair of url.search.slice(1).split('&')) {
    const equals = pair.indexOf('=');
    if (equals < 0) continue;
    const name = safeDecode(pair.slice(0, equals).replace(/\+/g, ' '));
    if (!namesCredential(name) && !QUERY_CREDENTIALS.has(name.toLowerCase())) continue;
    const raw = pair.slice(equals + 1);
    found.push(raw, safeDecode(raw.replace(/\+/g, ' ')));
  }
  return found;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** `"X"` or `'X'` written into a word (`--api-key="X"`): X. */
function unquote(text: string): string {
  const match = /^(["'])(.*)\1$/s.exec(text);
  return match ? (match[2] as string) : text;
}

/**
 * What one word carries wherever it stands: a URL's credentials, a credential header
 * (`Authorization: Bearer X`, `X-Api-Key: X`), `Bearer X`, or a JSON object of settings or
 * headers (`{"apiKey": "X"}`).
 */
function credentialsInWord(word: string): string[] {
  const found = credentialsInUrl(word);
  // `user:password@host` without a scheme (a Go MySQL DSN, `redis-cli -u`); not an image digest.
  const dsn = /^[\w.-]+:([^\s@/]+)@(?!sha\d+:)[^\s@]+$/.exec(word);
  if (dsn && !word.includes('://')) return [dsn[1] as string];
  const header = /^([A-Za-z0-9-]+):\s*(.+)$/s.exec(word);
  if (header && !word.includes('://')) {
    const [, name, value] = header as unknown as [string, string, string];
    found.push(...headerCredentials(name, value));
    return found;
  }
  found.push(...schemeValue(word));
  if (/^\s*\{/.test(word)) found.push(...credentialsInJson(word));
  else if (!word.includes('://')) found.push(...credentialsInPairs(word));
  return found;
}

/**
 * `name=value` pairs inside one word, separated by `;` or spaces: connection strings (ADO.NET's
 * `Server=db;Password=X;`, libpq's `host=db password='X'`), a script's `TOKEN=X cmd`. The values
 * of credential names.
 */
function credentialsInPairs(text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(/(?:^|[;\s])\s*([A-Za-z_][\w .-]*?)\s*=\s*('[^']*'|"[^"]*"|[^;\s]+)/g)) {
    const [, name, value] = match as unknown as [string, string, string];
    if (namesCredential(name)) found.push(...credentialValue(unquote(value)));
  }
  return found;
}

/** A credential header's value (`Authorization: Bearer X`: X alone; `X-Api-Key: X`: X). */
function headerCredentials(name: string, value: string): string[] {
  if (!namesCredential(name) && !CREDENTIAL_HEADERS.has(name.toLowerCase())) return [];
  const scheme = schemeValue(value);
  return scheme.length > 0 ? scheme : credentialValue(unquote(value.trim()));
}

function credentialsInJson(text: string): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return [];
  }
  const found: string[] = [];
  const walk = (value: unknown, name: string | null) => {
    if (typeof value === 'string') {
      if (name !== null && (namesCredential(name) || CREDENTIAL_HEADERS.has(name.toLowerCase()))) {
        found.push(...credentialValue(value));
      }
      found.push(...credentialsInWord(value));
    } else if (Array.isArray(value)) {
      for (const item of value) walk(item, name);
    } else if (value && typeof value === 'object') {
      for (const [key, inner] of Object.entries(value)) walk(inner, key);
    }
  };
  walk(parsed, null);
  return found;
}

/**
 * The values a command line passes as credentials: `--token X`, `--api-key=X`, `API_KEY=X` (as
 * `env` takes it), `Authorization: Bearer X` / `X-Api-Key: X` header words, `Bearer X`, URL
 * passwords or credential-named query values, and any of these as a flag's or variable's value
 * (`--header=Authorization: Bearer X`, `DATABASE_URL=postgres://u:X@h`), a scheme-less DSN
 * (`u:X@tcp(h)/db`), a connection string's `Password=X;` or inside a JSON word; for HTTP Basic (a URL's `user:X@`, `Basic T`, a
 * `user:X` credential value) the base64 token and the decoded pair too.
 * Short flags (`-k X`, `-p X`: a port as often as a password) are ambiguous and left alone.
 */
export function credentialsInArgs(args: readonly string[]): string[] {
  const found: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const next = args[i + 1];
    const assignment = /^(--?[A-Za-z][\w.-]*|[A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(arg);
    if (assignment) {
      const [, name, value] = assignment as unknown as [string, string, string];
      if (namesCredential(name)) found.push(...credentialValue(unquote(value)));
      // `env` takes the rest as the value; `sh -c` reads `TOKEN=X cmd …` as a pair and a command.
      found.push(...credentialsInWord(unquote(value)), ...credentialsInPairs(arg));
      continue;
    }
    found.push(...credentialsInWord(arg));
    if (SCHEME_WORD.test(arg) && next !== undefined) found.push(...schemeValue(`${arg} ${unquote(next)}`));
    // `--password X`, and Go's `-password X`. X may start with a dash (`--password -x9secret`:
    // parsers that take a value take the next word whatever it is); a `--` word is the next flag.
    if (/^--?[A-Za-z][\w.-]+$/.test(arg) && namesCredential(arg) && next !== undefined) {
      // `--auth Bearer X`: X is taken by the scheme word on the next turn, never the word itself.
      if (!next.startsWith('--') && !SHORT_FLAG.test(next) && !SCHEME_WORD.test(next)) {
        found.push(...credentialValue(unquote(next)));
      }
    }
  }
  return unique(found);
}

const SCHEME_WORD = /^(?:bearer|basic)$/i;
// `-v`: too short to be a credential, and the next option of `--no-verify-auth -v`.
const SHORT_FLAG = /^-[A-Za-z]$/;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
/** Headers whose whole value is a credential, whatever they are called otherwise. */
export const CREDENTIAL_HEADERS: ReadonlySet<string> = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
]);

/** `Bearer X` / `Basic X` inside one word: X (and what a Basic X stands for). */
function schemeValue(text: string): string[] {
  const match = /^(bearer|basic|token)\s+(\S+)$/i.exec(text.trim());
  if (!match) return [];
  const token = match[2] as string;
  return /^basic$/i.test(match[1] as string) ? [token, ...basicPair(token)] : [token];
}

/**
 * A value known to be a credential, and what else it stands for as a server may print it:
 * `Basic T` → T, `user:password` and password; `user:password` → password and its Basic token.
 */
export function credentialValue(value: string): string[] {
  return [value, ...schemeValue(value), ...userPassword(value)];
}

/** The token HTTP Basic sends for `user:password`. */
function basicToken(pair: string): string {
  return Buffer.from(pair, 'utf8').toString('base64');
}

/**
 * `Basic X` where X is base64 of `user:password`: the pair and the password as a server that
 * decodes the header may print them ("login failed for me:hunter2").
 */
function basicPair(token: string): string[] {
  if (!BASE64.test(token)) return [];
  const bytes = Buffer.from(token, 'base64');
  if (bytes.toString('base64') !== token) return [];
  const pair = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
  // Text only: a token that is not the base64 of a printable `user:password` stays as it is.
  if (pair.includes('\uFFFD') || /[\p{Cc}]/u.test(pair)) return [];
  const colon = pair.indexOf(':');
  return colon < 0 ? [] : [pair, pair.slice(colon + 1)];
}

/**
 * A credential value shaped `user:password` (`--basic-auth me:hunter2`, `AUTH=me:hunter2`): the
 * password alone and the Basic token a client makes of the pair.
 */
function userPassword(value: string): string[] {
  const match = /^[^\s:@/]+:(\S+)$/.exec(value);
  if (!match || value.includes('://')) return [];
  return [match[1] as string, basicToken(value)];
}

function unique(values: string[]): string[] {
  return [...new Set(values.filter((value) => value.length > 0))];
}

/**
 * Values of credential-named variables (`GITHUB_TOKEN`, `PGPASSWORD`, `OPENAI_API_KEY`, …), and
 * what any value carries (`DATABASE_URL=postgres://u:X@h`, `AUTH_HEADER=Bearer X`: X as well).
 */
export function credentialsInEnv(env: Readonly<Record<string, string | undefined>>): string[] {
  const found: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (!value) continue;
    if (namesCredential(name)) found.push(...credentialValue(value));
    found.push(...credentialsInWord(value));
  }
  return unique(found);
}

/**
 * Whether a value that no name marks looks like a key, a token or a hash: at least 16 characters
 * without whitespace that mix two of lower case, upper case and digits (`7f3e9a1c5b2d4e6f`,
 * `AKIAIOSFODNN7EXAMPLE`, a UUID). Words, numbers and sentences (`production`, `1`, `us-east-1`)
 * are not; a URL or a path is judged by its parts.
 */
export function looksLikeKey(value: string): boolean {
  if (value.length < 16 || /\s/.test(value)) return false;
  return [/[a-z]/, /[A-Z]/, /[0-9]/].filter((kind) => kind.test(value)).length >= 2;
}

/**
 * The credentials in a table a pipeline hands over (Concourse `source.mcp` env or headers), where
 * a credential manager's `((var))` may stand under any name: what credential names and headers
 * carry (as `credentialsInEnv` and header words take them), and under any other name each word
 * that looks like a key. Not every value: registered, `production` or `1` would be blanked from
 * the whole build log.
 */
export function credentialsInTable(
  table: Readonly<Record<string, string>>,
  kind: 'env' | 'headers',
): string[] {
  const found = kind === 'env' ? credentialsInEnv(table) : [];
  for (const [name, value] of Object.entries(table)) {
    if (kind === 'headers') found.push(...headerCredentials(name, value), ...credentialsInWord(value));
    found.push(...keyShapedWords(value));
  }
  return unique(found);
}

/** A URL's credentials (`credentialsInArgs`), and query values that look like keys whatever they are called. */
export function credentialsInTableUrl(url: string): string[] {
  const found = credentialsInArgs([url]);
  if (URL.canParse(url)) {
    for (const value of new URL(url).searchParams.values()) found.push(...keyShapedWords(value));
  }
  return unique(found);
}

/** Key-shaped words of a value; a URL or a path by its parts (a webhook's secret path segment). */
function keyShapedWords(value: string): string[] {
  return value
    .split(/\s+/)
    .flatMap((word) => (/^(?:[a-z][a-z0-9+.-]*:\/\/|\/)/i.test(word) ? word.split(/[/?&=#@:]+/) : [word]))
    .filter(looksLikeKey);
}
