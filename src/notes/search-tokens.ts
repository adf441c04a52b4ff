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

/** Lower case without diacritics: how two words are compared. */
export function fold(token: string): string {
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
  const word = [...folded].slice(0, KEY_CHARS).join('');
  if (/^[a-z0-9]+$/.test(word)) return word;
  return `x${Buffer.from(word, 'utf8').toString('hex')}`;
}

/** The folded words of a text, in order. */
export function words(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(TOKEN)) {
    const word = fold(m[0]);
    if (word) out.push(word);
  }
  return out;
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

export function fileOfRow(row: number): number {
  return row % ROW_SPAN;
}

export function bucketOfRow(row: number): number {
  return Math.floor(row / ROW_SPAN);
}
