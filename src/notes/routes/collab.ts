// Live editing: a file's Yjs state, clients' updates (checked before they touch the document,
// see collab-check.ts), and presence (who is where, who types, the client's own bounded state).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { tooLarge } from '../collab.ts';
import { rateLimited } from '../guard.ts';
import { badRequest } from '../http.ts';
import { ByteBudget } from '../limits.ts';
import { stampClientId } from '../presence.ts';
import { atLeast } from '../roles.ts';
import { route } from './route.ts';
import type { ZodProvider } from './schema.ts';

/** What the smallest update costs of a person's byte budget (the web editor batches keys per 50 ms). */
export const UPDATE_FLOOR_BYTES = 2048;

/** Presence is for anyone who can see the note, and small: a stranger's body is bounded before it is read. */
const PRESENCE = { bodyLimit: 16 * 1024, config: { need: 'anyone' as const } };

export async function collabRoutes(root: FastifyInstance): Promise<void> {
  const app = root.withTypeProvider<ZodProvider>();
  const { collab, hub, limits } = app.notes;
  // Every update is sent on to every watcher of the note: what one editor sends is bounded in
  // bytes per second, so no one multiplies traffic by the number of watchers at will.
  const budget = new ByteBudget(limits.collabBytesPerSecond, app.notes.clock);

  route(app, 'GET /api/notes/:note/files/:file/collab', async (req) => {
    const { note, file } = req.noteAndFile(req.params);
    // The tab's stream follows this file from now on, before its state is read: every update
    // after this moment reaches the tab live, every one before is in the state (Yjs ignores what
    // it gets twice).
    const tab = req.query.client_id;
    if (tab) hub.follow(req.principal?.subject ?? null, note.id, tab, file.id);
    return collab.state(file);
  });

  // Taken before the body is read or parsed: a client past its budget costs a 429, not a parse.
  const spend = async (req: FastifyRequest) => {
    if (!req.principal) return;
    const length = Number(req.headers['content-length']);
    const bytes =
      Number.isSafeInteger(length) && length >= 0 ? Math.floor((length * 3) / 4) : limits.maxUpdateBytes;
    // Every update counts at least UPDATE_FLOOR_BYTES: most of what one costs is per update (its
    // check, transaction and fsync, a frame to every watcher), so a flood of one-byte updates was
    // hundreds a second within a byte budget meant for typing.
    const wait = budget.take(
      req.principal.subject,
      Math.max(UPDATE_FLOOR_BYTES, Math.min(bytes, limits.maxUpdateBytes)),
    );
    if (wait > 0)
      throw rateLimited(wait, 'collaborative updates are coming faster than the server passes them on');
  };

  route(
    app,
    'POST /api/notes/:note/files/:file/collab',
    { onRequest: spend, config: { need: 'user' } },
    async (req) => {
      const { file } = req.noteAndFile(req.params);
      const user = req.need('user');
      const { update, client_id: chosen = '' } = req.body;
      if (update.length > Math.ceil((limits.maxUpdateBytes * 4) / 3) + 4) {
        throw tooLarge(
          `update: more than the ${limits.maxUpdateBytes} bytes one update may have; send smaller batches`,
        );
      }
      // Returns once the update is committed to the update log: the answer means it is kept.
      // Broadcast under the id the server stamps for this person and tab, never the one sent.
      collab.apply(file, Buffer.from(update, 'base64'), user, stampClientId(user.subject, chosen));
      return { ok: true };
    },
  );

  route(app, 'POST /api/notes/:note/presence', PRESENCE, async (req) => {
    const note = req.note(req.params.note);
    const { client_id: clientId, file_id: fileRef, typing = false, state: sent } = req.body;
    let fileId: number | null = null;
    if (fileRef !== undefined && fileRef !== null) {
      // A file of this note the caller may see (else 404, as for any lookup of it): presence must
      // not tell watchers that someone is in a file they were never shown.
      fileId = req.file(note, String(fileRef)).id;
    }
    let state: Record<string, unknown> | null | undefined;
    if (sent !== undefined) {
      const bytes = Buffer.byteLength(JSON.stringify(sent));
      if (bytes > limits.presenceStateBytes) {
        throw badRequest(`state: ${bytes} bytes of JSON, more than the ${limits.presenceStateBytes} allowed`);
      }
      // Guests and anonymous readers cannot edit: their cursors are nobody's business, and others
      // never receive what they attach (docs/notes-api.md, Presence).
      state = atLeast(req.role, 'user') ? sent : null;
    }
    const ok = hub.setPresence(req.principal?.subject ?? null, note.id, clientId, {
      file_id: fileId,
      typing,
      ...(state !== undefined ? { state } : {}),
    });
    return { ok };
  });
}
