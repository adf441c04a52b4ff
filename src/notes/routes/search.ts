// Full-text search over files and chats, only within what the caller may see. The query is
// checked at the boundary; the search itself runs in a worker under a time budget (search.ts).
import type { FastifyInstance } from 'fastify';
import { badRequest } from '../http.ts';
import { atLeast } from '../roles.ts';
import { parseQuery } from '../search.ts';
import { asker, expensive } from './limits.ts';
import { route } from './route.ts';
import type { ZodProvider } from './schema.ts';

export async function searchRoutes(root: FastifyInstance): Promise<void> {
  const app = root.withTypeProvider<ZodProvider>();
  const { tasks, limits, searchIndex } = app.notes;

  route(app, 'GET /api/search', { config: expensive(limits) }, async (req) => {
    const { q, limit, note: noteRef } = req.query;
    const parsed = parseQuery(q ?? '', limits);
    if (!parsed.ok) throw badRequest(parsed.message);
    const note = noteRef ? req.note(noteRef) : undefined;
    const publicOnly = !atLeast(req.role, 'user');
    // What was saved a moment ago is found: a short queue is indexed now (a long one, after a
    // note's visibility changed or at a first start, goes on in the background).
    searchIndex.catchUp();
    const answer = await tasks.run(
      {
        kind: 'search',
        query: parsed.query,
        options: {
          publicOnly,
          limit,
          budgetMs: limits.searchBudgetMs,
          ...(note ? { noteId: note.id } : {}),
        },
      },
      limits.searchBudgetMs * 4 + 1000,
      asker(req),
    );
    return answer.partial ? { results: answer.results, partial: true } : { results: answer.results };
  });
}
