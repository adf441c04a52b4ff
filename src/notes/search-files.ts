// The file search's query (runs in a worker): BM25 ranking without ranking every match. The index
// (search-index.ts) lists, for each word, the files holding it by how much the word weighs in
// each, heaviest first; visitors' queries read search_public, which holds only what they may see,
// so a word found only in private files costs them nothing. The query takes its rarest word's
// files in that order, checks each against every word and phrase (in the file's own text), and
// scores it exactly as FTS5's bm25() would. A rarest word in at most EXACT_DOCS files is read to
// the end: exact. A commoner one is read until the best `limit` are found and the weight steps
// below them are passed: exact for one word (up to ties inside a step); with several words, the
// best among the files where the rarest word weighs most (documented in docs/notes-api.md).
import type { SqliteDatabase } from '../core/sqlite.ts';
import { bucketOfRow, fileOfRow, fold as foldWord, idf, indexKey, weight, words } from './search-tokens.ts';

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

/** A rarest word in at most this many files is read to its last file: the ranking is exact. */
export const EXACT_DOCS = 1000;
/** Files checked at most for one query when the rarest word is commoner than that. */
const MAX_CHECKED = 3000;
/** Files checked after the best `limit` are found, to finish their weight step. */
const AFTER_FOUND = 256;
/** A note with at most this many files is searched file by file when the query names it. */
const SMALL_NOTE = 2000;
const BATCH = 64;

interface Candidate {
  id: number;
  note_id: number;
  note: string;
  name: string;
  content: string;
  visible: number;
  live: number;
}

interface Weighed {
  keys: string[];
  folded: string[];
  idf: number;
}

/** How often each term occurs in a sequence of words (a phrase: its words in a row). */
function countTerms(sequence: string[], terms: Weighed[], counts: number[]): void {
  for (let i = 0; i < sequence.length; i++) {
    for (let t = 0; t < terms.length; t++) {
      const phrase = terms[t]!.folded;
      if (sequence[i] !== phrase[0]) continue;
      let j = 1;
      while (j < phrase.length && sequence[i + j] === phrase[j]) j++;
      if (j === phrase.length) counts[t]!++;
    }
  }
}

export function searchFiles(db: SqliteDatabase, query: FileQuery): { hits: FileHit[]; partial: boolean } {
  const column = query.publicOnly ? 'public_docs' : 'docs';
  const stats = db
    .prepare(
      'select docs, length, public_docs as publicDocs, public_length as publicLength from search_stats where id = 1',
    )
    .get() as { docs: number; length: number; publicDocs: number; publicLength: number };
  const docs = query.publicOnly ? stats.publicDocs : stats.docs;
  const avgLength = (query.publicOnly ? stats.publicLength : stats.length) / Math.max(docs, 1);
  const dfOf = db.prepare(`select ${column} from search_terms where term = ?`).pluck();
  const df = new Map<string, number>();
  for (const term of query.terms) {
    for (const token of term.tokens) {
      const key = indexKey(foldWord(token));
      if (!df.has(key)) df.set(key, (dfOf.get(key) as number | undefined) ?? 0);
    }
  }
  if ([...df.values()].some((n) => n <= 0)) return { hits: [], partial: false };
  const weighed: Weighed[] = query.terms.map((term) => {
    const folded = term.tokens.map(foldWord);
    const keys = folded.map(indexKey);
    // A phrase is in at most as many files as its rarest word.
    return { keys, folded, idf: idf(docs, Math.min(...keys.map((k) => df.get(k)!))) };
  });
  const [driver, driverDocs] = [...df.entries()].reduce((a, b) => (b[1] < a[1] ? b : a));

  const best: FileHit[] = [];
  const consider = (file: Candidate): void => {
    if (file.live !== 1 || (query.publicOnly && file.visible !== 1)) return;
    if (query.noteId !== undefined && file.note_id !== query.noteId) return;
    const name = words(file.name);
    const content = words(file.content);
    const counts = weighed.map(() => 0);
    countTerms(name, weighed, counts);
    countTerms(content, weighed, counts);
    if (counts.some((n) => n === 0)) return;
    const length = name.length + content.length;
    let score = 0;
    for (let t = 0; t < weighed.length; t++) score += weighed[t]!.idf * weight(counts[t]!, length, avgLength);
    best.push({
      id: file.id,
      note_id: file.note_id,
      note: file.note,
      file: file.name,
      score,
      content: file.content,
    });
    best.sort((a, b) => b.score - a.score);
    if (best.length > query.limit) best.pop();
  };
  const fetch = db.prepare(
    `select f.id, f.note_id, n.name as note, f.name, f.content,
       (f.deleted_at is null and n.deleted_at is null) as live,
       (f.public = 1 and n.public = 1) as visible
     from files f join notes n on n.id = f.note_id where f.id in (select value from json_each(?))`,
  );
  const check = (ids: number[]) => {
    for (const file of fetch.all(JSON.stringify(ids)) as Candidate[]) consider(file);
  };

  if (query.noteId !== undefined) {
    const small = db
      .prepare('select count(*) from files where note_id = ? and deleted_at is null')
      .pluck()
      .get(query.noteId) as number;
    if (small <= SMALL_NOTE) {
      const ids = db
        .prepare('select id from files where note_id = ? and deleted_at is null order by id')
        .pluck()
        .all(query.noteId) as number[];
      for (let at = 0; at < ids.length; at += BATCH) {
        if (query.now() > query.deadline) return { hits: best, partial: true };
        check(ids.slice(at, at + BATCH));
      }
      return { hits: best, partial: false };
    }
  }

  // The rarest word's files, heaviest first (the row id's high bits are the weight step). Row ids
  // are read a page at a time (better-sqlite3 runs no other statement while one iterates); a
  // longer page re-reads the first, which costs little next to checking the files.
  const table = query.publicOnly ? 'search_public' : 'search_all';
  const page = db
    .prepare(`select rowid from ${table} where ${table} match ? order by rowid desc limit ?`)
    .pluck();
  const exact = driverDocs <= EXACT_DOCS;
  let partial = false;
  let checked = 0;
  let foundAt = -1;
  let stopBelow = -1;
  let seen = 0;
  scan: for (const size of exact ? [EXACT_DOCS] : [BATCH * 5, MAX_CHECKED]) {
    const ids = page.all(`"${driver}"`, size) as number[];
    for (let at = seen; at < ids.length; at += BATCH) {
      const slice = ids.slice(at, at + BATCH);
      if (!exact && stopBelow >= 0 && bucketOfRow(slice[0]!) < stopBelow) break scan;
      check(slice.map(fileOfRow));
      checked += slice.length;
      if (query.now() > query.deadline) {
        partial = true;
        break scan;
      }
      if (exact) continue;
      if (foundAt < 0 && best.length >= query.limit) {
        // The weight step of the last of the best, and the one below, may still hold better files.
        foundAt = checked;
        stopBelow = bucketOfRow(slice.at(-1)!) - 1;
      }
      if (foundAt >= 0 && checked - foundAt >= AFTER_FOUND) break scan;
    }
    seen = ids.length;
    if (ids.length < size) break;
    // Not every file holding the word was looked at: say so when the answer may lack some.
    if (size === MAX_CHECKED) partial = best.length < query.limit;
  }
  return { hits: best, partial };
}
