// The event stream (Server-Sent Events): one per browser tab, replayed from Last-Event-ID. How many
// may be open is bounded (in all, per client address, per note): past that, 429.
import type { ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import * as Y from 'yjs';
import type { FileRow, NoteRow } from '../db.ts';
import { rateLimited } from '../guard.ts';
import { badRequest } from '../http.ts';
import { rawRoute } from './route.ts';
import type { ZodProvider } from './schema.ts';

/**
 * A client that stopped reading is dropped rather than buffered without bound: with the stream
 * limit this bounds what slow readers can make the server hold (a dropped client reconnects with
 * Last-Event-ID and fetches what live-only events it missed).
 */
const SSE_BUFFER_LIMIT = 1024 * 1024;

/** Longest `sync_state` taken (base64 of a Yjs state vector: about 10 bytes per editor ever). */
const MAX_SYNC_STATE = 16 * 1024;

/**
 * The file a stream is opened to keep in step (`sync_file`) and what the client has of it
 * (`sync_state`, base64 of its Yjs state vector; absent: nothing), checked before the stream opens.
 */
function syncRequest(
  req: FastifyRequest,
  query: { sync_file?: string | undefined; sync_state?: string | undefined },
  note: NoteRow | null,
): { file: FileRow; stateVector: Uint8Array | null } | null {
  const { sync_file: ref, sync_state: state } = query;
  if (ref === undefined) {
    if (state !== undefined) throw badRequest('sync_state: give sync_file too');
    return null;
  }
  if (!note) throw badRequest('sync_file: give note_id too');
  const file = req.file(note, ref);
  if (state === undefined || state === '') return { file, stateVector: null };
  if (state.length > MAX_SYNC_STATE || !/^[A-Za-z0-9+/_-]*={0,2}$/.test(state)) {
    throw badRequest(`sync_state: the base64 of a Yjs state vector, at most ${MAX_SYNC_STATE} characters`);
  }
  const stateVector = Buffer.from(state, 'base64');
  try {
    Y.decodeStateVector(stateVector);
  } catch {
    throw badRequest('sync_state: not a Yjs state vector');
  }
  return { file, stateVector };
}

/** Each shared frame buffer framed once as an HTTP chunk (the same buffer goes to every stream). */
const chunks = new WeakMap<Buffer, Buffer>();

/**
 * Writes frames straight to the stream's socket, as one HTTP chunk when the answer is chunked: the
 * response's own write costs a cork, a tick and a four-part writev per stream, and with a thousand
 * streams that was a third of a save's work. The head and every earlier write went out through the
 * response (they reach the socket in call order), so the bytes follow them. A response not yet on
 * its socket (a pipelined request waiting its turn) is written the usual way.
 */
function writeDirect(raw: ServerResponse, frames: Buffer): void {
  const socket = raw.socket;
  if (!socket || !raw.headersSent) {
    raw.write(frames);
    return;
  }
  if (socket.destroyed) throw new Error('event stream closed');
  if (!raw.chunkedEncoding) {
    socket.write(frames);
    return;
  }
  let chunk = chunks.get(frames);
  if (!chunk) {
    chunk = Buffer.concat([Buffer.from(`${frames.length.toString(16)}\r\n`), frames, CRLF]);
    chunks.set(frames, chunk);
  }
  socket.write(chunk);
}

const CRLF = Buffer.from('\r\n');

export async function eventRoutes(root: FastifyInstance): Promise<void> {
  const app = root.withTypeProvider<ZodProvider>();
  const { hub, collab } = app.notes;

  // The answer is a stream the handler writes itself (hijacked), not the declared JSON.
  rawRoute(app, 'GET /api/events', (req, reply) => {
    const q = req.query;
    const note = q.note_id ? req.note(q.note_id) : null;
    const sync = syncRequest(req, q, note);
    const lastHeader = req.headers['last-event-id'] ?? q.last_event_id;
    const last = typeof lastHeader === 'string' && /^\d{1,15}$/.test(lastHeader) ? Number(lastHeader) : null;
    const clientId =
      typeof q.client_id === 'string' && q.client_id.length > 0 && q.client_id.length <= 64
        ? q.client_id
        : null;
    // A signed-in client is counted by who it is (people behind one NAT do not share a limit),
    // an anonymous one by its address.
    const client = req.principal ? `subject ${req.principal.subject}` : `address ${req.ip}`;
    const refused = hub.admit(client, note?.id ?? null, req.principal);
    if (refused) throw rateLimited(5, refused);
    reply.hijack();
    const raw = reply.raw;
    raw.writeHead(200, {
      // The security headers (guard.ts) and whatever else the hooks gave the reply.
      ...(reply.getHeaders() as Record<string, string>),
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    raw.write('retry: 2000\n\n');
    const unsubscribe = hub.subscribe({
      principal: req.principal,
      noteId: note?.id ?? null,
      clientId,
      lastEventId: last,
      address: client,
      sink: {
        write: (chunk) => {
          if (raw.writableLength > SSE_BUFFER_LIMIT) {
            raw.destroy();
            throw new Error('event stream client too slow');
          }
          raw.write(chunk);
        },
        writeBytes: (chunk) => {
          if (raw.writableLength > SSE_BUFFER_LIMIT) {
            raw.destroy();
            throw new Error('event stream client too slow');
          }
          writeDirect(raw, chunk);
        },
        end: () => raw.end(),
      },
    });
    // In the same turn as the stream joined the note: what the client lacked of the file, so with
    // the live updates from now on it holds everything, whichever it did first (GET …/collab or this).
    if (sync && !raw.destroyed) {
      const update = Buffer.from(collab.missing(sync.file, sync.stateVector)).toString('base64');
      raw.write(
        `event: collab.sync\ndata: ${JSON.stringify({ note_id: sync.file.note_id, file_id: sync.file.id, update })}\n\n`,
      );
    }
    // The response closes when the client goes away (or the server ends the stream).
    if (raw.destroyed) unsubscribe();
    else raw.on('close', unsubscribe);
  });
}
