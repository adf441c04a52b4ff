// The revision history of a file: list, view, diff (off the event loop, with a budget) and restore.
import type { FastifyInstance } from 'fastify';
import { toFile } from '../db.ts';
import { notFound } from '../http.ts';
import { USER } from './gate.ts';
import { asker, expensive } from './limits.ts';
import { route } from './route.ts';
import type { ZodProvider } from './schema.ts';

export async function revisionRoutes(root: FastifyInstance): Promise<void> {
  const app = root.withTypeProvider<ZodProvider>();
  const { store, collab, tasks, limits, quotas } = app.notes;

  route(app, 'GET /api/notes/:note/files/:file/revisions', async (req) => {
    const { file } = req.noteAndFile(req.params);
    return { revisions: store.listRevisions(file.id) };
  });

  route(app, 'GET /api/notes/:note/files/:file/revisions/:rev', async (req) => {
    const { file } = req.noteAndFile(req.params);
    const rev = store.revision(file.id, Number(req.params.rev));
    if (!rev) throw notFound(`revision ${req.params.rev}`);
    return { ...rev, size: Buffer.byteLength(rev.content) };
  });

  route(
    app,
    'GET /api/notes/:note/files/:file/revisions/:rev/diff',
    { config: expensive(limits) },
    async (req) => {
      const { file } = req.noteAndFile(req.params);
      const to = Number(req.params.rev);
      const { against } = req.query;
      const from = against === undefined ? to - 1 : Number(against);
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
        asker(req),
      );
      return { from, to, ...result };
    },
  );

  route(
    app,
    'POST /api/notes/:note/files/:file/revisions/:rev/restore',
    { ...USER, onRequest: quotas.hook('revisions') },
    async (req) => {
      const { file } = req.noteAndFile(req.params);
      const user = req.need('user');
      const rev = store.revision(file.id, Number(req.params.rev));
      if (!rev) throw notFound(`revision ${req.params.rev}`);
      const saved = collab.replace(file, rev.content, user.name);
      return toFile(saved, true);
    },
  );
}
