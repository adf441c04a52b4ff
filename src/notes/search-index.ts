// Keeps the file search's index (migration 7) in step with the files, on the server's connection:
// triggers queue every file whose name, text, visibility or note changed (search_pending, and whole
// notes in search_pending_notes), and this indexer works through the queue after commits in short
// slices, so the event loop is never held for long. For each file it stores, per word, a row in
// search_all (and in search_public while anyone may see the file) whose id puts the word's BM25
// weight in the file above the file id: the query reads a word's heaviest files first and stops.
// It keeps the count of files holding each word and the totals BM25 needs (search_terms,
// search_stats) exact, so the query needs no scan to weigh a word.
import type { Logger } from '../core/logger.ts';
import type { SqliteDatabase } from '../core/sqlite.ts';
import { bucketOf, decodeCounts, encodeCounts, indexKey, rowId, weight, words } from './search-tokens.ts';

/**
 * Time one slice of indexing may take before the event loop gets its turn: short after a few saves;
 * longer through a large backlog (a first start over many files, a big note made public), where each
 * transaction's cost (FTS5 writes a segment per commit) would otherwise make it many times slower.
 */
const SLICE_MS = 8;
const BULK_SLICE_MS = 100;
const BULK_BACKLOG = 2000;
/** A queue this short is indexed before a search runs, within this time. */
const CATCH_UP_FILES = 64;
const CATCH_UP_MS = 20;
/** Files taken from the queue per transaction (each transaction is also bounded by time). */
const PENDING_BATCH = 4000;
/** Files queued by a note's change, moved to the file queue at a time. */
const NOTE_BATCH = 500;
/** A backlog this large is reported when it is done (a first start over many files, a bench). */
const REPORTED_BACKLOG = 1000;

interface FileRow {
  id: number;
  name: string;
  content: string;
  visible: number;
  live: number;
}

/** What one slice of indexing changes, written at its end. */
interface Slice {
  rows: Row[];
  /** Per word: the change of its count of files, and of public files. */
  terms: Map<string, [number, number]>;
  docs: number;
  length: number;
  publicDocs: number;
  publicLength: number;
}

/** An index row to add: its id (weight bucket and file), the words, and whether visitors see it. */
interface Row {
  row: number;
  text: string;
  visible: number;
}

interface DocRow {
  rows: string;
  words: string;
  length: number;
  public: number;
}

export class SearchIndexer {
  private scheduled = false;
  private closed = false;
  private backlog = 0;
  private readonly statements;

  constructor(
    private readonly db: SqliteDatabase,
    private readonly logger: Logger,
  ) {
    this.statements = {
      pending: db.prepare('select file_id from search_pending order by file_id limit ?').pluck(),
      done: db.prepare('delete from search_pending where file_id = ?'),
      count: db.prepare('select count(*) from search_pending').pluck(),
      few: db.prepare(`select 1 from search_pending limit 1 offset ${CATCH_UP_FILES}`).pluck(),
      bulk: db.prepare(`select 1 from search_pending limit 1 offset ${BULK_BACKLOG}`).pluck(),
      note: db.prepare('select note_id, after_id from search_pending_notes limit 1'),
      noteFiles: db.prepare('select id from files where note_id = ? and id > ? order by id limit ?').pluck(),
      queue: db.prepare('insert or ignore into search_pending(file_id) values (?)'),
      noteAfter: db.prepare('update search_pending_notes set after_id = ? where note_id = ?'),
      noteDone: db.prepare('delete from search_pending_notes where note_id = ? and after_id = ?'),
      file: db.prepare(
        `select f.id, f.name, f.content,
           (f.deleted_at is null and n.deleted_at is null) as live,
           (f.public = 1 and n.public = 1 and f.deleted_at is null and n.deleted_at is null) as visible
         from files f join notes n on n.id = f.note_id where f.id = ?`,
      ),
      doc: db.prepare('select rows, words, length, public from search_docs where file_id = ?'),
      dropDoc: db.prepare('delete from search_docs where file_id = ?'),
      putDoc: db.prepare(
        'insert into search_docs(file_id, rows, words, length, public) values (?, ?, ?, ?, ?)',
      ),
      removeAll: db.prepare('delete from search_all where rowid = ?'),
      removePublic: db.prepare('delete from search_public where rowid = ?'),
      addAll: db.prepare('insert into search_all(rowid, words) values (?, ?)'),
      addPublic: db.prepare('insert into search_public(rowid, words) values (?, ?)'),
      term: db.prepare(
        `insert into search_terms(term, docs, public_docs) values (?, ?, ?)
         on conflict(term) do update set docs = docs + excluded.docs, public_docs = public_docs + excluded.public_docs`,
      ),
      dropTerm: db.prepare('delete from search_terms where term = ? and docs <= 0'),
      stats: db.prepare('select docs, length from search_stats where id = 1'),
      addStats: db.prepare(
        'update search_stats set docs = docs + ?, length = length + ?, public_docs = public_docs + ?, public_length = public_length + ? where id = 1',
      ),
    };
  }

  /** Something may be queued: the indexer runs in a coming turn of the event loop. */
  kick(): void {
    if (this.scheduled || this.closed) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      // The connection may have been closed meanwhile (a server abandoned as a crash would be).
      if (this.closed || !this.db.open) return;
      this.run(this.statements.bulk.get() === undefined ? SLICE_MS : BULK_SLICE_MS);
    });
  }

  /**
   * Works through the queue for up to `budgetMs` (then goes on in a later turn); returns whether
   * the queue is empty. Searches call it with a small budget first, so what was just saved is found.
   */
  run(budgetMs: number): boolean {
    if (this.closed || !this.db.open) return true;
    const until = performance.now() + budgetMs;
    let empty = false;
    try {
      do {
        if (this.expandNote()) continue;
        const ids = this.statements.pending.all(PENDING_BATCH) as number[];
        if (ids.length === 0) {
          empty = true;
          break;
        }
        this.backlog += this.db.transaction(() => this.indexSome(ids, until))();
      } while (performance.now() < until);
    } catch (error) {
      // The queue stays as it was (the transaction rolled back): tried again at the next change.
      this.logger.error('notes.search_index_failed', { message: (error as Error).message });
      return false;
    }
    if (!empty) this.kick();
    else if (this.backlog >= REPORTED_BACKLOG) {
      this.logger.info('notes.search_indexed', {
        message: `rune notes: search index up to date (${this.backlog} file(s) indexed)`,
      });
      this.backlog = 0;
    } else this.backlog = 0;
    return empty;
  }

  /** How many files wait to be indexed (the notes whose visibility changed not counted). */
  waiting(): number {
    return this.statements.count.get() as number;
  }

  /** Indexes what waits now when that is little (a few saves), so a search finds it. */
  catchUp(): void {
    if (this.statements.few.get() === undefined) this.run(CATCH_UP_MS);
  }

  close(): void {
    this.closed = true;
  }

  /** Moves a batch of a changed note's files to the file queue; false when no note waits. */
  private expandNote(): boolean {
    const note = this.statements.note.get() as { note_id: number; after_id: number } | undefined;
    if (!note) return false;
    this.db.transaction(() => {
      const ids = this.statements.noteFiles.all(note.note_id, note.after_id, NOTE_BATCH) as number[];
      for (const id of ids) this.statements.queue.run(id);
      if (ids.length === NOTE_BATCH) this.statements.noteAfter.run(ids.at(-1), note.note_id);
      else this.statements.noteDone.run(note.note_id, note.after_id);
    })();
    return true;
  }

  /**
   * Indexes files of `ids` until `until` (at least one), in one transaction; returns how many. The
   * word counts change once per word and slice; new rows go in by ascending row id (FTS5 flushes
   * its pending terms whenever a row id goes down).
   */
  private indexSome(ids: number[], until: number): number {
    const s = this.statements;
    const slice: Slice = { rows: [], terms: new Map(), docs: 0, length: 0, publicDocs: 0, publicLength: 0 };
    const stats = s.stats.get() as { docs: number; length: number };
    let done = 0;
    for (const id of ids) {
      this.index(id, slice, stats);
      s.done.run(id);
      done++;
      if (performance.now() >= until) break;
    }
    for (const [key, [docs, publicDocs]] of slice.terms) {
      if (docs === 0 && publicDocs === 0) continue;
      s.term.run(key, docs, publicDocs);
      if (docs < 0) s.dropTerm.run(key);
    }
    s.addStats.run(slice.docs, slice.length, slice.publicDocs, slice.publicLength);
    slice.rows.sort((a, b) => a.row - b.row);
    for (const { row, text, visible } of slice.rows) {
      s.addAll.run(row, text);
      if (visible) s.addPublic.run(row, text);
    }
    return done;
  }

  /**
   * Brings one file's record in line with the file as it is now; what changes in the word counts,
   * the totals and the index rows is added to `slice`.
   */
  private index(id: number, slice: Slice, stats: { docs: number; length: number }): void {
    const s = this.statements;
    const old = s.doc.get(id) as DocRow | undefined;
    const file = s.file.get(id) as FileRow | undefined;
    const before = old ? decodeCounts(old.words) : new Map<string, number>();
    const count = (key: string, docs: number, publicDocs: number) => {
      const entry = slice.terms.get(key);
      if (entry) {
        entry[0] += docs;
        entry[1] += publicDocs;
      } else slice.terms.set(key, [docs, publicDocs]);
    };
    if (old) {
      for (const row of JSON.parse(old.rows) as number[]) {
        s.removeAll.run(row);
        if (old.public) s.removePublic.run(row);
      }
      s.dropDoc.run(id);
      slice.docs--;
      slice.length -= old.length;
      slice.publicDocs -= old.public;
      slice.publicLength -= old.length * old.public;
    }
    const visible = file?.visible === 1 ? 1 : 0;
    const after = new Map<string, number>();
    let length = 0;
    if (file?.live === 1 && id < 2 ** 32) {
      for (const text of [file.name, file.content]) {
        for (const word of words(text)) {
          const key = indexKey(word);
          after.set(key, (after.get(key) ?? 0) + 1);
          length++;
        }
      }
    }
    // Word counts change by the difference: a small edit of a large file touches few words.
    const wasPublic = old?.public ?? 0;
    for (const key of before.keys()) {
      if (!after.has(key)) count(key, -1, -wasPublic);
      else if (wasPublic !== visible) count(key, 0, visible - wasPublic);
    }
    for (const key of after.keys()) if (!before.has(key)) count(key, 1, visible);
    if (after.size === 0) return;
    const avgLength = (stats.length + slice.length + length) / Math.max(1, stats.docs + slice.docs + 1);
    const byBucket = new Map<number, string[]>();
    for (const [key, tf] of after) {
      const bucket = bucketOf(weight(tf, length, avgLength));
      const list = byBucket.get(bucket);
      if (list) list.push(key);
      else byBucket.set(bucket, [key]);
    }
    const rows: number[] = [];
    for (const [bucket, keys] of byBucket) {
      const row = rowId(bucket, id);
      rows.push(row);
      slice.rows.push({ row, text: keys.join(' '), visible });
    }
    s.putDoc.run(id, JSON.stringify(rows), encodeCounts(after), length, visible);
    slice.docs++;
    slice.length += length;
    slice.publicDocs += visible;
    slice.publicLength += length * visible;
  }
}
