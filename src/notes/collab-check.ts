// What a collaborative update may contain, decided before it touches the document. A file is one
// Y.Text named `content` holding plain text: an update may insert strings into it and delete
// from it, nothing else. An embed or a format item is invisible in the text but counts in Y.Text
// offsets, so every later save landed shifted; maps, arrays, nested types and sub-documents have
// no place in a file. Updates that depend on changes the server lacks would wait in memory without
// bound, and Yjs client ids are bound to the person who first wrote with them, so nobody writes
// (and makes another's editor drop changes) under someone else's id.
import * as Y from 'yjs';

export const TEXT_NAME = 'content';

export type UpdateCheck =
  | {
      ok: true;
      /** Yjs client ids that gain new structs, for the ownership check. */
      writers: number[];
      /** UTF-8 bytes of the strings the update inserts. */
      insertedBytes: number;
      /** UTF-8 bytes of live text the update deletes (only computed when `measureDeletes`). */
      deletedBytes: number;
    }
  | { ok: false; code: 'BAD_REQUEST' | 'CONFLICT'; message: string };

const CONTENT_NAMES = new Map<unknown, string>([
  [Y.ContentEmbed, 'an embed'],
  [Y.ContentFormat, 'a format'],
  [Y.ContentType, 'a nested shared type (map, array or XML)'],
  [Y.ContentAny, 'a JSON value'],
  [Y.ContentJSON, 'a JSON value'],
  [Y.ContentBinary, 'binary data'],
  [Y.ContentDoc, 'a sub-document'],
]);

/** Largest clock a struct may reach: past 2^31 clocks lose precision in the encoders of some peers. */
const MAX_CLOCK = 2 ** 31;

type Struct = Y.Item | Y.GC | Y.Skip;
type DeleteSet = ReturnType<typeof Y.decodeUpdate>['ds'];
type DeleteItem = { clock: number; len: number };

function bad(message: string): UpdateCheck {
  return { ok: false, code: 'BAD_REQUEST', message: `update: ${message}` };
}

function missing(): UpdateCheck {
  return {
    ok: false,
    code: 'CONFLICT',
    message:
      'update: it depends on changes the server does not have; fetch …/collab again and send what it lacks',
  };
}

/** The struct of the document holding `id`, or undefined when the document has no such clock. */
function docStruct(doc: Y.Doc, id: Y.ID): Y.Item | Y.GC | undefined {
  const structs = doc.store.clients.get(id.client);
  if (!structs || id.clock >= Y.getState(doc.store, id.client)) return undefined;
  return structs[Y.findIndexSS(structs, id.clock)] as Y.Item | Y.GC;
}

/**
 * Checks an update (v1 encoding) against the document it is about to be applied to. Pure with
 * respect to the document: nothing is applied or changed. Throws only on bytes that are not a
 * Yjs update at all.
 */
export function checkUpdate(
  doc: Y.Doc,
  update: Uint8Array,
  options: { measureDeletes: boolean },
): UpdateCheck {
  const { structs, ds } = Y.decodeUpdate(update) as { structs: Struct[]; ds: DeleteSet };
  const text = doc.getText(TEXT_NAME);

  // Clock ranges the update brings, per client: origins and deletes may point into them.
  const next = new Map<number, number>();
  const ranges = new Map<number, Array<[number, number]>>();
  const writers = new Set<number>();
  for (const s of structs) {
    const { client, clock } = s.id;
    if (s instanceof Y.Skip) return missing();
    if (s.length < 0 || clock + s.length > MAX_CLOCK) return bad('a clock is out of range');
    const have = next.get(client) ?? Y.getState(doc.store, client);
    if (clock > have) return missing();
    if (clock + s.length > have) writers.add(client);
    next.set(client, Math.max(have, clock + s.length));
    const list = ranges.get(client) ?? [];
    list.push([clock, clock + s.length]);
    ranges.set(client, list);
  }
  const inUpdate = (id: Y.ID): boolean =>
    (ranges.get(id.client) ?? []).some(([from, to]) => id.clock >= from && id.clock < to);

  /** An origin must be text of the file, in the document or in this update. */
  const originOk = (id: Y.ID | null): boolean | 'missing' => {
    if (id === null) return true;
    const known = docStruct(doc, id);
    if (known) {
      // A collected (GC) neighbour makes Yjs drop the new item: harmless.
      if (known instanceof Y.GC) return true;
      return known.parent === text && known.parentSub === null;
    }
    return inUpdate(id) ? true : 'missing';
  };

  let insertedBytes = 0;
  for (const s of structs) {
    if (s instanceof Y.GC) continue;
    const item = s as Y.Item;
    const kind = item.content.constructor;
    if (kind !== Y.ContentString && kind !== Y.ContentDeleted) {
      return bad(`only text can be inserted into a file, not ${CONTENT_NAMES.get(kind) ?? 'this content'}`);
    }
    if (item.parentSub !== null) return bad('a file is a text, it has no map entries');
    const parent = item.parent as unknown;
    if (parent !== null) {
      if (parent !== TEXT_NAME) {
        return bad(
          typeof parent === 'string'
            ? `a file has one shared text named "${TEXT_NAME}", not "${parent.slice(0, 40)}"`
            : 'a file has no nested shared types',
        );
      }
    } else {
      for (const origin of [item.origin, item.rightOrigin]) {
        const verdict = originOk(origin);
        if (verdict === 'missing') return missing();
        if (!verdict) return bad(`only the text "${TEXT_NAME}" can be edited`);
      }
    }
    if (kind === Y.ContentString) insertedBytes += Buffer.byteLength((item.content as Y.ContentString).str);
  }

  let deletedBytes = 0;
  for (const [client, deletes] of ds.clients) {
    const known = next.get(client) ?? Y.getState(doc.store, client);
    for (const { clock, len } of deletes) {
      if (len <= 0 || clock + len > known) return missing();
    }
    if (options.measureDeletes) deletedBytes += liveBytesIn(doc, text, client, deletes);
  }
  return { ok: true, writers: [...writers], insertedBytes, deletedBytes };
}

/** UTF-8 bytes of the not yet deleted text the document holds in these clock ranges of a client. */
function liveBytesIn(doc: Y.Doc, text: Y.Text, client: number, deletes: DeleteItem[]): number {
  const structs = doc.store.clients.get(client);
  if (!structs) return 0;
  const state = Y.getState(doc.store, client);
  let bytes = 0;
  for (const { clock, len } of deletes) {
    const end = Math.min(clock + len, state);
    if (clock >= end) continue;
    for (let i = Y.findIndexSS(structs, clock); i < structs.length; i++) {
      const s = structs[i] as Y.Item | Y.GC;
      if (s.id.clock >= end) break;
      if (!(s instanceof Y.Item) || s.deleted || s.parent !== text) continue;
      if (!(s.content instanceof Y.ContentString)) continue;
      const from = Math.max(clock, s.id.clock) - s.id.clock;
      const to = Math.min(end, s.id.clock + s.length) - s.id.clock;
      bytes += Buffer.byteLength(s.content.str.slice(from, to));
    }
  }
  return bytes;
}

/** True when the document is a file as defined above; documents stored before this check may not be. */
export function isPlainTextDoc(doc: Y.Doc): boolean {
  try {
    // A root loaded from an update is untyped until asked for; another type under the name throws.
    doc.getText(TEXT_NAME);
  } catch {
    return false;
  }
  for (const [name, type] of doc.share) {
    if (name !== TEXT_NAME || !(type instanceof Y.Text)) {
      // An unused root created by a lookup is harmless; anything with content is not.
      if (type._start !== null || type._map.size > 0) return false;
    }
  }
  const text = doc.share.get(TEXT_NAME);
  if (!text) return true;
  if (text._map.size > 0) return false;
  for (let item = text._start; item !== null; item = item.right) {
    if (!item.deleted && !(item.content instanceof Y.ContentString)) return false;
  }
  return true;
}
