// Full-text search over files and chats, only within what the caller may see.
import type { FastifyInstance } from 'fastify';
import { atLeast } from '../auth.ts';
import { ftsQuery, snippetSegments } from '../db.ts';
import { badRequest } from '../http.ts';
import type { Query } from './kit.ts';

export async function searchRoutes(app: FastifyInstance): Promise<void> {
  const { store } = app.notes;

  app.get<Query>('/api/search', async (req) => {
    const q = req.query;
    const query = ftsQuery(q.q ?? '');
    if (!query) throw badRequest('q: give at least one word');
    const limit = Math.min(Math.max(Number(q.limit ?? 20) || 20, 1), 100);
    const note = q.note ? req.note(q.note) : undefined;
    const publicOnly = !atLeast(req.role, 'user');
    const opts = { publicOnly, limit, ...(note ? { noteId: note.id } : {}) };
    const files = store.searchFiles(query, opts).map((r) => ({
      kind: 'file',
      note_id: r.note_id,
      note: r.note,
      file_id: r.file_id,
      file: r.file,
      snippet: snippetSegments(r.snippet),
    }));
    const chats = store.searchChat(query, opts).map((r) => ({
      kind: 'chat',
      note_id: r.note_id,
      note: r.note,
      message_id: r.message_id,
      snippet: snippetSegments(r.snippet),
    }));
    return { results: [...files, ...chats].slice(0, limit) };
  });
}
