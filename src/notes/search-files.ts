// The file search's query (runs in a worker): BM25 ranking without ranking every match. The index
// (search-index.ts) lists, for each word, the files holding it by how much the word weighs in
// each, heaviest first; visitors' queries read search_public, which holds only what they may see,
// so a word found only in private files costs them nothing. Each term's list (its rarest word's)
// is read in that order (search-lists.ts); each file met is sifted by its word counts (search_docs)
// and, if it may rank, checked (note, visibility, phrases in the file's own text) and scored as
// FTS5's bm25() would. Reading stops when the
// `limit`th best score reaches the most a file not met yet could score (the sum of each list's
// current weight step: Fagin's threshold algorithm), or when a list ends (every file that can
// match was met), so one word or several are ranked exactly (up to ties inside a weight step,
// 1/4096 of the range). A rarest word in at most EXACT_DOCS files is read alone, to its end. The
// search's budget ends the reading early (then the answer says partial).
import type { SqliteDatabase } from '../core/sqlite.ts';
import { type List, readLists, TOP } from './search-lists.ts';
import { countOf, fileOfRow, fold as foldWord, idf, indexKey, weight, words } from './search-tokens.ts';

export interface FileQuery {
  /** Each term: its words in order (a phrase when more than one). */
  terms: Array<{ tokens: string[] }>;
  publicOnly: boolean;
  noteId?: number;
  limit: number;
  /** Characters of each hit's text returned (its start: what a snippet looks at). */
  textChars: number;
  /** performance.now() past which the search stops with what it has. */
  deadline: number;
  now(): number;
}

export interface FileHit {
  id: number;
  note_id: number;
  note: string;
  file: string;
  score: number;
  /** The start of the file's text (FileQuery.textChars), for the snippet. */
  content: string;
}

/** With several words, a rarest word in at most this many files is read to its last: exact. */
export const EXACT_DOCS = 1000;
/**
 * A list's first page: the `limit` best and this many rows more, so that the `limit`th best's weight
 * step usually lies above the last row's and one page settles a single word (over the bench's million
 * files, limit 20: 16 more settled each of 1200 single-word queries in one page; 4 more did not).
 */
const FIRST_PAGE_MORE = 16;
/** A note with at most this many files is searched file by file when the query names it. */
const SMALL_NOTE = 2000;
const BATCH = 64;
/** Sifted files checked at a time once the best are full, and checked beyond those that would fill them. */
const CHECK_BATCH = 8;
const CHECK_SLACK = 4;

/** What the query knows of a file without reading its text (search_docs and the file's row). */
interface Meta {
  id: number;
  note_id: number;
  note: string;
  name: string;
  words: string;
  length: number;
  visible: number;
  live: number;
}

interface Weighed {
  keys: string[];
  folded: string[];
  idf: number;
  /** Its rarest word's index key (for a word, its own). */
  rarest: string;
}

/** Adds how often each phrase of `terms` occurs in `sequence` (its words in a row) to `counts`. */
function countPhrases(sequence: string[], terms: Weighed[], counts: number[]): void {
  for (let i = 0; i < sequence.length; i++) {
    for (let t = 0; t < terms.length; t++) {
      const phrase = terms[t]!.folded;
      if (phrase.length < 2 || sequence[i] !== phrase[0]) continue;
      let j = 1;
      while (j < phrase.length && sequence[i + j] === phrase[j]) j++;
      if (j === phrase.length) counts[t]!++;
    }
  }
}

function prepare(db: SqliteDatabase) {
  return {
    stats: db.prepare(
      'select docs, length, public_docs as publicDocs, public_length as publicLength from search_stats where id = 1',
    ),
    docs: db.prepare('select docs from search_terms where term = ?').pluck(),
    publicDocs: db.prepare('select public_docs from search_terms where term = ?').pluck(),
    meta: db.prepare(
      `select d.file_id as id, f.note_id, n.name as note, f.name, d.words, d.length,
         (f.deleted_at is null and n.deleted_at is null) as live,
         (f.public = 1 and n.public = 1) as visible
       from search_docs d join files f on f.id = d.file_id join notes n on n.id = f.note_id
       where d.file_id in (select value from json_each(?))`,
    ),
    words: db.prepare(
      'select file_id as id, words, length from search_docs where file_id in (select value from json_each(?))',
    ),
    text: db.prepare('select name, content from files where id = ?'),
    starts: db.prepare(
      'select id, substr(content, 1, ?) as content from files where id in (select value from json_each(?))',
    ),
    noteSize: db.prepare('select count(*) from files where note_id = ? and deleted_at is null').pluck(),
    noteFiles: db
      .prepare('select id from files where note_id = ? and deleted_at is null order by id')
      .pluck(),
    all: db
      .prepare(
        'select rowid from search_all where search_all match ? and rowid < ? order by rowid desc limit ?',
      )
      .pluck(),
    public: db
      .prepare(
        'select rowid from search_public where search_public match ? and rowid < ? order by rowid desc limit ?',
      )
      .pluck(),
  };
}

/** Statements per connection (the worker's own, or the server's in tests), compiled once. */
const prepared = new WeakMap<SqliteDatabase, ReturnType<typeof prepare>>();

function statementsOf(db: SqliteDatabase): ReturnType<typeof prepare> {
  let st = prepared.get(db);
  if (!st) {
    st = prepare(db);
    prepared.set(db, st);
  }
  return st;
}

/** The query's terms with their weights (BM25's idf), and its rarest word. */
function weigh(st: ReturnType<typeof prepare>, query: FileQuery) {
  const stats = st.stats.get() as { docs: number; length: number; publicDocs: number; publicLength: number };
  const docs = query.publicOnly ? stats.publicDocs : stats.docs;
  const avgLength = (query.publicOnly ? stats.publicLength : stats.length) / Math.max(docs, 1);
  const dfOf = query.publicOnly ? st.publicDocs : st.docs;
  const df = new Map<string, number>();
  for (const term of query.terms) {
    for (const token of term.tokens) {
      const key = indexKey(foldWord(token));
      if (!df.has(key)) df.set(key, (dfOf.get(key) as number | undefined) ?? 0);
    }
  }
  const terms: Weighed[] = query.terms.map((term) => {
    const folded = term.tokens.map(foldWord);
    const keys = folded.map(indexKey);
    // A phrase is in at most as many files as its rarest word.
    const rarest = keys.reduce((a, b) => ((df.get(b) ?? 0) < (df.get(a) ?? 0) ? b : a));
    return { keys, folded, rarest, idf: idf(docs, df.get(rarest) ?? 0) };
  });
  const [driver, driverDocs] = [...df.entries()].reduce((a, b) => (b[1] < a[1] ? b : a));
  return { terms, avgLength, driver, driverDocs };
}

export function searchFiles(db: SqliteDatabase, query: FileQuery): { hits: FileHit[]; partial: boolean } {
  const st = statementsOf(db);
  const { terms, avgLength, driver, driverDocs } = weigh(st, query);
  if (driverDocs <= 0) return { hits: [], partial: false };
  const phrases = terms.some((t) => t.keys.length > 1);

  const best: Array<Omit<FileHit, 'content'>> = [];
  const consider = (file: Meta): void => {
    if (file.live !== 1 || (query.publicOnly && file.visible !== 1)) return;
    if (query.noteId !== undefined && file.note_id !== query.noteId) return;
    const tf = terms.map((t) => Math.min(...t.keys.map((k) => countOf(file.words, k))));
    if (tf.some((n) => n === 0)) return;
    if (phrases) {
      // The words are all there; whether they stand in a row only the text says.
      const row = st.text.get(file.id) as { name: string; content: string } | undefined;
      if (!row) return;
      const found = terms.map(() => 0);
      countPhrases(words(row.name), terms, found);
      countPhrases(words(row.content), terms, found);
      for (let t = 0; t < terms.length; t++) if (terms[t]!.keys.length > 1) tf[t] = found[t]!;
      if (tf.some((n) => n === 0)) return;
    }
    let score = 0;
    for (let t = 0; t < terms.length; t++) score += terms[t]!.idf * weight(tf[t]!, file.length, avgLength);
    if (best.length >= query.limit && score <= best.at(-1)!.score) return;
    best.push({ id: file.id, note_id: file.note_id, note: file.note, file: file.name, score });
    best.sort((a, b) => b.score - a.score);
    if (best.length > query.limit) best.pop();
  };
  const check = (ids: number[]) => {
    for (const meta of st.meta.all(JSON.stringify(ids)) as Meta[]) consider(meta);
  };
  const kth = () => (best.length >= query.limit ? best.at(-1)!.score : Number.NEGATIVE_INFINITY);
  // Files met in the lists: first scored by their word counts alone (one table; a phrase's count is
  // at most its words', so its score at most that), then checked as check() does, best first and
  // only while they may still rank: most of a page's files never need the three-table lookup.
  const sift = (ids: number[]) => {
    const kept: Array<{ id: number; score: number }> = [];
    for (const doc of st.words.all(JSON.stringify(ids)) as Array<{
      id: number;
      words: string;
      length: number;
    }>) {
      let score = 0;
      for (const term of terms) {
        const tf = Math.min(...term.keys.map((k) => countOf(doc.words, k)));
        if (tf === 0) {
          score = Number.NEGATIVE_INFINITY;
          break;
        }
        score += term.idf * weight(tf, doc.length, avgLength);
      }
      if (score > kth()) kept.push({ id: doc.id, score });
    }
    kept.sort((a, b) => b.score - a.score);
    for (let at = 0; at < kept.length && kept[at]!.score > kth(); ) {
      // As many as would fill the best (a few more: some may fail the check), at least CHECK_BATCH.
      const size = Math.max(query.limit - best.length + CHECK_SLACK, CHECK_BATCH);
      const batch: number[] = [];
      for (; at < kept.length && batch.length < size && kept[at]!.score > kth(); at++)
        batch.push(kept[at]!.id);
      check(batch);
    }
  };
  const answer = (partial: boolean) => {
    const starts = new Map<number, string>();
    const rows = st.starts.all(query.textChars, JSON.stringify(best.map((hit) => hit.id)));
    for (const row of rows as Array<{ id: number; content: string }>) starts.set(row.id, row.content);
    return { partial, hits: best.map((hit) => ({ ...hit, content: starts.get(hit.id) ?? '' })) };
  };

  if (query.noteId !== undefined && (st.noteSize.get(query.noteId) as number) <= SMALL_NOTE) {
    const ids = st.noteFiles.all(query.noteId) as number[];
    for (let at = 0; at < ids.length; at += BATCH) {
      if (query.now() > query.deadline) return answer(true);
      check(ids.slice(at, at + BATCH));
    }
    return answer(false);
  }

  // Each term's list (its rarest word's index rows), heaviest first (search-lists.ts).
  const page = query.publicOnly ? st.public : st.all;
  const partial = readLists({
    lists: listsOf(terms, driver, driverDocs, query.limit + FIRST_PAGE_MORE),
    read: (key, below, size) => page.all(`"${key}"`, below, size) as number[],
    fileOf: fileOfRow,
    check: sift,
    kth: () => (best.length >= query.limit ? best.at(-1)!.score : undefined),
    late: () => query.now() > query.deadline,
  });
  return answer(partial);
}

/**
 * The lists a query reads: one word, its own; a rarest word in at most EXACT_DOCS files, that one
 * alone (read to its end); else each term's rarest word (a phrase weighs at most what its rarest
 * word does in a file, and a word twice in the query is read once, with both terms' idf).
 */
function listsOf(terms: Weighed[], driver: string, driverDocs: number, firstPage: number): List[] {
  // Several words, the rarest in few files: read to its end (no bound stops it).
  if (terms.length > 1 && driverDocs <= EXACT_DOCS) {
    return [{ key: driver, idf: Number.POSITIVE_INFINITY, below: TOP, size: EXACT_DOCS }];
  }
  const byKey = new Map<string, List>();
  for (const term of terms) {
    const list = byKey.get(term.rarest);
    if (list) list.idf += term.idf;
    else byKey.set(term.rarest, { key: term.rarest, idf: term.idf, below: TOP, size: firstPage });
  }
  return [...byKey.values()];
}
