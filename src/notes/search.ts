// Full-text search with a bounded cost: the query is parsed into a few distinct terms (length,
// term and phrase sizes capped); files are searched by weight (search-files.ts), chat messages by
// FTS5 row by row under a time budget and a row cap (visitors' in chat_public, which holds only
// public conversations); snippets are cut from a bounded window of the text in JS. FTS5's snippet()
// re-tokenises the whole document once per phrase and row, which let one query over a large file
// hold the process for minutes; here no single request costs more than the budget says.
import type { SqliteDatabase } from '../core/sqlite.ts';
import { searchFiles } from './search-files.ts';
import { fold, TOKEN } from './search-tokens.ts';

export interface SearchTerm {
  /** Tokens as typed (FTS folds case and diacritics itself). */
  tokens: string[];
}

export interface ParsedQuery {
  terms: SearchTerm[];
  /** The FTS5 MATCH expression: every term a quoted phrase, so operators in the input are inert. */
  fts: string;
}

export interface QueryShape {
  searchMaxChars: number;
  searchMaxTerms: number;
  searchMaxPhraseWords: number;
}

export type QueryResult = { ok: true; query: ParsedQuery } | { ok: false; message: string };

function tokens(text: string): string[] {
  return text.match(TOKEN) ?? [];
}

/** Words and "quoted phrases" → distinct terms; every limit broken is named in the message. */
export function parseQuery(input: string, shape: QueryShape): QueryResult {
  if ([...input].length > shape.searchMaxChars) {
    return { ok: false, message: `q: at most ${shape.searchMaxChars} characters` };
  }
  const terms: SearchTerm[] = [];
  const seen = new Set<string>();
  const re = /"([^"]*)"?|([^\s"]+)/g;
  for (let m = re.exec(input); m; m = re.exec(input)) {
    const words = tokens(m[1] ?? m[2] ?? '');
    if (words.length === 0) continue;
    if (words.length > shape.searchMaxPhraseWords) {
      return {
        ok: false,
        message: `q: a phrase may hold at most ${shape.searchMaxPhraseWords} words ("${words.slice(0, 3).join(' ')} …" has ${words.length})`,
      };
    }
    const key = words.map(fold).join(' ');
    if (seen.has(key)) continue;
    seen.add(key);
    terms.push({ tokens: words });
  }
  if (terms.length === 0) return { ok: false, message: 'q: give at least one word (letters or digits)' };
  if (terms.length > shape.searchMaxTerms) {
    return {
      ok: false,
      message: `q: at most ${shape.searchMaxTerms} different words or phrases (got ${terms.length})`,
    };
  }
  return { ok: true, query: { terms, fts: terms.map((t) => `"${t.tokens.join(' ')}"`).join(' ') } };
}

// --- snippets

export interface Segment {
  text: string;
  match: boolean;
}

/** Characters of a text looked at for a snippet: a match further in shows the text's start. */
export const SNIPPET_SCAN = 64 * 1024;
const SNIPPET_WORDS = 16;

/**
 * A short plain-text excerpt around the first matching word within the first SNIPPET_SCAN
 * characters, with every matching word marked. Cost: linear in SNIPPET_SCAN, whatever the text.
 */
export function snippet(text: string, terms: SearchTerm[]): Segment[] {
  const wanted = new Set(terms.flatMap((t) => t.tokens.map(fold)));
  const window = text.slice(0, SNIPPET_SCAN);
  const found: Array<{ start: number; end: number; match: boolean }> = [];
  let first = -1;
  for (const m of window.matchAll(TOKEN)) {
    const match = wanted.has(fold(m[0]));
    found.push({ start: m.index, end: m.index + m[0].length, match });
    if (match && first < 0) first = found.length - 1;
    // Enough words after the first match: the rest of the window is never looked at.
    if (first >= 0 && found.length - first > SNIPPET_WORDS) break;
  }
  if (found.length === 0) return window ? [{ text: clip(window.slice(0, 120)), match: false }] : [];
  const from = Math.max(0, Math.max(first, 0) - SNIPPET_WORDS / 4);
  const to = Math.min(found.length, from + SNIPPET_WORDS);
  const out: Segment[] = [];
  const push = (piece: string, match: boolean) => {
    if (!piece) return;
    const last = out.at(-1);
    if (last && last.match === match) last.text += piece;
    else out.push({ text: piece, match });
  };
  if (from > 0) push('…', false);
  let at = found[from]!.start;
  for (let i = from; i < to; i++) {
    const word = found[i]!;
    push(clip(window.slice(at, word.start)), false);
    push(window.slice(word.start, word.end), word.match);
    at = word.end;
  }
  if (to < found.length || window.length < text.length) push('…', false);
  return out;
}

/** Separators between words are kept short (a run of blank lines becomes one space). */
function clip(text: string): string {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > 40 ? `${flat.slice(0, 20)}…${flat.slice(-19)}` : flat;
}

// --- running a search

export interface SearchOptions {
  publicOnly: boolean;
  noteId?: number;
  limit: number;
  budgetMs: number;
  /** Matches looked at before ranking stops collecting. */
  maxCandidates?: number;
  /** What to search; both by default. */
  kinds?: Array<'file' | 'chat'>;
  now?: () => number;
}

export interface SearchHit {
  kind: 'file' | 'chat';
  note_id: number;
  note: string;
  file_id?: number;
  file?: string;
  message_id?: number;
  snippet: Segment[];
}

export interface SearchAnswer {
  results: SearchHit[];
  /** True when the budget or the candidate cap ended the collection early. */
  partial: boolean;
}

interface Candidate {
  id: number;
  note_id: number;
  note: string;
  score: number;
}

/** The chat search's statements per connection and text (a few shapes), compiled once. */
const compiled = new WeakMap<SqliteDatabase, Map<string, ReturnType<SqliteDatabase['prepare']>>>();

function statement(db: SqliteDatabase, sql: string): ReturnType<SqliteDatabase['prepare']> {
  let byText = compiled.get(db);
  if (!byText) {
    byText = new Map();
    compiled.set(db, byText);
  }
  let st = byText.get(sql);
  if (!st) {
    st = db.prepare(sql);
    byText.set(sql, st);
  }
  return st;
}

/**
 * Runs the query over files and chat messages the caller may see: the files by weight
 * (search-files.ts), then chat messages, read row by row (no ORDER BY, which would rank every match
 * before the first row comes back) with the budget checked between rows; the best `limit` by bm25
 * are kept and only those get snippets.
 */
export function runSearch(db: SqliteDatabase, query: ParsedQuery, opts: SearchOptions): SearchAnswer {
  const now = opts.now ?? (() => performance.now());
  const deadline = now() + opts.budgetMs;
  const maxCandidates = opts.maxCandidates ?? 5000;
  const kinds = opts.kinds ?? ['file', 'chat'];
  let partial = false;
  const files = kinds.includes('file')
    ? searchFiles(db, {
        terms: query.terms,
        publicOnly: opts.publicOnly,
        ...(opts.noteId !== undefined ? { noteId: opts.noteId } : {}),
        limit: opts.limit,
        // One character past the window: the snippet says when the text goes on.
        textChars: SNIPPET_SCAN + 1,
        deadline,
        now,
      })
    : { hits: [], partial: false };
  partial = files.partial;

  const collect = (sql: string, params: Record<string, unknown>): Candidate[] => {
    const out: Candidate[] = [];
    let n = 0;
    for (const row of statement(db, sql).iterate(params) as Iterable<Candidate>) {
      out.push(row);
      if (++n >= maxCandidates || ((n & 31) === 0 && now() > deadline)) {
        partial = true;
        break;
      }
    }
    return out.sort((a, b) => a.score - b.score).slice(0, opts.limit);
  };
  // Visitors search chat_public, which holds only public notes' conversations without tool output
  // (see forReader in events.ts); the conditions below stay as a second check.
  const table = opts.publicOnly ? 'chat_public' : 'chat_fts';
  const chatWhere = [`${table} match @q`, 'n.deleted_at is null'];
  if (opts.publicOnly) chatWhere.push('n.public = 1', "c.role <> 'tool'");
  if (opts.noteId !== undefined) chatWhere.push('c.note_id = @note');
  const late = now() > deadline;
  if (late) partial = true;
  const chats =
    late || !kinds.includes('chat')
      ? []
      : collect(
          `select c.id as id, c.note_id, n.name as note, bm25(${table}) as score
           from ${table} join chat_messages c on c.id = ${table}.rowid join notes n on n.id = c.note_id
           where ${chatWhere.join(' and ')}`,
          { q: query.fts, note: opts.noteId ?? null },
        );

  const chatText = statement(db, 'select substr(content, 1, @n) as text from chat_messages where id = @id');
  // Files before chat messages, as the search view lists them.
  const results: SearchHit[] = [
    ...files.hits.map(
      (hit): SearchHit => ({
        kind: 'file',
        note_id: hit.note_id,
        note: hit.note,
        file_id: hit.id,
        file: hit.file,
        snippet: snippet(hit.content, query.terms),
      }),
    ),
    ...chats.map(
      (c): SearchHit => ({
        kind: 'chat',
        note_id: c.note_id,
        note: c.note,
        message_id: c.id,
        snippet: snippet(
          (chatText.get({ id: c.id, n: SNIPPET_SCAN }) as { text: string } | undefined)?.text ?? '',
          query.terms,
        ),
      }),
    ),
  ].slice(0, opts.limit);
  return { results, partial };
}
