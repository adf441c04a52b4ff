// A large corpus of note files for the search bench, written straight into notes.db with bulk
// inserts (a million files in about a minute, where the API would take hours) while the server is
// stopped; the server's own triggers see every row, so each build indexes it its own way when it
// starts. Words follow Zipf's law over a fixed vocabulary (`w0` the commonest), so there are words
// in nearly every file and words in a handful; the private note's files all hold `vaultword`.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { ROOT } from '../lib.mjs';

const require = createRequire(join(ROOT, 'package.json'));
const VOCABULARY = 50_000;

/** The vocabulary and a sampler of it (deterministic for a seed). */
export function zipf(seed = 42) {
  const words = Array.from({ length: VOCABULARY }, (_, i) => `w${i.toString(36)}`);
  const cdf = new Float64Array(VOCABULARY);
  let total = 0;
  for (let i = 0; i < VOCABULARY; i++) total += 1 / (i + 1);
  let acc = 0;
  for (let i = 0; i < VOCABULARY; i++) {
    acc += 1 / (i + 1) / total;
    cdf[i] = acc;
  }
  let x = seed;
  const rand = () => {
    // Math.imul: a plain product passes 2^53 and loses the low bits, and the sequence then
    // repeats after about 10,000 draws (a corpus of some 125 distinct files, copied over).
    x = (Math.imul(x, 1103515245) + 12345) & 0x7fffffff;
    return x / 0x7fffffff;
  };
  const pick = () => {
    const r = rand();
    let lo = 0;
    let hi = VOCABULARY - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid] < r) lo = mid + 1;
      else hi = mid;
    }
    return words[lo];
  };
  return { words, pick, rand };
}

/**
 * Adds `files` files to `dbFile` (a notes.db a build has made): a share of them, `privateFiles`,
 * in a private note. Returns the ids of the two notes.
 */
export function fillCorpus(dbFile, { files, privateFiles }) {
  const Database = require('better-sqlite3');
  const db = new Database(dbFile);
  db.pragma('synchronous = OFF');
  const { pick, rand } = zipf();
  const at = '2026-01-01T00:00:00.000Z';
  const note = db.prepare('insert into notes(name, public, created_at, updated_at) values (?, ?, ?, ?)');
  const open = Number(note.run('corpus', 1, at, at).lastInsertRowid);
  const vault = Number(note.run('vault', 0, at, at).lastInsertRowid);
  const insert = db.prepare(
    'insert into files(note_id, name, public, revision, content, created_at, updated_at) values (?, ?, 1, 1, ?, ?, ?)',
  );
  const BATCH = 20_000;
  for (let from = 0; from < files; from += BATCH) {
    db.transaction(() => {
      for (let i = from; i < Math.min(files, from + BATCH); i++) {
        const length = 20 + Math.floor(rand() * 120);
        const text = Array.from({ length }, pick);
        const secret = i < privateFiles;
        if (secret) text.push('vaultword');
        insert.run(secret ? vault : open, `f${i}.md`, text.join(' '), at, at);
      }
    })();
  }
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return { open, vault };
}
