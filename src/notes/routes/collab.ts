// Live editing: a file's Yjs state, clients' updates, and presence (who is where, who types).
import type { FastifyInstance } from 'fastify';
import { InvalidUpdateError } from '../collab.ts';
import { badRequest, bodyObject, optionalBool, requireString } from '../http.ts';
import type { Params } from './kit.ts';

export async function collabRoutes(app: FastifyInstance): Promise<void> {
  const { collab, hub } = app.notes;

  app.get<Params<'note' | 'file'>>('/api/notes/:note/files/:file/collab', async (req) => {
    const note = req.note(req.params.note);
    const file = req.file(note, req.params.file);
    return collab.state(file);
  });

  app.post<Params<'note' | 'file'>>('/api/notes/:note/files/:file/collab', async (req) => {
    const note = req.note(req.params.note);
    const file = req.file(note, req.params.file);
    const user = req.need('user');
    const body = bodyObject(req.body);
    const update = requireString(body, 'update');
    const clientId = body.client_id === undefined ? 'anonymous' : requireString(body, 'client_id', 64);
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(update)) throw badRequest('update: expected base64');
    try {
      // Returns once the update is committed to the update log: the answer means it is kept.
      collab.apply(file, Buffer.from(update, 'base64'), user.name, clientId);
    } catch (error) {
      if (error instanceof InvalidUpdateError)
        throw badRequest(`update: not a Yjs update (${error.message})`);
      throw error;
    }
    return { ok: true };
  });

  app.post<Params<'note'>>('/api/notes/:note/presence', async (req) => {
    const note = req.note(req.params.note);
    const body = bodyObject(req.body);
    const clientId = requireString(body, 'client_id', 64);
    const fileId = body.file_id === undefined || body.file_id === null ? null : Number(body.file_id);
    if (fileId !== null && !Number.isInteger(fileId)) throw badRequest('file_id: expected a number or null');
    const typing = optionalBool(body, 'typing') ?? false;
    return { ok: hub.setPresence(req.principal?.subject ?? null, note.id, clientId, fileId, typing) };
  });
}
