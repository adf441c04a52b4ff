// The trash of a note's files: delete (to the trash, or purge from it) and restore.
import type { FastifyInstance } from 'fastify';
import { toFile } from '../db.ts';
import { ApiError } from '../http.ts';
import { USER } from './gate.ts';
import { route } from './route.ts';
import type { ZodProvider } from './schema.ts';

export async function trashRoutes(root: FastifyInstance): Promise<void> {
  const app = root.withTypeProvider<ZodProvider>();
  const { store, hub, collab, publishFile } = app.notes;

  route(app, 'DELETE /api/notes/:note/files/:file', USER, async (req) => {
    const { purge } = req.query;
    const { note, file } = req.noteAndFile(req.params, { deleted: purge });
    req.need(purge ? 'admin' : 'user');
    if (purge && !file.deleted_at) throw new ApiError('CONFLICT', 'delete the file first, then purge it');
    store.tx(() => {
      // Live edits not yet in a revision become one first, so the trash holds the text as it was.
      collab.close(file.id);
      if (purge) {
        store.purgeFile(file.id);
        return;
      }
      store.setFileDeleted(file.id, true);
      hub.publish({
        name: 'file.deleted',
        noteId: note.id,
        fileId: file.id,
        data: { note_id: note.id, file_id: file.id },
      });
    });
    return { ok: true };
  });

  route(app, 'POST /api/notes/:note/files/:file/restore', USER, async (req) => {
    const { note, file } = req.noteAndFile(req.params, { deleted: true });
    req.need('user');
    if (!file.deleted_at) return toFile(file, true);
    if (store.findFile(note.id, file.name))
      throw new ApiError('CONFLICT', `a file named '${file.name}' exists; rename it first`);
    const restored = store.tx(() => {
      const row = store.setFileDeleted(file.id, false);
      publishFile('file.created', row);
      return row;
    });
    return toFile(restored, true);
  });
}
