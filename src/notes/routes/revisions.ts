// The revision history of a file: list, view, diff (off the event loop, with a budget) and restore.
import type { FastifyInstance } from 'fastify';
import { toFile } from '../db.ts';
import { badRequest, notFound } from '../http.ts';
import { USER } from './gate.ts';
import type { Params, Query } from './kit.ts';
import { asker, expensive, single } from './limits.ts';

type FileP = Params<'note' | 'file'>;
type RevP = Params<'note' | 'file' | 'rev'>;

const revisionNumber = (value: string): number => {
  if (!/^\d{1,15}$/.test(value)) throw badRequest('revision: expected a number');
  return Number(value);
};

export async function revisionRoutes(app: FastifyInstance): Promise<void> {
  const { store, collab, tasks, limits, quotas } = app.notes;

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
        asker(req),
      );
      return { from, to, ...result };
    },
  );

  app.post<RevP>(
    '/api/notes/:note/files/:file/revisions/:rev/restore',
    { ...USER, onRequest: quotas.hook('revisions') },
    async (req) => {
      const note = req.note(req.params.note);
      const file = req.file(note, req.params.file);
      const user = req.need('user');
      const rev = store.revision(file.id, revisionNumber(req.params.rev));
      if (!rev) throw notFound(`revision ${req.params.rev}`);
      const saved = collab.replace(file, rev.content, user.name);
      return toFile(saved, true);
    },
  );
}
