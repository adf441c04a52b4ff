// OAuth state of one remote MCP server, kept in $RUNE_HOME/mcp-auth/ in a file keyed by the
// server's URL (HOST-DIGEST.json; 0600, in a 0700 folder): the registered client, the tokens and
// the discovered endpoints. Two servers never share a file, so a table that points a name at
// another URL gets a login of its own and never touches the first server's tokens
// (docs/adr/0033-run-outcomes.md). Every write goes to a new file that is synced and renamed over
// the old one, so a crash leaves the old state or the new.
import { createHash } from 'node:crypto';
import {
  closeSync,
  fsyncSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import type { OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { RuneError } from '../../../core/errors.ts';
import { runeHome } from '../../../core/paths.ts';
import { ensurePrivateDir } from '../../../core/private-dir.ts';
import { registerSecret } from '../../../core/redact.ts';

export interface StoredAuth {
  version: 1;
  /** The URL of the MCP server these credentials belong to. */
  server_url: string;
  /** The [[mcp]] table names that used this login, for messages. */
  names?: string[];
  client?: OAuthClientInformationMixed;
  /** The redirect URI the client was registered with (its port is reused at the next login). */
  redirect_uri?: string;
  tokens?: OAuthTokens;
  /** Epoch seconds when the access token expires, from expires_in at the time it was saved. */
  expires_at?: number;
  discovery?: OAuthDiscoveryState;
}

export function authDir(env: NodeJS.ProcessEnv): string {
  return join(runeHome(env), 'mcp-auth');
}

/** The URL as a key: scheme and host lower-cased, default port dropped, no fragment. */
export function serverKey(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.hash = '';
    return parsed.href;
  } catch {
    return url;
  }
}

/** The file of one server's login: its host (readable) and a digest of its whole URL (unique). */
export function authFileName(url: string): string {
  const key = serverKey(url);
  let host = 'server';
  try {
    host = new URL(key).host.replace(/[^A-Za-z0-9.-]/g, '_') || host;
  } catch {
    // not a URL: the digest alone tells servers apart
  }
  return `${host}-${createHash('sha256').update(key).digest('hex').slice(0, 16)}.json`;
}

/** A login kept elsewhere in the folder: its server URL and the table names that used it. */
export interface OtherLogin {
  url: string;
  names: string[];
  file: string;
}

/** The logins in the folder whose tables were named `name` but whose server is not `url`. */
export function otherLogins(env: NodeJS.ProcessEnv, name: string, url: string): OtherLogin[] {
  const dir = authDir(env);
  let files: string[];
  try {
    files = readdirSync(dir).filter((file) => file.endsWith('.json'));
  } catch {
    return [];
  }
  const out: OtherLogin[] = [];
  for (const file of files) {
    try {
      const state = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Partial<StoredAuth>;
      const names = state.names ?? (file === `${name}.json` ? [name] : []);
      if (typeof state.server_url !== 'string' || serverKey(state.server_url) === serverKey(url)) continue;
      if (names.includes(name) && state.tokens)
        out.push({ url: state.server_url, names, file: join(dir, file) });
    } catch {
      // unreadable: not a login anyone can use
    }
  }
  return out;
}

function registerSecrets(state: StoredAuth | undefined): void {
  registerSecret(state?.tokens?.access_token);
  registerSecret(state?.tokens?.refresh_token);
  registerSecret(state?.tokens?.id_token);
  registerSecret((state?.client as { client_secret?: string } | undefined)?.client_secret);
}

export class TokenStore {
  readonly file: string;
  private state: StoredAuth | undefined;

  constructor(
    readonly env: NodeJS.ProcessEnv,
    readonly server: string,
    readonly serverUrl: string,
    private readonly now: () => number = Date.now,
  ) {
    this.file = join(authDir(env), authFileName(serverUrl));
    this.adoptLegacy();
    this.state = this.read();
  }

  /**
   * Before logins were keyed by URL they were kept as NAME.json: such a file is moved to this
   * server's key when it belongs to this URL, and left alone (another server's) when it does not.
   */
  private adoptLegacy(): void {
    const legacy = join(authDir(this.env), `${this.server}.json`);
    if (legacy === this.file) return;
    try {
      statSync(this.file);
      return; // this server has its own file already
    } catch {
      // none yet
    }
    try {
      const state = JSON.parse(readFileSync(legacy, 'utf8')) as Partial<StoredAuth>;
      if (typeof state.server_url !== 'string' || serverKey(state.server_url) !== serverKey(this.serverUrl))
        return;
      renameSync(legacy, this.file);
    } catch {
      // no legacy file, or not one to take
    }
  }

  private read(): StoredAuth | undefined {
    let text: string;
    try {
      const mode = statSync(this.file).mode;
      text = readFileSync(this.file, 'utf8');
      // Written 0600; a copy that others can read is still ours to use, but not left open.
      if ((mode & 0o077) !== 0) this.write(JSON.parse(text) as StoredAuth);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      if (error instanceof SyntaxError) return undefined;
      throw new RuneError(
        'IO',
        `cannot read the MCP login of "${this.server}" (${this.file}): ${(error as Error).message}`,
      );
    }
    let parsed: StoredAuth;
    try {
      parsed = JSON.parse(text) as StoredAuth;
    } catch {
      // A damaged file is as good as none: the next login writes a new one.
      return undefined;
    }
    if (parsed.version !== 1 || serverKey(parsed.server_url) !== serverKey(this.serverUrl)) return undefined;
    registerSecrets(parsed);
    return parsed;
  }

  private write(state: StoredAuth): void {
    const dir = authDir(this.env);
    const check = ensurePrivateDir(dir);
    if (!check.ok) throw new RuneError('IO', `cannot keep MCP logins in ${dir}: ${check.reason}`);
    const temporary = `${this.file}.${process.pid}.tmp`;
    const fd = openSync(temporary, 'w', 0o600);
    try {
      writeSync(fd, `${JSON.stringify(state, null, 2)}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, this.file);
    const dirFd = openSync(dir, 'r');
    try {
      fsyncSync(dirFd);
    } finally {
      closeSync(dirFd);
    }
  }

  /**
   * Changes the stored state, starting from what is on disk now: another rune (a second terminal,
   * the notes server) may have refreshed the tokens since this one read them.
   */
  private update(change: (state: StoredAuth) => void): void {
    this.refuseForeign();
    const state: StoredAuth = this.read() ?? { version: 1, server_url: this.serverUrl };
    if (!state.names?.includes(this.server)) state.names = [...(state.names ?? []), this.server];
    change(state);
    registerSecrets(state);
    this.write(state);
    this.state = state;
  }

  /** The file holds another server's login (a digest collision): it is never overwritten. */
  private refuseForeign(): void {
    let text: string;
    try {
      text = readFileSync(this.file, 'utf8');
    } catch {
      return;
    }
    let url: unknown;
    try {
      url = (JSON.parse(text) as Partial<StoredAuth>).server_url;
    } catch {
      return; // damaged: as good as none
    }
    if (typeof url === 'string' && serverKey(url) !== serverKey(this.serverUrl)) {
      throw new RuneError(
        'IO',
        `${this.file} holds the MCP login of ${url}, not of ${this.serverUrl}; it is left as it is`,
      );
    }
  }

  get client(): OAuthClientInformationMixed | undefined {
    return this.state?.client;
  }

  get redirectUri(): string | undefined {
    return this.state?.redirect_uri;
  }

  get tokens(): OAuthTokens | undefined {
    return this.state?.tokens;
  }

  get discovery(): OAuthDiscoveryState | undefined {
    return this.state?.discovery;
  }

  /** Whether the access token has expired (or will within `marginSecs`); unknown expiry counts as valid. */
  expired(marginSecs = 30): boolean {
    const at = this.state?.expires_at;
    return at !== undefined && at - marginSecs <= this.now() / 1000;
  }

  saveClient(client: OAuthClientInformationMixed, redirectUri: string | undefined): void {
    this.update((state) => {
      state.client = client;
      if (redirectUri === undefined) delete state.redirect_uri;
      else state.redirect_uri = redirectUri;
    });
  }

  saveTokens(tokens: OAuthTokens): void {
    this.update((state) => {
      state.tokens = tokens;
      if (tokens.expires_in === undefined) delete state.expires_at;
      else state.expires_at = Math.floor(this.now() / 1000) + Number(tokens.expires_in);
    });
  }

  saveDiscovery(discovery: OAuthDiscoveryState): void {
    this.update((state) => {
      state.discovery = discovery;
    });
  }

  /** Forgets part of the state, as the SDK asks when the server says it is no longer valid. */
  invalidate(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): void {
    if (!this.state || scope === 'verifier') return;
    if (scope === 'tokens') {
      // Refresh tokens rotate: when another rune refreshed first, ours was refused while the file
      // already holds new, valid tokens. Those are taken instead of being thrown away.
      const current = this.read();
      if (current?.tokens && current.tokens.refresh_token !== this.state.tokens?.refresh_token) {
        this.state = current;
        return;
      }
    }
    if (scope === 'all') {
      this.remove();
      return;
    }
    this.update((state) => {
      if (scope === 'client') {
        delete state.client;
        delete state.redirect_uri;
      }
      if (scope === 'tokens') {
        delete state.tokens;
        delete state.expires_at;
      }
      if (scope === 'discovery') delete state.discovery;
    });
  }

  /** Deletes the file. True when there was one. */
  remove(): boolean {
    this.state = undefined;
    let existed = false;
    try {
      statSync(this.file);
      existed = true;
    } catch {
      // Nothing stored.
    }
    try {
      rmSync(this.file, { force: true });
    } catch (error) {
      throw new RuneError('IO', `cannot remove ${this.file}: ${(error as Error).message}`);
    }
    return existed;
  }
}
