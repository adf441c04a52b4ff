// The agent chat of a note and the approvals an admin answers while a run waits.
import type { FastifyInstance } from 'fastify';
import { toApproval } from '../approvals.ts';
import { toMessage } from '../chat.ts';
import { TOOL_OUTPUT_HIDDEN } from '../events.ts';
import { ApiError, notFound } from '../http.ts';
import { atLeast } from '../roles.ts';
import { ADMIN, USER } from './gate.ts';
import { route } from './route.ts';
import type { ZodProvider } from './schema.ts';

export async function chatRoutes(root: FastifyInstance): Promise<void> {
  const app = root.withTypeProvider<ZodProvider>();
  const { store, chat } = app.notes;
  const { approvals } = chat;

  route(app, 'GET /api/notes/:note/chat', async (req) => {
    const note = req.note(req.params.note);
    const { limit, before } = req.query;
    const reader = !atLeast(req.role, 'user');
    return {
      messages: store
        .listChat(note.id, before, limit)
        .map((m) =>
          reader && m.role === 'tool' ? { ...toMessage(m), content: TOOL_OUTPUT_HIDDEN } : toMessage(m),
        ),
      running: chat.running(note.id),
    };
  });

  route(app, 'POST /api/notes/:note/chat', USER, async (req, reply) => {
    const note = req.note(req.params.note);
    const user = req.need('user');
    const { message } = req.body;
    const started = chat.start(note, user, message);
    if (!started)
      throw new ApiError('CONFLICT', 'the assistant is already answering in this note; cancel it or wait');
    return reply.status(202).send({ run_id: started.runId, message: toMessage(started.message) });
  });

  route(app, 'POST /api/notes/:note/chat/cancel', USER, async (req) => {
    const note = req.note(req.params.note);
    req.need('user');
    return { cancelled: chat.cancel(note.id) };
  });

  route(app, 'GET /api/approvals', async (req) => {
    req.need('admin');
    const ref = req.query.note;
    const note = ref ? req.note(ref) : undefined;
    return { approvals: approvals.pending(note?.id).map(toApproval) };
  });

  route(app, 'POST /api/approvals/:id', ADMIN, async (req) => {
    const admin = req.need('admin');
    const { answer, instead } = req.body;
    const row = approvals.approval(req.params.id);
    if (!row) throw notFound(`approval '${req.params.id}'`);
    const updated = approvals.answer(row.id, answer, admin.name, instead);
    if (!updated) throw new ApiError('CONFLICT', `approval already ${row.status}`);
    return toApproval(updated);
  });
}
