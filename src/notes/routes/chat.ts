// The agent chat of a note and the approvals an admin answers while a run waits.
import type { FastifyInstance } from 'fastify';
import { toApproval } from '../approvals.ts';
import { toMessage } from '../chat.ts';
import { TOOL_OUTPUT_HIDDEN } from '../events.ts';
import { ApiError, badRequest, bodyObject, notFound, requireString } from '../http.ts';
import { atLeast } from '../roles.ts';
import { ADMIN, USER } from './gate.ts';
import type { Params, Query } from './kit.ts';

export async function chatRoutes(app: FastifyInstance): Promise<void> {
  const { store, chat } = app.notes;
  const { approvals } = chat;

  app.get<Params<'note'> & Query>('/api/notes/:note/chat', async (req) => {
    const note = req.note(req.params.note);
    const q = req.query;
    const limit = Math.min(Math.max(Number(q.limit ?? 100) || 100, 1), 500);
    const before = q.before && /^\d+$/.test(q.before) ? Number(q.before) : undefined;
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

  app.post<Params<'note'>>('/api/notes/:note/chat', USER, async (req, reply) => {
    const note = req.note(req.params.note);
    const user = req.need('user');
    const body = bodyObject(req.body);
    const message = requireString(body, 'message', 100_000).trim();
    if (!message) throw badRequest('message: must not be empty');
    const started = chat.start(note, user, message);
    if (!started)
      throw new ApiError('CONFLICT', 'the assistant is already answering in this note; cancel it or wait');
    return reply.status(202).send({ run_id: started.runId, message: toMessage(started.message) });
  });

  app.post<Params<'note'>>('/api/notes/:note/chat/cancel', USER, async (req) => {
    const note = req.note(req.params.note);
    req.need('user');
    return { cancelled: chat.cancel(note.id) };
  });

  app.get<Query>('/api/approvals', async (req) => {
    req.need('admin');
    const ref = req.query.note;
    const note = ref ? req.note(ref) : undefined;
    return { approvals: approvals.pending(note?.id).map(toApproval) };
  });

  app.post<Params<'id'>>('/api/approvals/:id', ADMIN, async (req) => {
    const admin = req.need('admin');
    const body = bodyObject(req.body);
    const answer = body.answer;
    if (answer !== 'yes' && answer !== 'no' && answer !== 'session' && answer !== 'always')
      throw badRequest('answer: yes, no, session or always');
    const instead = body.instead === undefined ? undefined : requireString(body, 'instead', 4000);
    if (instead !== undefined && answer !== 'no') throw badRequest('instead: only with the answer no');
    const row = approvals.approval(req.params.id);
    if (!row) throw notFound(`approval '${req.params.id}'`);
    const updated = approvals.answer(row.id, answer, admin.name, instead);
    if (!updated) throw new ApiError('CONFLICT', `approval already ${row.status}`);
    return toApproval(updated);
  });
}
