// better-sqlite3 with the addon embedded in the binary: the loaded binding is handed over through
// the `nativeBinding` option, since require() inside a SEA cannot find .node files.
import Database from 'better-sqlite3';
import { devAssetDir, isSea } from './assets.ts';
import { loadNative } from './native.ts';

export const SQLITE_ASSET = 'native/better_sqlite3.node';

export type SqliteDatabase = Database.Database;

export function openDatabase(file: string, options: Database.Options = {}): SqliteDatabase {
  if (isSea() || devAssetDir()) {
    return new Database(file, { ...options, nativeBinding: loadNative<object>(SQLITE_ASSET) as never });
  }
  return new Database(file, options);
}

export interface SqliteInfo {
  version: string;
  fts5: boolean;
}

export function sqliteInfo(db: SqliteDatabase): SqliteInfo {
  const { version } = db.prepare('select sqlite_version() as version').get() as { version: string };
  let fts5 = true;
  try {
    db.exec('create virtual table temp.rune_fts5_probe using fts5(x); drop table temp.rune_fts5_probe;');
  } catch {
    fts5 = false;
  }
  return { version, fts5 };
}
