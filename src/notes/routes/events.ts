// The event stream (Server-Sent Events): one per browser tab, replayed from Last-Event-ID.
import type { FastifyInstance } from 'fastify';
import type { Query } from './kit.ts';

/** A client that stopped reading is dropped rather than buffered without bound. */
const SSE_BUFFER_LIMIT = 8 * 1024 * 1024;

export async function eventRoutes(app: FastifyInstance): Promise<void> {
  const { hub } = app.notes;

  app.get<Query>('/api/events', (req, reply) => {
    const q = req.query;
    const note = q.note_id ? req.note(q.note_id) : null;
    const lastHeader = req.headers['last-event-id'] ?? q.last_event_id;
    const last = typeof lastHeader === 'string' && /^\d+$/.test(lastHeader) ? Number(lastHeader) : null;
    const clientId = typeof q.client_id === 'string' && q.client_id.length <= 64 ? q.client_id : null;
    reply.hijack();
    const raw = reply.raw;
    raw.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
      'X-Content-Type-Options': 'nosniff',
    });
    raw.write('retry: 2000\n\n');
    const unsubscribe = hub.subscribe({
      principal: req.principal,
      noteId: note?.id ?? null,
      clientId,
      lastEventId: last,
      sink: {
        write: (chunk) => {
          if (raw.writableLength > SSE_BUFFER_LIMIT) {
            raw.destroy();
            throw new Error('event stream client too slow');
          }
          raw.write(chunk);
        },
        end: () => raw.end(),
      },
    });
    req.raw.on('close', unsubscribe);
  });
}
