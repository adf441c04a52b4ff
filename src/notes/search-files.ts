// The file search's query (runs in a worker): BM25 ranking without ranking every match. The index
// (search-index.ts) lists, for each word, the files holding it by how much the word weighs in
// each, heaviest first; visitors' queries read search_public, which holds only what they may see,
// so a word found only in private files costs them nothing. The query takes its rarest word's
// files in that order, checks each against every word (its counts in search_docs) and phrase (in
// the file's own text), and scores it as FTS5's bm25() would. One word: its files come in the
// order of their scores, so the first `limit` the caller may see are the best (exact, up to ties
// inside a weight step, 1/4096 of the range). Several words: a rarest word
// in at most EXACT_DOCS files is read to its end (exact); a commoner one until the best `limit`
// are found and AFTER_FOUND more files were checked: the best among the files where the rarest
// word weighs most (documented in docs/notes-api.md). Until `limit` are found it reads on, to the
// word's last file or the end of the search's budget.
import type { SqliteDatabase } from '../core/sqlite.ts';
import { countOf, fileOfRow, fold as foldWord, idf, indexKey, weight, words } from './search-tokens.ts';

export interface FileQuery {
  /** Each term: its words in order (a phrase when more than one). */
  terms: Array<{ tokens: string[] }>;
  publicOnly: boolean;
  noteId?: number;
  limit: number;
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
  /** The file's text, for the snippet. */
  content: string;
}

/** With several words, a rarest word in at most this many files is read to its last: exact. */
export const EXACT_DOCS = 1000;
/** Files checked at most for one query when the rarest word is commoner than that. */
const MAX_CHECKED = 3000;
/** Files checked after the best `limit` are found (several words), for better ones. */
const AFTER_FOUND = 256;
/** A note with at most this many files is searched file by file when the query names it. */
const SMALL_NOTE = 2000;
const BATCH = 64;

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
    text: db.prepare('select name, content from files where id = ?'),
    noteSize: db.prepare('select count(*) from files where note_id = ? and deleted_at is null').pluck(),
    noteFiles: db
      .prepare('select id from files where note_id = ? and deleted_at is null order by id')
      .pluck(),
    all: db
      .prepare('select rowid from search_all where search_all match ? order by rowid desc limit ?')
      .pluck(),
    public: db
      .prepare('select rowid from search_public where search_public match ? order by rowid desc limit ?')
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
    return { keys, folded, idf: idf(docs, Math.min(...keys.map((k) => df.get(k) ?? 0))) };
  });
  const [driver, driverDocs] = [...df.entries()].reduce((a, b) => (b[1] < a[1] ? b : a));
  return { terms, avgLength, driver, driverDocs };
}

export function searchFiles(db: SqliteDatabase, query: FileQuery): { hits: FileHit[]; partial: boolean } {
  const st = statementsOf(db);
  const { terms, avgLength, driver, driverDocs } = weigh(st, query);
  if (driverDocs <= 0) return { hits: [], partial: false };
  const phrases = terms.some((t) => t.keys.length > 1);
  const oneWord = terms.length === 1 && !phrases;

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
  const answer = (partial: boolean) => ({
    partial,
    hits: best.map((hit) => ({
      ...hit,
      content: (st.text.get(hit.id) as { content: string } | undefined)?.content ?? '',
    })),
  });

  if (query.noteId !== undefined && (st.noteSize.get(query.noteId) as number) <= SMALL_NOTE) {
    const ids = st.noteFiles.all(query.noteId) as number[];
    for (let at = 0; at < ids.length; at += BATCH) {
      if (query.now() > query.deadline) return answer(true);
      check(ids.slice(at, at + BATCH));
    }
    return answer(false);
  }

  // The rarest word's files, heaviest first (the row id's high bits are the weight step). Row ids
  // are read a page at a time (better-sqlite3 runs no other statement while one iterates); a
  // longer page re-reads the first, which costs little next to checking the files.
  const page = query.publicOnly ? st.public : st.all;
  const exact = !oneWord && driverDocs <= EXACT_DOCS;
  let partial = false;
  let checked = 0;
  let foundAt = -1;
  let seen = 0;
  const sizes = exact ? [EXACT_DOCS] : [BATCH * 2, BATCH * 16, MAX_CHECKED];
  scan: for (let s = 0; s < sizes.length; s++) {
    const size = sizes[s]!;
    const rows = page.all(`"${driver}"`, size) as number[];
    for (let at = seen; at < rows.length; at += BATCH) {
      const slice = rows.slice(at, at + BATCH);
      if (!exact && best.length >= query.limit) {
        // One word: the files come in the order of their scores (in weight steps), so the first
        // `limit` the caller may see are the best. Several: a few more files, then stop.
        if (oneWord || checked - foundAt >= AFTER_FOUND) break scan;
      }
      check(slice.map(fileOfRow));
      checked += slice.length;
      if (foundAt < 0 && best.length >= query.limit) foundAt = checked;
      if (query.now() > query.deadline) {
        partial = true;
        break scan;
      }
    }
    seen = rows.length;
    if (rows.length < size) break;
    // Fewer than `limit` found where the word weighs most (its files seldom hold the others): the
    // rest of its files, a longer page at a time, until found or the budget ends (then partial).
    if (size >= MAX_CHECKED && best.length < query.limit) sizes.push(size * 8);
  }
  return answer(partial);
}
