// Files of a note: create, read, save (3-way merged against the base revision), rename and
// visibility, the trash, and the revision history (list, view, diff, restore).
import type { FastifyInstance } from 'fastify';
import { atLeast } from '../auth.ts';
import { toFile } from '../db.ts';
import {
  ApiError,
  badRequest,
  bodyObject,
  checkFileName,
  notFound,
  optionalBool,
  requireString,
} from '../http.ts';
import type { Params, Query } from './kit.ts';
import { expensive, single } from './limits.ts';

type FileP = Params<'note' | 'file'>;
type RevP = Params<'note' | 'file' | 'rev'>;

const revisionNumber = (value: string): number => {
  if (!/^\d{1,15}$/.test(value)) throw badRequest('revision: expected a number');
  return Number(value);
};

export async function fileRoutes(app: FastifyInstance): Promise<void> {
  const { store, hub, collab, publishFile, tasks, limits } = app.notes;

  app.get<Params<'note'> & Query>('/api/notes/:note/files', async (req) => {
    const note = req.note(req.params.note);
    const q = req.query;
    const deleted = q.deleted === '1' || q.deleted === 'true';
    if (deleted) req.need('user');
    const publicOnly = !atLeast(req.role, 'user');
    return { files: store.listFiles(note.id, { publicOnly, deleted }).map((f) => toFile(f)) };
  });

  app.post<Params<'note'>>('/api/notes/:note/files', async (req, reply) => {
    const note = req.note(req.params.note);
    const user = req.need('user');
    const body = bodyObject(req.body);
    const name = checkFileName(body.name);
    const content = body.content === undefined ? '' : requireString(body, 'content');
    collab.checkSize(content);
    const isPublic = optionalBool(body, 'public') ?? true;
    if (store.findFile(note.id, name))
      throw new ApiError(409, 'CONFLICT', `a file named '${name}' exists in this note`);
    const file = store.tx(() => {
      const created = store.createFile(note.id, name, content, isPublic, user.name);
      publishFile('file.created', created);
      return created;
    });
    return reply.status(201).send(toFile(file, true));
  });

  app.get<FileP>('/api/notes/:note/files/:file', async (req) => {
    const note = req.note(req.params.note);
    const file = req.file(note, req.params.file);
    // The size of the text returned, live edits included (not the size of the last revision).
    const content = collab.text(file);
    return { ...toFile(file), size: Buffer.byteLength(content), content };
  });

  app.put<FileP>('/api/notes/:note/files/:file', async (req) => {
    const note = req.note(req.params.note);
    const file = req.file(note, req.params.file);
    const user = req.need('user');
    const body = bodyObject(req.body);
    const content = requireString(body, 'content');
    const base = body.base_revision;
    if (typeof base !== 'number' || !Number.isInteger(base) || base < 1) {
      throw badRequest('base_revision: the revision this text was based on (an integer ≥ 1) is required');
    }
    if (base > file.revision)
      throw badRequest(`base_revision: ${base} is newer than the file (${file.revision})`);
    const result = await collab.put(file, content, base, user.name);
    if (!result.ok) {
      const why = result.tooLarge
        ? "the changes are too large to merge within the server's budget"
        : 'the changes overlap';
      throw new ApiError(409, 'CONFLICT', `the file changed since revision ${base} and ${why}`, {
        current: result.current,
      });
    }
    return { ...toFile(result.file, true), merged: result.merged };
  });

  app.patch<FileP>('/api/notes/:note/files/:file', async (req) => {
    const note = req.note(req.params.note);
    const file = req.file(note, req.params.file);
    req.need('user');
    const body = bodyObject(req.body);
    const fields: { name?: string; public?: boolean } = {};
    if (body.name !== undefined) fields.name = checkFileName(body.name);
    const pub = optionalBool(body, 'public');
    if (pub !== undefined) fields.public = pub;
    if (fields.name && fields.name !== file.name && store.findFile(note.id, fields.name)) {
      throw new ApiError(409, 'CONFLICT', `a file named '${fields.name}' exists in this note`);
    }
    const updated = store.tx(() => {
      const row = store.updateFile(file.id, fields);
      publishFile('file.updated', row);
      return row;
    });
    return { ...toFile(updated), content: collab.text(updated) };
  });

  app.delete<FileP & Query>('/api/notes/:note/files/:file', async (req) => {
    const q = req.query;
    const purge = q.purge === '1' || q.purge === 'true';
    const note = req.note(req.params.note);
    const file = req.file(note, req.params.file, { deleted: purge });
    req.need(purge ? 'admin' : 'user');
    if (purge && !file.deleted_at)
      throw new ApiError(409, 'CONFLICT', 'delete the file first, then purge it');
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

  app.post<FileP>('/api/notes/:note/files/:file/restore', async (req) => {
    const note = req.note(req.params.note);
    const file = req.file(note, req.params.file, { deleted: true });
    req.need('user');
    if (!file.deleted_at) return toFile(file, true);
    if (store.findFile(note.id, file.name))
      throw new ApiError(409, 'CONFLICT', `a file named '${file.name}' exists; rename it first`);
    const restored = store.tx(() => {
      const row = store.setFileDeleted(file.id, false);
      publishFile('file.created', row);
      return row;
    });
    return toFile(restored, true);
  });

  // --- revisions

  app.get<FileP>('/api/notes/:note/files/:file/revisions', async (req) => {
    const note = req.note(req.params.note);
    const file = req.file(note, req.params.file);
    return { revisions: store.listRevisions(file.id) };
  });

  app.get<RevP>('/api/notes/:note/files/:file/revisions/:rev', async (req) => {
    const note = req.note(req.params.note);
    const file = req.file(note, req.params.file);
    const rev = store.revision(file.id, revisionNumber(req.params.rev));
    if (!rev) throw notFound(`revision ${req.params.rev}`);
    return { ...rev, size: Buffer.byteLength(rev.content) };
  });

  app.get<RevP & Query>(
    '/api/notes/:note/files/:file/revisions/:rev/diff',
    { config: expensive(limits) },
    async (req) => {
      const note = req.note(req.params.note);
      const file = req.file(note, req.params.file);
      const to = revisionNumber(req.params.rev);
      const against = single(req.query.against, 'against');
      const from = against === undefined ? to - 1 : revisionNumber(against);
      const newer = store.revision(file.id, to);
      if (!newer) throw notFound(`revision ${to}`);
      const older = from >= 1 ? store.revision(file.id, from) : undefined;
      if (from >= 1 && !older) throw notFound(`revision ${from}`);
      // Off the event loop, with a budget: past it the answer says "too large" (diff.ts).
      const result = await tasks.run(
        {
          kind: 'diff',
          oldName: `${file.name}@${from}`,
          newName: `${file.name}@${to}`,
          older: older?.content ?? '',
          newer: newer.content,
          budgetMs: limits.diffBudgetMs,
        },
        limits.diffBudgetMs * 4 + 1000,
      );
      return { from, to, ...result };
    },
  );

  app.post<RevP>('/api/notes/:note/files/:file/revisions/:rev/restore', async (req) => {
    const note = req.note(req.params.note);
    const file = req.file(note, req.params.file);
    const user = req.need('user');
    const rev = store.revision(file.id, revisionNumber(req.params.rev));
    if (!rev) throw notFound(`revision ${req.params.rev}`);
    const saved = collab.replace(file, rev.content, user.name);
    return toFile(saved, true);
  });
}
