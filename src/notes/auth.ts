// Who is asking and what they may do: sessions, bearer tokens and the role of every principal
// (roles.ts), resolved again on each use from the configuration as it is now (local accounts:
// local-accounts.ts), so a demotion, a revoked token or an account removed from rune.toml takes
// effect at once.
import { createHash, randomBytes } from 'node:crypto';
import type { NotesConfig } from '../config/schema.ts';
import type { Logger } from '../core/logger.ts';
import { registerSecret } from '../core/redact.ts';
import type { Store } from './db.ts';
import { configAccounts, type LocalAccount } from './local-accounts.ts';
import { hashPassword, isScryptHash, passwordKey, scryptedSecret, verifyPassword } from './passwords.ts';
import { atLeast, mapRole, type Principal, type Role } from './roles.ts';
import { TokenUse } from './token-use.ts';

function parseIdentifiers(json: string | null): string[] | null {
  if (!json) return null;
  try {
    const value = JSON.parse(json) as unknown;
    return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : null;
  } catch {
    return null;
  }
}

const SESSION_DAYS = 14;

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

export interface SessionRow {
  id_hash: string;
  subject: string;
  name: string;
  provider: string;
  role: Role;
  csrf: string;
  created_at: string;
  expires_at: string;
  /** Local logins: which password the session was opened with (see credentialOf). */
  credential: string | null;
}

export interface TokenRow {
  id: number;
  name: string;
  role: Role;
  created_by: string | null;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  revoked_at: string | null;
}

/** What a new session is for. */
export interface SessionSubject {
  subject: string;
  name: string;
  provider: string;
  role: Role;
}

/**
 * Resolves principals against the configuration currently loaded (`reload` swaps it). `epoch`
 * grows whenever a role, session, token or the configuration changes, so long-lived event streams
 * know when to look their principal up again.
 */
export class Auth {
  epoch = 0;
  accounts: Map<string, LocalAccount>;
  private notes: NotesConfig;
  private readonly store: Store;
  private readonly logger: Logger;
  private readonly tokenUse: TokenUse;
  /** Per account as loaded: the mark its sessions carry (see credentialOf). */
  private readonly credentials = new WeakMap<LocalAccount, string>();

  constructor(store: Store, notes: NotesConfig, logger: Logger) {
    this.store = store;
    this.logger = logger;
    this.notes = notes;
    this.tokenUse = new TokenUse(store);
    this.accounts = this.loadAccounts(notes);
  }

  /** Whether the configuration names any way in: local accounts or a login provider. */
  private static configuresLogins(notes: NotesConfig): boolean {
    const local = notes.local;
    return (
      (local?.admins?.length ?? 0) + (local?.users?.length ?? 0) + (local?.guests?.length ?? 0) > 0 ||
      (notes.oauth?.length ?? 0) > 0 ||
      notes.github !== undefined
    );
  }

  /**
   * The accounts of the config; the admin generated at a first start counts only while the config
   * still names no way in, so it never lingers as a second door once logins are configured.
   */
  private loadAccounts(notes: NotesConfig): Map<string, LocalAccount> {
    const accounts = configAccounts(notes, this.logger);
    if (Auth.configuresLogins(notes)) return accounts;
    for (const row of this.store.db.prepare('select name, role, password_hash from accounts').all() as Array<{
      name: string;
      role: Role;
      password_hash: string;
    }>) {
      if (!accounts.has(row.name)) {
        accounts.set(row.name, {
          name: row.name,
          role: row.role,
          secret: row.password_hash,
          source: 'generated',
        });
      }
    }
    return accounts;
  }

  /**
   * Takes a new configuration (SIGHUP): accounts and login providers as it says. Every session and
   * token is resolved against it from the next request on; open event streams are rechecked by the
   * caller. Returns the number of sessions that ended.
   */
  reload(notes: NotesConfig): number {
    this.notes = notes;
    this.accounts = this.loadAccounts(notes);
    this.epoch++;
    return this.prune();
  }

  /** Deletes sessions that no longer resolve (account or provider removed, expired). */
  prune(): number {
    let ended = 0;
    for (const row of this.store.db.prepare('select id_hash from sessions').all() as Array<{
      id_hash: string;
    }>) {
      if (!this.fromSessionHash(row.id_hash)) {
        this.store.db.prepare('delete from sessions where id_hash = ?').run(row.id_hash);
        ended++;
      }
    }
    if (ended > 0) this.epoch++;
    return ended;
  }

  /** Creates the first admin when nothing else lets anyone in; returns its password once. */
  async ensureAdmin(hasExternalLogin: boolean): Promise<{ name: string; password: string } | null> {
    if (this.accounts.size > 0 || hasExternalLogin) return null;
    const password = randomToken(18);
    const hash = await hashPassword(password);
    this.store.db
      .prepare('insert into accounts(name, role, password_hash, created_at) values (?, ?, ?, ?)')
      .run('admin', 'admin', hash, this.store.stamp());
    this.accounts.set('admin', { name: 'admin', role: 'admin', secret: hash, source: 'generated' });
    return { name: 'admin', password };
  }

  /**
   * The local account named exactly `name` now, without hashing anything: the login limits use it
   * to keep real accounts' counts apart from made-up names (a Map lookup tells no timing).
   */
  localAccount(name: string): LocalAccount | undefined {
    return this.accounts.get(name);
  }

  async checkLocal(name: string, password: string): Promise<LocalAccount | null> {
    const account = this.accounts.get(name);
    // One scrypt for every attempt, so timing does not tell which names exist: an unknown name and
    // an account kept as plain text (whose own check takes microseconds) pay it on a dummy hash.
    const hashed = await verifyPassword(password, scryptedSecret(account));
    if (!account) return null;
    if (!isScryptHash(account.secret))
      return (await verifyPassword(password, account.secret)) ? account : null;
    return hashed ? account : null;
  }

  /**
   * The role a subject has now, or null when the configuration no longer lets it in. Only a
   * subject the config still admits can have an admin's override, which then wins over the role
   * the config gives. External logins are mapped again through their provider's current lists,
   * by the identifiers recorded at their last login.
   */
  roleOf(subject: string): Role | null {
    if (!this.configuredRole(subject)) return null;
    const override = this.store.db
      .prepare('select role from role_overrides where subject = ?')
      .get(subject) as { role: Role } | undefined;
    return override ? override.role : this.configuredRole(subject);
  }

  private configuredRole(subject: string): Role | null {
    if (subject.startsWith('local:')) return this.accounts.get(subject.slice('local:'.length))?.role ?? null;
    let lists: Parameters<typeof mapRole>[0] | undefined;
    if (subject.startsWith('github:')) lists = this.notes.github;
    else {
      const oauth = /^oauth:([^:]+):/.exec(subject);
      if (oauth) lists = (this.notes.oauth ?? []).find((p) => p.name === oauth[1]);
    }
    if (!lists) return null;
    const identifiers = this.identifiers(subject);
    return identifiers ? mapRole(lists, identifiers) : null;
  }

  private identifiers(subject: string): string[] | null {
    const row = this.store.db.prepare('select identifiers from identities where subject = ?').get(subject) as
      | { identifiers: string }
      | undefined;
    return row ? parseIdentifiers(row.identifiers) : null;
  }

  /** Records what an external login was mapped by (its subject, verified email, user name). */
  recordIdentity(subject: string, identifiers: string[]): void {
    this.store.db
      .prepare(
        'insert into identities(subject, identifiers, updated_at) values (?, ?, ?) on conflict(subject) do update set identifiers = excluded.identifiers, updated_at = excluded.updated_at',
      )
      .run(subject, JSON.stringify(identifiers), this.store.stamp());
    this.epoch++;
  }

  setRole(subject: string, role: Role): void {
    this.store.db
      .prepare(
        'insert into role_overrides(subject, role, updated_at) values (?, ?, ?) on conflict(subject) do update set role = excluded.role, updated_at = excluded.updated_at',
      )
      .run(subject, role, this.store.stamp());
    this.epoch++;
  }

  createSession(p: SessionSubject): {
    id: string;
    csrf: string;
  } {
    const id = randomToken();
    const csrf = randomToken();
    const now = new Date(this.store.stamp());
    const expires = new Date(now.getTime() + SESSION_DAYS * 86_400_000);
    const account = p.subject.startsWith('local:') ? this.accounts.get(p.subject.slice(6)) : undefined;
    this.store.db
      .prepare(
        'insert into sessions(id_hash, subject, name, provider, role, csrf, created_at, expires_at, credential) values (?, ?, ?, ?, ?, ?, ?, ?, ?)',
      )
      .run(
        sha256(id),
        p.subject,
        p.name,
        p.provider,
        p.role,
        csrf,
        now.toISOString(),
        expires.toISOString(),
        account ? this.credentialOf(account) : null,
      );
    return { id, csrf };
  }

  /**
   * Names the password a local session was opened with, computed once per account: a hash of its
   * scrypt hash, or, for a plain password the config warns about, scrypt of it (a fast hash in the
   * database would let a copy of notes.db be searched for the password at the speed of SHA-256).
   */
  private credentialOf(account: LocalAccount): string {
    let mark = this.credentials.get(account);
    if (mark === undefined) {
      const context = `rune notes session\0${account.name}`;
      const secret = isScryptHash(account.secret) ? account.secret : passwordKey(account.secret, context);
      mark = createHash('sha256').update(`${context}\0${secret}`).digest('base64url').slice(0, 22);
      this.credentials.set(account, mark);
    }
    return mark;
  }

  endSession(idHash: string): void {
    this.store.db.prepare('delete from sessions where id_hash = ?').run(idHash);
    this.epoch++;
  }

  fromSession(cookie: string): Principal | null {
    return this.fromSessionHash(sha256(cookie));
  }

  fromSessionHash(idHash: string): Principal | null {
    const row = this.store.db.prepare('select * from sessions where id_hash = ?').get(idHash) as
      | SessionRow
      | undefined;
    if (!row) return null;
    if (row.expires_at < this.store.stamp()) {
      this.endSession(idHash);
      return null;
    }
    const role = this.roleOf(row.subject);
    if (!role) return null;
    if (row.subject.startsWith('local:')) {
      // Opened with a password the config no longer holds (changed, or the account made anew).
      const account = this.accounts.get(row.subject.slice(6));
      if (!account || row.credential !== this.credentialOf(account)) return null;
    }
    return {
      subject: row.subject,
      name: row.name,
      provider: row.provider,
      role,
      sessionHash: row.id_hash,
      csrf: row.csrf,
    };
  }

  createToken(
    name: string,
    role: Role,
    createdBy: string,
    expiresInDays?: number,
    createdBySubject?: string,
  ): { token: string; row: TokenRow } {
    const token = `rune_${randomToken()}`;
    registerSecret(token);
    const at = this.store.stamp();
    const expires = expiresInDays
      ? new Date(Date.parse(at) + expiresInDays * 86_400_000).toISOString()
      : null;
    const info = this.store.db
      .prepare(
        'insert into tokens(name, role, hash, created_by, created_at, expires_at, created_by_subject) values (?, ?, ?, ?, ?, ?, ?)',
      )
      .run(name, role, sha256(token), createdBy, at, expires, createdBySubject ?? null);
    return { token, row: this.tokenById(Number(info.lastInsertRowid))! };
  }

  tokenById(id: number): TokenRow | undefined {
    const row = this.store.db
      .prepare(
        'select id, name, role, created_by, created_at, expires_at, last_used_at, revoked_at from tokens where id = ?',
      )
      .get(id) as TokenRow | undefined;
    return row && this.tokenUse.withLastUse(row);
  }

  listTokens(): TokenRow[] {
    return (
      this.store.db
        .prepare(
          'select id, name, role, created_by, created_at, expires_at, last_used_at, revoked_at from tokens where revoked_at is null order by id',
        )
        .all() as TokenRow[]
    ).map((row) => this.tokenUse.withLastUse(row));
  }

  /** Writes the token uses kept in memory (at shutdown). */
  flushLastUse(): void {
    this.tokenUse.flush();
  }

  revokeToken(id: number): boolean {
    const info = this.store.db
      .prepare('update tokens set revoked_at = ? where id = ? and revoked_at is null')
      .run(this.store.stamp(), id);
    this.epoch++;
    return info.changes > 0;
  }

  /**
   * A token's role now: its own, capped by what its issuer may still do. An admin who is demoted
   * or removed from the config takes the tokens they issued down with them. Null when unusable.
   */
  private tokenRole(
    row: {
      role: Role;
      expires_at: string | null;
      revoked_at: string | null;
      created_by_subject: string | null;
    },
    depth = 0,
  ): Role | null {
    if (row.revoked_at || (row.expires_at && row.expires_at < this.store.stamp())) return null;
    const issuer = row.created_by_subject;
    if (!issuer) return row.role;
    let issuerRole: Role | null;
    const byToken = /^token:(\d+)$/.exec(issuer);
    if (byToken) {
      const parent = depth < 8 ? this.tokenRowById(Number(byToken[1])) : undefined;
      issuerRole = parent ? this.tokenRole(parent, depth + 1) : null;
    } else {
      issuerRole = this.roleOf(issuer);
    }
    if (!issuerRole || !atLeast(issuerRole, 'admin')) return null;
    return row.role;
  }

  private tokenRowById(id: number) {
    return this.store.db
      .prepare('select id, name, role, expires_at, revoked_at, created_by_subject from tokens where id = ?')
      .get(id) as
      | {
          id: number;
          name: string;
          role: Role;
          expires_at: string | null;
          revoked_at: string | null;
          created_by_subject: string | null;
        }
      | undefined;
  }

  fromToken(token: string): Principal | null {
    const row = this.store.db
      .prepare('select id, name, role, expires_at, revoked_at, created_by_subject from tokens where hash = ?')
      .get(sha256(token)) as ReturnType<Auth['tokenRowById']>;
    if (!row) return null;
    const role = this.tokenRole(row);
    if (!role) return null;
    this.tokenUse.note(row.id);
    return { subject: `token:${row.id}`, name: row.name, provider: 'token', role, tokenId: row.id };
  }

  /** Looks a principal up again (for event streams): null when its session or token is gone. */
  refresh(p: Principal): Principal | null {
    if (p.sessionHash) return this.fromSessionHash(p.sessionHash);
    if (p.tokenId !== undefined) {
      const row = this.tokenRowById(p.tokenId);
      const role = row ? this.tokenRole(row) : null;
      return role ? { ...p, role } : null;
    }
    return p;
  }
}
