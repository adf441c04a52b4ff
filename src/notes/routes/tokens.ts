// API tokens (admin): list, issue (the secret shown once), revoke.
import type { FastifyInstance } from 'fastify';
import { notFound } from '../http.ts';
import { ADMIN } from './gate.ts';
import { route } from './route.ts';
import type { ZodProvider } from './schema.ts';

export async function tokenRoutes(root: FastifyInstance): Promise<void> {
  const app = root.withTypeProvider<ZodProvider>();
  const { auth, hub } = app.notes;

  route(app, 'GET /api/tokens', async (req) => {
    req.need('admin');
    return { tokens: auth.listTokens() };
  });

  route(app, 'POST /api/tokens', ADMIN, async (req, reply) => {
    const admin = req.need('admin');
    const { name, role, expires_in_days: days } = req.body;
    const { token, row } = auth.createToken(name, role, admin.name, days, admin.subject);
    return reply.status(201).send({ ...row, token });
  });

  route(app, 'DELETE /api/tokens/:id', ADMIN, async (req) => {
    req.need('admin');
    const id = req.params.id;
    if (!/^\d{1,15}$/.test(id) || !auth.revokeToken(Number(id))) throw notFound(`token ${id}`);
    hub.recheck();
    return { ok: true };
  });
}
