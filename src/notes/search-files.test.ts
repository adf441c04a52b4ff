// The file search by weight against FTS5's own bm25() over the same texts: the same files, in the
// same order, for rare words (read to the end) and common ones, one or several (read heaviest first
// and stopped once no file left can rank higher);
// visitors' queries see only public files of public notes, also right after visibility changes.
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../core/sqlite.ts';
import { resolveLimits } from './limits.ts';
import { parseQuery } from './search.ts';
import { EXACT_DOCS, searchFiles } from './search-files.ts';
import { type Kit, makeServer } from './test-kit.ts';

let kit: Kit;
afterEach(async () => {
  await kit.server.close();
});

/** Deterministic texts: a few hundred distinct words, some much commoner than others. */
function corpus(n: number, seed = 7): string[] {
  let x = seed;
  const rand = () => {
    x = (Math.imul(x, 1103515245) + 12345) & 0x7fffffff; // a plain product loses its low bits
    return x / 0x7fffffff;
  };
  const vocabulary = Array.from({ length: 400 }, (_, i) => `w${i.toString(36)}`);
  return Array.from({ length: n }, () => {
    const length = 5 + Math.floor(rand() * 60);
    // Zipf-like: low indexes are far commoner.
    return Array.from({ length }, () => vocabulary[Math.floor(vocabulary.length * rand() ** 3)]!).join(' ');
  });
}

/** Files straight into the database (as a bench does), then the index brought up to date. */
function fill(texts: string[], isPublic: (i: number) => boolean): number {
  const { store, searchIndex } = kit.server;
  const note = store.createNote('corpus', true);
  const insert = store.db.prepare(
    'insert into files(note_id, name, public, revision, content, created_at, updated_at) values (?, ?, ?, 1, ?, ?, ?)',
  );
  store.db.transaction(() => {
    texts.forEach((text, i) => {
      insert.run(note.id, `f${i}.md`, isPublic(i) ? 1 : 0, text, '2026-01-01', '2026-01-01');
    });
  })();
  while (!searchIndex.run(1000)) {}
  return note.id;
}

/** FTS5's ranking of the same texts (name and content, as the index has them). */
function fts5(texts: string[]) {
  const db = openDatabase(':memory:');
  db.exec('create virtual table t using fts5(name, content)');
  const insert = db.prepare('insert into t(rowid, name, content) values (?, ?, ?)');
  db.transaction(() => {
    for (const [i, text] of texts.entries()) insert.run(i, `f${i}.md`, text);
  })();
  const ranked = db.prepare('select rowid, bm25(t) as score from t where t match ? order by rank limit ?');
  return {
    rank(query: string, limit: number) {
      const parsed = parseQuery(query, resolveLimits({}));
      if (!parsed.ok) throw new Error(parsed.message);
      const rows = ranked.all(parsed.query.fts, limit) as Array<{ rowid: number; score: number }>;
      return rows.map((r) => ({ file: `f${r.rowid}.md`, score: -r.score }));
    },
    close: () => db.close(),
  };
}

function search(query: string, limit: number, publicOnly = false) {
  const parsed = parseQuery(query, resolveLimits({}));
  if (!parsed.ok) throw new Error(parsed.message);
  return searchFiles(kit.server.store.db, {
    terms: parsed.query.terms,
    publicOnly,
    limit,
    textChars: 100,
    deadline: Number.POSITIVE_INFINITY,
    now: () => 0,
  });
}

describe('the file search by weight', () => {
  it('ranks like FTS5 bm25, for rare and common words, one or several, and phrases', async () => {
    kit = await makeServer();
    const texts = corpus(EXACT_DOCS * 3);
    fill(texts, () => true);
    const reference = fts5(texts);
    // Several words all in more than EXACT_DOCS files ('w0 w1 w2', 'w0 w1') are ranked exactly too.
    for (const query of [
      'w0',
      'w1',
      'w5',
      'wa',
      'wz',
      'w2s',
      'w0 w3',
      'w9 wb',
      'w0 wz',
      'w0 w1 w2',
      'w0 w1',
    ]) {
      const mine = search(query, 10);
      const theirs = reference.rank(query, 10);
      expect(mine.partial, query).toBe(false);
      expect(
        mine.hits.map((h) => h.score),
        query,
      ).toEqual(theirs.map((t) => expect.closeTo(t.score, 6)));
      // Equal scores may come in another order; different ones may not.
      expect(new Set(mine.hits.map((h) => h.file)).size, query).toBe(theirs.length);
      // Each hit carries the start of its text (textChars), for the snippet.
      for (const hit of mine.hits)
        expect(hit.content, query).toBe(texts[Number(hit.file.slice(1, -3))]!.slice(0, 100));
    }
    // A phrase is weighed by its rarest word's count of files (FTS5 counts the phrase's own): the
    // scores differ by that factor, the order of one phrase's files does not (of rare words, and of
    // common ones only).
    for (const query of ['"w2s w0"', '"w0 w2s"', '"w1m w1"', '"w0 w1"']) {
      const mine = search(query, 10).hits.map((h) => h.score);
      const theirs = reference.rank(query, 10).map((t) => t.score);
      expect(mine.length, query).toBe(theirs.length);
      if (theirs.length === 0) continue;
      const ratio = theirs[0]! / mine[0]!;
      expect(
        mine.map((s) => s * ratio),
        query,
      ).toEqual(theirs.map((t) => expect.closeTo(t, 6)));
    }
    reference.close();
  }, 60_000);

  it('checks the best-scored files first, past those the check refuses', async () => {
    kit = await makeServer();
    const texts = corpus(EXACT_DOCS * 3, 13);
    const noteId = fill(texts, () => true);
    const reference = fts5(texts);
    // The 30 heaviest files of each query are deleted and the index not told yet: it still lists
    // them (their word counts rank them first), the check refuses them, the next best come.
    for (const query of ['w1', 'w0 w3', '"w0 w1"']) {
      const ranked = reference.rank(query, 60);
      const gone = new Set(ranked.slice(0, 30).map((r) => r.file));
      const ids = [...gone].map((file) => kit.server.store.findFile(noteId, file)!.id);
      for (const id of ids) kit.server.store.setFileDeleted(id, true);
      const mine = search(query, 10);
      expect(mine.partial, query).toBe(false);
      expect(
        mine.hits.some((h) => gone.has(h.file)),
        query,
      ).toBe(false);
      const expected = ranked.filter((r) => !gone.has(r.file)).slice(0, 10);
      const ratio = query.startsWith('"') ? expected[0]!.score / mine.hits[0]!.score : 1;
      expect(
        mine.hits.map((h) => h.score * ratio),
        query,
      ).toEqual(expected.map((t) => expect.closeTo(t.score, 6)));
      for (const id of ids) kit.server.store.setFileDeleted(id, false);
      while (!kit.server.searchIndex.run(1000)) {}
    }
    reference.close();
  }, 60_000);

  it('finds files where common words meet seldom, past the files where the rarest weighs most', async () => {
    kit = await makeServer();
    // 'rarer' in 4000 short files (heavy), 'commoner' in 4500 others; they meet in three long
    // files only, where 'rarer' weighs least: read last.
    const filler = 'lorem ipsum dolor sit amet '.repeat(40);
    const texts = [
      ...Array.from({ length: 4000 }, (_, i) => `rarer rarer t${i}`),
      ...Array.from({ length: 4500 }, (_, i) => `commoner u${i}`),
      ...Array.from({ length: 3 }, (_, i) => `${filler} rarer commoner v${i}`),
    ];
    fill(texts, () => true);
    const found = search('rarer commoner', 10);
    expect(found.partial).toBe(false);
    expect(found.hits.map((h) => h.file).sort()).toEqual(['f8500.md', 'f8501.md', 'f8502.md']);
  }, 60_000);

  it('searches only what visitors may see, and follows visibility changes', async () => {
    kit = await makeServer();
    const texts = corpus(500, 11).map((t, i) => (i % 2 === 0 ? `${t} secretword` : `${t} openword`));
    const noteId = fill(texts, (i) => i % 2 === 1);
    expect(search('secretword', 20, true).hits).toEqual([]);
    expect(search('secretword', 20, false).hits).toHaveLength(20);
    const open = search('openword', 500, true).hits;
    expect(open).toHaveLength(250);
    expect(open.every((h) => Number(h.file.slice(1, -3)) % 2 === 1)).toBe(true);
    // The note becomes private: visitors find nothing at once (checked against the rows), and the
    // index follows.
    kit.server.store.updateNote(noteId, { public: false });
    expect(search('openword', 20, true).hits).toEqual([]);
    while (!kit.server.searchIndex.run(1000)) {}
    expect(search('openword', 20, true).hits).toEqual([]);
    kit.server.store.updateNote(noteId, { public: true });
    while (!kit.server.searchIndex.run(1000)) {}
    expect(search('openword', 500, true).hits).toHaveLength(250);
    // A file deleted is gone for everyone.
    const first = kit.server.store.findFile(noteId, 'f1.md')!;
    kit.server.store.setFileDeleted(first.id, true);
    while (!kit.server.searchIndex.run(1000)) {}
    expect(search('openword', 500, false).hits).toHaveLength(249);
  }, 60_000);
});
