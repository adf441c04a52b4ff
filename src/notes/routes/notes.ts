// Notes: list, create, rename and visibility, the trash (soft delete, restore, purge), export.

import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import { toFile, toNote } from '../db.ts';
import { type Pace, tarNote, zipNote } from '../export.ts';
import { rateLimited } from '../guard.ts';
import { ApiError } from '../http.ts';
import { ByteBudget } from '../limits.ts';
import { atLeast } from '../roles.ts';
import { ADMIN, clientKey } from './gate.ts';
import { expensive } from './limits.ts';
import { route } from './route.ts';
import type { ZodProvider } from './schema.ts';

export async function noteRoutes(root: FastifyInstance): Promise<void> {
  const app = root.withTypeProvider<ZodProvider>();
  const { store, hub, collab, chat, db, uploads, publishNote, limits } = app.notes;
  const exportCpu = new ByteBudget(limits.exportCpuMsPerMinute / 60, app.notes.clock, 60);

  route(app, 'GET /api/notes', async (req) => {
    const { deleted } = req.query;
    if (deleted) req.need('admin');
    const publicOnly = !atLeast(req.role, 'user');
    return { notes: store.listNotes({ publicOnly, deleted }).map(toNote) };
  });

  route(app, 'POST /api/notes', ADMIN, async (req, reply) => {
    req.need('admin');
    const { name, public: isPublic = false } = req.body;
    if (store.findNote(name)) throw new ApiError('CONFLICT', `a note named '${name}' exists`);
    const note = store.tx(() => {
      const created = store.createNote(name, isPublic);
      publishNote('note.created', created);
      return created;
    });
    return reply.status(201).send(toNote(note));
  });

  route(app, 'GET /api/notes/:note', async (req) => {
    const note = req.note(req.params.note);
    const publicOnly = !atLeast(req.role, 'user');
    return {
      note: toNote(note),
      files: store.listFiles(note.id, { publicOnly, deleted: false }).map((f) => toFile(f)),
    };
  });

  route(app, 'PATCH /api/notes/:note', ADMIN, async (req) => {
    const note = req.note(req.params.note);
    req.need('admin');
    const fields: { name?: string; public?: boolean; model?: string | null } = {};
    const { name, public: pub, model } = req.body;
    if (name !== undefined) fields.name = name;
    if (pub !== undefined) fields.public = pub;
    if (model !== undefined) fields.model = model;
    if (fields.name && fields.name !== note.name && store.findNote(fields.name)) {
      throw new ApiError('CONFLICT', `a note named '${fields.name}' exists`);
    }
    const updated = store.tx(() => {
      const row = store.updateNote(note.id, fields);
      publishNote('note.updated', row);
      return row;
    });
    // Visibility may have shrunk: streams of guests watching this note close now.
    hub.recheck(note.id);
    return toNote(updated);
  });

  route(app, 'DELETE /api/notes/:note', ADMIN, async (req) => {
    const { purge } = req.query;
    req.need('admin');
    const note = req.note(req.params.note, { deleted: purge });
    if (purge) {
      if (!note.deleted_at)
        throw new ApiError('CONFLICT', 'delete the note first, then purge it from the trash');
      const hashes = store.tx(() => {
        for (const file of store.listFiles(note.id, { publicOnly: false, deleted: true }))
          collab.close(file.id);
        for (const file of store.listFiles(note.id, { publicOnly: false, deleted: false }))
          collab.close(file.id);
        const held = (
          db.prepare('select hash from uploads where note_id = ?').all(note.id) as Array<{ hash: string }>
        ).map((r) => r.hash);
        store.purgeNote(note.id);
        return held;
      });
      // Files go only once the purge is committed: a crash before leaves the note whole.
      chat.removeWorkspace(note.id);
      // Upload bytes are stored once per content hash and may be shared with other notes: remove
      // only those no note references any more (and no upload in progress is placing).
      const stillUsed = db.prepare('select 1 from uploads where hash = ? limit 1');
      uploads.removeUnused(hashes, (hash) => stillUsed.get(hash) !== undefined);
      return { ok: true };
    }
    chat.cancel(note.id);
    store.tx(() => {
      for (const file of store.listFiles(note.id, { publicOnly: false, deleted: false }))
        collab.close(file.id);
      store.setNoteDeleted(note.id, true);
      hub.publish({ name: 'note.deleted', noteId: note.id, data: { note_id: note.id } });
    });
    hub.recheck(note.id);
    return { ok: true };
  });

  route(app, 'POST /api/notes/:note/restore', ADMIN, async (req) => {
    req.need('admin');
    const note = req.note(req.params.note, { deleted: true });
    if (!note.deleted_at) return toNote(note);
    if (store.findNote(note.name))
      throw new ApiError('CONFLICT', `a note named '${note.name}' exists; rename it first`);
    const restored = store.tx(() => {
      const row = store.setNoteDeleted(note.id, false);
      publishNote('note.created', row);
      return row;
    });
    return toNote(restored);
  });

  route(app, 'GET /api/notes/:note/export', { config: expensive(limits) }, async (req, reply) => {
    const note = req.note(req.params.note);
    const { format } = req.query;
    // Compressing costs CPU: each client (person, or address) has a budget of it per minute.
    const spent = exportCpu.waitFor(clientKey(req), 1);
    if (spent > 0)
      throw rateLimited(
        Math.ceil(spent),
        'exports from this client used up their CPU budget (export_cpu_ms_per_minute)',
      );
    const publicOnly = !atLeast(req.role, 'user');
    // Streamed: each file's text is read when the archive reaches it (export.ts).
    const files = store.listFiles(note.id, { publicOnly, deleted: false }).map((f) => ({
      name: f.name,
      content: () => collab.text(store.fileById(f.id) ?? f),
      mtime: new Date(f.updated_at),
    }));
    const key = clientKey(req);
    const pace: Pace = async (cpuMs) => {
      exportCpu.charge(key, cpuMs);
      // A client past its budget is slowed to it: its export waits, others' requests do not.
      const wait = exportCpu.waitFor(key, 1);
      await (wait > 0 ? sleep(Math.min(wait * 1000, 60_000)) : nextTurn());
    };
    const body = format === 'zip' ? zipNote(note.name, files, pace) : tarNote(note.name, files, pace);
    const ascii = note.name.replace(/[^A-Za-z0-9._-]/g, '_');
    return reply
      .header('Content-Type', format === 'zip' ? 'application/zip' : 'application/x-tar')
      .header(
        'Content-Disposition',
        `attachment; filename="${ascii}.${format}"; filename*=UTF-8''${encodeURIComponent(note.name)}.${format}`,
      )
      .send(body);
  });
}
