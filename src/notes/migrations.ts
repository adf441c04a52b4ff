// The notes database's schema: forward-only numbered migrations, and the function that brings a
// database up to the newest (refusing one a newer rune has already moved past).
import type { SqliteDatabase } from '../core/sqlite.ts';

/** Each entry runs once, in order, inside a transaction; never edit one that has shipped. */
export const MIGRATIONS: readonly string[] = [
  // 1: notes, files, revisions, chat, search, auth, events
  `
  create table notes (
    id integer primary key,
    name text not null,
    public integer not null default 0,
    model text,
    created_at text not null,
    updated_at text not null,
    deleted_at text
  );
  create unique index notes_live_name on notes(name) where deleted_at is null;

  create table files (
    id integer primary key,
    note_id integer not null references notes(id) on delete cascade,
    name text not null,
    public integer not null default 1,
    revision integer not null default 0,
    content text not null default '',
    ydoc blob,
    created_at text not null,
    updated_at text not null,
    updated_by text,
    deleted_at text
  );
  create unique index files_live_name on files(note_id, name) where deleted_at is null;

  create table revisions (
    file_id integer not null references files(id) on delete cascade,
    revision integer not null,
    content text not null,
    author text,
    created_at text not null,
    primary key (file_id, revision)
  ) without rowid;

  create table chat_messages (
    id integer primary key,
    note_id integer not null references notes(id) on delete cascade,
    role text not null,
    author text,
    content text not null,
    run_id text,
    created_at text not null
  );
  create index chat_by_note on chat_messages(note_id, id);

  create virtual table files_fts using fts5(name, content, content='files', content_rowid='id');
  create trigger files_ai after insert on files begin
    insert into files_fts(rowid, name, content) values (new.id, new.name, new.content);
  end;
  create trigger files_ad after delete on files begin
    insert into files_fts(files_fts, rowid, name, content) values ('delete', old.id, old.name, old.content);
  end;
  create trigger files_au after update of name, content on files begin
    insert into files_fts(files_fts, rowid, name, content) values ('delete', old.id, old.name, old.content);
    insert into files_fts(rowid, name, content) values (new.id, new.name, new.content);
  end;

  create virtual table chat_fts using fts5(content, content='chat_messages', content_rowid='id');
  create trigger chat_ai after insert on chat_messages begin
    insert into chat_fts(rowid, content) values (new.id, new.content);
  end;
  create trigger chat_ad after delete on chat_messages begin
    insert into chat_fts(chat_fts, rowid, content) values ('delete', old.id, old.content);
  end;

  create table accounts (
    name text primary key,
    role text not null,
    password_hash text not null,
    created_at text not null
  );
  create table role_overrides (
    subject text primary key,
    role text not null,
    updated_at text not null
  );
  create table sessions (
    id_hash text primary key,
    subject text not null,
    name text not null,
    provider text not null,
    role text not null,
    csrf text not null,
    created_at text not null,
    expires_at text not null
  );
  create table tokens (
    id integer primary key,
    name text not null,
    role text not null,
    hash text not null unique,
    created_by text,
    created_at text not null,
    expires_at text,
    last_used_at text,
    revoked_at text
  );
  create table uploads (
    note_id integer not null references notes(id) on delete cascade,
    hash text not null,
    name text not null,
    type text not null,
    size integer not null,
    created_at text not null,
    primary key (note_id, hash)
  ) without rowid;
  create table events (
    id integer primary key,
    name text not null,
    note_id integer,
    file_id integer,
    data text not null,
    created_at text not null
  );
  create table approvals (
    id text primary key,
    note_id integer not null references notes(id) on delete cascade,
    run_id text not null,
    tool text not null,
    arguments text not null,
    question text not null,
    reason text not null,
    suggestion text,
    status text not null,
    created_at text not null,
    answered_by text,
    answered_at text
  );
  `,
  // Who issued a token, so a token never outlives its issuer's admin rights.
  `alter table tokens add column created_by_subject text;`,
  // 3: who first wrote with each Yjs client id of a file (nobody edits under another's id); whether
  // readers (guests, anonymous) could see an event when it happened (replay never tells them more);
  // what each external login was mapped by, so its role follows the current config.
  `
  create table collab_clients (
    file_id integer not null references files(id) on delete cascade,
    client integer not null,
    subject text not null,
    primary key (file_id, client)
  ) without rowid;
  alter table events add column readers integer not null default 0;
  create table identities (
    subject text primary key,
    identifiers text not null,
    updated_at text not null
  );
  `,
  // 4: durability. Every acknowledged collaborative update is logged until a revision compacts it
  // into files.ydoc; every chat run is recorded while it runs, so a crash shows it as interrupted.
  `
  create table collab_updates (
    id integer primary key,
    file_id integer not null references files(id) on delete cascade,
    data blob not null,
    author text not null,
    created_at text not null
  );
  create index collab_updates_by_file on collab_updates(file_id, id);

  create table chat_runs (
    id text primary key,
    note_id integer not null references notes(id) on delete cascade,
    started_by text not null,
    status text not null,
    partial text not null default '',
    started_at text not null,
    ended_at text
  );
  create index chat_runs_running on chat_runs(status) where status = 'running';
  `,
  // 5: which password a local login's session was opened with (a hash of the account's configured
  // secret), so a new password in the config ends the sessions of the old one.
  `alter table sessions add column credential text;`,
  // 6: what approving a question allows (the grants, JSON) and which answers it takes, and what a
  // refusing admin told the model to do instead (docs/adr/0033-run-outcomes.md).
  `
  alter table approvals add column grants text not null default '[]';
  alter table approvals add column scopes text not null default '["once","session"]';
  alter table approvals add column instead text;
  `,
  // 7: file search by weight (search-index.ts): the words of every live file in rows ordered by how
  // much each word weighs in it (search_all; the publicly visible ones again in search_public), the
  // count of files holding each word, and the totals BM25 needs; triggers queue what changed, the
  // indexer catches up after each commit. files_fts, which ranked every match of a word before the
  // first answer, goes. Anonymous chat search gets an index of public chats (chat_public), kept by
  // triggers, so a visitor's query never scans private messages.
  `
  drop trigger files_ai;
  drop trigger files_ad;
  drop trigger files_au;
  drop table files_fts;

  create table search_pending (file_id integer primary key);
  create table search_pending_notes (note_id integer primary key, after_id integer not null default 0);
  create table search_docs (
    file_id integer primary key,
    rows text not null,
    words text not null,
    length integer not null,
    public integer not null
  );
  create table search_terms (
    term text primary key,
    docs integer not null,
    public_docs integer not null
  ) without rowid;
  create table search_stats (
    id integer primary key check (id = 1),
    docs integer not null,
    length integer not null,
    public_docs integer not null,
    public_length integer not null
  );
  insert into search_stats values (1, 0, 0, 0, 0);
  create virtual table search_all using fts5(words, content = '', contentless_delete = 1, detail = none);
  create virtual table search_public using fts5(words, content = '', contentless_delete = 1, detail = none);

  create trigger search_file_new after insert on files begin
    insert or ignore into search_pending(file_id) values (new.id);
  end;
  create trigger search_file_changed after update of name, content, public, deleted_at, note_id on files begin
    insert or ignore into search_pending(file_id) values (new.id);
  end;
  create trigger search_file_gone after delete on files begin
    insert or ignore into search_pending(file_id) values (old.id);
  end;
  create trigger search_note_changed after update of public, deleted_at on notes begin
    insert or replace into search_pending_notes(note_id, after_id) values (new.id, 0);
  end;
  insert into search_pending(file_id) select id from files;

  create virtual table chat_public using fts5(content, content = '', contentless_delete = 1);
  create trigger chat_public_new after insert on chat_messages
    when new.role <> 'tool' and (select public = 1 and deleted_at is null from notes where id = new.note_id)
  begin
    insert into chat_public(rowid, content) values (new.id, new.content);
  end;
  create trigger chat_public_gone after delete on chat_messages begin
    delete from chat_public where rowid = old.id;
  end;
  create trigger chat_public_note after update of public, deleted_at on notes begin
    delete from chat_public where rowid in (select id from chat_messages where note_id = new.id);
    insert into chat_public(rowid, content)
      select id, content from chat_messages
      where note_id = new.id and role <> 'tool' and new.public = 1 and new.deleted_at is null;
  end;
  insert into chat_public(rowid, content)
    select c.id, c.content from chat_messages c join notes n on n.id = c.note_id
    where c.role <> 'tool' and n.public = 1 and n.deleted_at is null;
  `,
];

export function migrate(db: SqliteDatabase): number {
  db.exec(
    'create table if not exists schema_migrations (version integer primary key, applied_at text not null)',
  );
  const row = db.prepare('select max(version) as v from schema_migrations').get() as { v: number | null };
  const current = row.v ?? 0;
  if (current > MIGRATIONS.length) {
    throw new Error(
      `the notes database is at schema version ${current}, newer than this rune (${MIGRATIONS.length}); use a newer rune`,
    );
  }
  for (let version = current + 1; version <= MIGRATIONS.length; version++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[version - 1]!);
      db.prepare('insert into schema_migrations(version, applied_at) values (?, ?)').run(
        version,
        new Date().toISOString(),
      );
    })();
  }
  return MIGRATIONS.length;
}
