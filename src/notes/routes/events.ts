// The event stream (Server-Sent Events): one per browser tab, replayed from Last-Event-ID. How many
// may be open is bounded (in all, per client address, per note): past that, 429.
import type { FastifyInstance } from 'fastify';
import { rateLimited } from '../guard.ts';
import { badRequest } from '../http.ts';
import type { Query } from './kit.ts';

/**
 * A client that stopped reading is dropped rather than buffered without bound: with the stream
 * limit this bounds what slow readers can make the server hold (a dropped client reconnects with
 * Last-Event-ID and fetches what live-only events it missed).
 */
const SSE_BUFFER_LIMIT = 1024 * 1024;

export async function eventRoutes(app: FastifyInstance): Promise<void> {
  const { hub } = app.notes;

  app.get<Query>('/api/events', (req, reply) => {
    const q = req.query;
    if (q.note_id !== undefined && typeof q.note_id !== 'string') throw badRequest('note_id: give it once');
    const note = q.note_id ? req.note(q.note_id) : null;
    const lastHeader = req.headers['last-event-id'] ?? q.last_event_id;
    const last = typeof lastHeader === 'string' && /^\d{1,15}$/.test(lastHeader) ? Number(lastHeader) : null;
    const clientId =
      typeof q.client_id === 'string' && q.client_id.length > 0 && q.client_id.length <= 64
        ? q.client_id
        : null;
    // A signed-in client is counted by who it is (people behind one NAT do not share a limit),
    // an anonymous one by its address.
    const client = req.principal ? `subject ${req.principal.subject}` : `address ${req.ip}`;
    const refused = hub.admit(client, note?.id ?? null);
    if (refused) throw rateLimited(5, refused);
    reply.hijack();
    const raw = reply.raw;
    raw.writeHead(200, {
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
          raw.write(chunk);
        },
        end: () => raw.end(),
      },
    });
    // The response closes when the client goes away (or the server ends the stream).
    if (raw.destroyed) unsubscribe();
    else raw.on('close', unsubscribe);
  });
}
