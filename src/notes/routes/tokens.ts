// API tokens (admin): list, issue (the secret shown once), revoke.
import type { FastifyInstance } from 'fastify';
import { API } from '../api-routes.ts';
import { notFound } from '../http.ts';
import { ADMIN } from './gate.ts';
import type { ZodProvider } from './schema.ts';

export async function tokenRoutes(root: FastifyInstance): Promise<void> {
  const app = root.withTypeProvider<ZodProvider>();
  const { auth, hub } = app.notes;

  app.get('/api/tokens', { schema: API['GET /api/tokens'] }, async (req) => {
    req.need('admin');
    return { tokens: auth.listTokens() };
  });

  app.post('/api/tokens', { ...ADMIN, schema: API['POST /api/tokens'] }, async (req, reply) => {
    const admin = req.need('admin');
    const { name, role, expires_in_days: days } = req.body;
    const { token, row } = auth.createToken(name, role, admin.name, days, admin.subject);
    return reply.status(201).send({ ...row, token });
  });

  app.delete('/api/tokens/:id', { ...ADMIN, schema: API['DELETE /api/tokens/:id'] }, async (req) => {
    req.need('admin');
    const id = req.params.id;
    if (!/^\d{1,15}$/.test(id) || !auth.revokeToken(Number(id))) throw notFound(`token ${id}`);
    hub.recheck();
    return { ok: true };
  });
}
