// What an editor shares about itself besides presence: its cursor and selection in the file it has
// open, as Yjs relative positions. Opaque to the server, so only their shape and size are checked;
// the browser decodes them and ignores what does not point into its document.
import { badRequest } from './http.ts';

export interface Awareness {
  /** Anchor and head of the main selection, each base64 of `Y.encodeRelativePosition`; null: none. */
  cursor: { anchor: string; head: string } | null;
}

/** A relative position is a few varints (≈ 10–25 bytes); 96 base64 characters is ample and bounded. */
const POSITION = /^[A-Za-z0-9+/]{2,96}={0,2}$/;
const KEYS = ['cursor'];

/**
 * The `awareness` field of a presence update. Every update carries the whole state (like `typing`
 * and `file_id`), so absent or null clears it. Unknown keys are refused rather than passed on: a
 * field reaches every editor of the note, so each one is added here on purpose.
 */
export function parseAwareness(value: unknown): Awareness | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw badRequest('awareness: expected an object such as {"cursor": {"anchor": "…", "head": "…"}}');
  }
  const fields = value as Record<string, unknown>;
  const unknown = Object.keys(fields).filter((key) => !KEYS.includes(key));
  if (unknown.length > 0) {
    throw badRequest(
      `awareness: unknown key ${unknown.map((key) => JSON.stringify(key.slice(0, 40))).join(', ')}; known: ${KEYS.join(', ')}`,
    );
  }
  const cursor = fields['cursor'];
  if (cursor === undefined || cursor === null) return { cursor: null };
  if (typeof cursor !== 'object' || Array.isArray(cursor)) {
    throw badRequest('awareness.cursor: expected {"anchor", "head"} or null');
  }
  const { anchor, head, ...rest } = cursor as Record<string, unknown>;
  if (Object.keys(rest).length > 0)
    throw badRequest('awareness.cursor: only "anchor" and "head" are allowed');
  for (const [key, position] of [
    ['anchor', anchor],
    ['head', head],
  ] as const) {
    if (typeof position !== 'string' || !POSITION.test(position)) {
      throw badRequest(
        `awareness.cursor.${key}: expected a base64 Yjs relative position (at most 96 characters)`,
      );
    }
  }
  return { cursor: { anchor: anchor as string, head: head as string } };
}
