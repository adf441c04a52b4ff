import { describe, expect, it } from 'vitest';
import { openDatabase, type SqliteDatabase } from '../core/sqlite.ts';
import { MIGRATIONS, migrate } from './migrations.ts';

/** A database a rune of schema version `version` left behind. */
function databaseAt(version: number): SqliteDatabase {
  const db = openDatabase(':memory:');
  db.exec('create table schema_migrations (version integer primary key, applied_at text not null)');
  for (let v = 1; v <= version; v++) {
    db.exec(MIGRATIONS[v - 1]!);
    db.prepare('insert into schema_migrations(version, applied_at) values (?, ?)').run(v, 'then');
  }
  return db;
}

const schemaOf = (db: SqliteDatabase) =>
  db.prepare("select type, name, sql from sqlite_master where name not like 'sqlite_%' order by name").all();
const versionsOf = (db: SqliteDatabase) =>
  (
    db.prepare('select version from schema_migrations order by version').all() as Array<{ version: number }>
  ).map((r) => r.version);

describe('migrate', () => {
  const all = MIGRATIONS.map((_, i) => i + 1);

  it('brings a new database to the newest version, each migration once', () => {
    const db = openDatabase(':memory:');
    expect(migrate(db)).toBe(MIGRATIONS.length);
    expect(versionsOf(db)).toEqual(all);
    const schema = schemaOf(db);
    expect(migrate(db)).toBe(MIGRATIONS.length);
    expect(versionsOf(db)).toEqual(all);
    expect(schemaOf(db)).toEqual(schema);
  });

  // From every version a shipped rune may have left: the same schema as a new database's.
  it.each(all.map((v) => [v - 1]))('from version %i', (version) => {
    const fresh = openDatabase(':memory:');
    migrate(fresh);
    const old = databaseAt(version);
    expect(migrate(old)).toBe(MIGRATIONS.length);
    expect(versionsOf(old)).toEqual(all);
    expect(schemaOf(old)).toEqual(schemaOf(fresh));
  });

  it('refuses a database a newer rune has moved past, and leaves it alone', () => {
    const db = databaseAt(MIGRATIONS.length);
    db.prepare('insert into schema_migrations(version, applied_at) values (?, ?)').run(
      MIGRATIONS.length + 1,
      'x',
    );
    expect(() => migrate(db)).toThrow(
      `the notes database is at schema version ${MIGRATIONS.length + 1}, newer than this rune (${MIGRATIONS.length}); use a newer rune`,
    );
    expect(versionsOf(db)).toEqual([...all, MIGRATIONS.length + 1]);
  });
});
