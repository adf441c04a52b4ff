// What public pages, raw files and anonymous JSON reads render, kept with the version of the note
// it came from (versions.ts) and served again, with its ETag, while that version stands: a read
// costs a map lookup instead of queries, JSON and HTML. A client that has the bytes gets a 304.
// These answers depend on nobody's credentials, so they may be revalidated from caches (`no-cache`).
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Versions } from './versions.ts';

export interface Rendered {
  body: Buffer;
  etag: string;
  type: string;
  noteId: number | null;
  version: string;
}

/** How many rendered answers are kept; past it the cache starts again (the next reads refill it). */
const MAX_ENTRIES = 4096;
/** Answers larger than this are rendered each time rather than kept. */
const MAX_BODY = 2 * 1024 * 1024;

export class ReadCache {
  private readonly entries = new Map<string, Rendered>();

  constructor(private readonly versions: Versions) {}

  /** The answer kept for `key`, if what it was rendered from has not changed since. */
  get(key: string): Rendered | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.version === this.versions.of(entry.noteId)) return entry;
    this.entries.delete(key);
    return undefined;
  }

  /**
   * Keeps what was just rendered from the current state of note `noteId` (null: the list of
   * notes only). Call it in the same turn as the reads it was rendered from.
   */
  put(key: string, noteId: number | null, type: string, body: string | Buffer): Rendered {
    const bytes = typeof body === 'string' ? Buffer.from(body) : body;
    const rendered: Rendered = {
      body: bytes,
      etag: `"${createHash('sha256').update(bytes).digest('base64url').slice(0, 27)}"`,
      type,
      noteId,
      version: this.versions.of(noteId),
    };
    if (bytes.length <= MAX_BODY) {
      if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
      this.entries.set(key, rendered);
    }
    return rendered;
  }
}

/** Sends a rendered answer: 304 when the client holds these bytes (If-None-Match), else the bytes. */
export function sendRendered(req: FastifyRequest, reply: FastifyReply, rendered: Rendered): FastifyReply {
  reply.header('Cache-Control', 'no-cache').header('ETag', rendered.etag);
  const held = req.headers['if-none-match'];
  if (held !== undefined && (held === rendered.etag || held.split(/\s*,\s*/).includes(rendered.etag))) {
    return reply.status(304).send();
  }
  return reply.header('Content-Type', rendered.type).send(rendered.body);
}
