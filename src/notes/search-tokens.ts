// How the file search cuts text into words and weighs them (shared by the indexer, which runs with
// the server, and the query, which runs in a worker). Words are what FTS5's unicode61 tokenizer
// keeps (letters, digits, private-use characters; marks folded away), compared in lower case
// without diacritics. A word's weight in a file is BM25's term part, the same formula FTS5's bm25()
// uses: tf·(k1+1) / (tf + k1·(1 − b + b·len/avglen)).
export const K1 = 1.2;
export const B = 0.75;

// FTS5's unicode61 tokenizer keeps letters, numbers and private-use characters (plus combining
// marks, which it folds away) and splits on everything else.
export const TOKEN = /[\p{L}\p{N}\p{Co}\p{M}]+/gu;

const ASCII = /^[\x00-\x7f]*$/;

/** Lower case without diacritics: how two words are compared (ASCII, the common case, is only lowered). */
export function fold(token: string): string {
  if (ASCII.test(token)) return token.toLowerCase();
  return token
    .normalize('NFD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();
}

/** Longest part of a word the index keeps (a base64 blob is not a word anyone searches for whole). */
const KEY_CHARS = 64;

/**
 * The index key of a folded word: ASCII letters and digits as they are, anything else as hex of its
 * UTF-8 bytes behind an `x`, so FTS5 sees exactly one token whatever its Unicode tables say.
 */
export function indexKey(folded: string): string {
  if (folded.length <= KEY_CHARS && PLAIN_KEY.test(folded)) return folded;
  const word = [...folded].slice(0, KEY_CHARS).join('');
  if (PLAIN_KEY.test(word)) return word;
  return `x${Buffer.from(word, 'utf8').toString('hex')}`;
}

const PLAIN_KEY = /^[a-z0-9]+$/;

const ASCII_WORD = /[a-z0-9]+/g;

/** The folded words of a text, in order (ASCII text, the common case, without Unicode work). */
export function words(text: string): string[] {
  if (ASCII.test(text)) return text.toLowerCase().match(ASCII_WORD) ?? [];
  const out: string[] = [];
  for (const m of text.matchAll(TOKEN)) {
    const word = fold(m[0]);
    if (word) out.push(word);
  }
  return out;
}

/**
 * A file's words as search_docs keeps them: each index key once, with `:n` when it occurs n > 1
 * times ("cat dog:3").
 */
export function encodeCounts(counts: Map<string, number>): string {
  let out = '';
  for (const [key, n] of counts) out += `${out ? ' ' : ''}${n > 1 ? `${key}:${n}` : key}`;
  return out;
}

/** How often `key` occurs, as encodeCounts wrote it in `text` (0: not at all). */
export function countOf(text: string, key: string): number {
  for (let at = text.indexOf(key); at >= 0; at = text.indexOf(key, at + 1)) {
    if (at > 0 && text.charCodeAt(at - 1) !== 32) continue;
    const end = at + key.length;
    if (end === text.length || text.charCodeAt(end) === 32) return 1;
    if (text.charCodeAt(end) !== 58) continue;
    const space = text.indexOf(' ', end);
    return Number(text.slice(end + 1, space < 0 ? text.length : space));
  }
  return 0;
}

export function decodeCounts(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  if (!text) return counts;
  for (const part of text.split(' ')) {
    const at = part.indexOf(':');
    if (at < 0) counts.set(part, 1);
    else counts.set(part.slice(0, at), Number(part.slice(at + 1)));
  }
  return counts;
}

/** BM25's term part for a word seen `tf` times in a text of `length` words. */
export function weight(tf: number, length: number, avgLength: number): number {
  return (tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * length) / Math.max(avgLength, 1)));
}

/** BM25's inverse document frequency, as FTS5 computes it (never below a tiny positive value). */
export function idf(docs: number, withWord: number): number {
  const value = Math.log((docs - withWord + 0.5) / (withWord + 0.5));
  return value > 0 ? value : 1e-6;
}

/**
 * Weights are kept in BUCKETS steps (the high bits of an index row's id, the file id in the low
 * 32), so an index scan in descending row id meets a word's heaviest files first.
 */
export const BUCKETS = 4096;
const ROW_SPAN = 2 ** 32;

export function bucketOf(w: number): number {
  return Math.min(BUCKETS - 1, Math.max(0, Math.floor((w / (K1 + 1)) * BUCKETS)));
}

export function rowId(bucket: number, fileId: number): number {
  return bucket * ROW_SPAN + fileId;
}

/** The most a word weighs in a file whose index row comes after (below) row id `row`. */
export function stepCeiling(row: number): number {
  return ((Math.floor(row / ROW_SPAN) + 1) / BUCKETS) * (K1 + 1);
}

export function fileOfRow(row: number): number {
  return row % ROW_SPAN;
}
