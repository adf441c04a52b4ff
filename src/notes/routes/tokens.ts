// API tokens (admin): list, issue (the secret shown once), revoke.
import type { FastifyInstance } from 'fastify';
import { badRequest, bodyObject, notFound, requireString } from '../http.ts';
import { ROLES, type Role } from '../roles.ts';
import { ADMIN } from './gate.ts';
import type { Params } from './kit.ts';

const MAX_TOKEN_DAYS = 3650;

export async function tokenRoutes(app: FastifyInstance): Promise<void> {
  const { auth, hub } = app.notes;

  app.get('/api/tokens', async (req) => {
    req.need('admin');
    return { tokens: auth.listTokens() };
  });

  app.post('/api/tokens', ADMIN, async (req, reply) => {
    const admin = req.need('admin');
    const body = bodyObject(req.body);
    const name = requireString(body, 'name', 120).trim();
    if (!name) throw badRequest('name: must not be empty');
    if (/[\p{Cc}\p{Cf}\p{Cs}]/u.test(name)) throw badRequest('name: no control or invisible characters');
    const tokenRole = body.role;
    if (typeof tokenRole !== 'string' || !(ROLES as readonly string[]).includes(tokenRole)) {
      throw badRequest('role: expected guest, user or admin');
    }
    const days = body.expires_in_days;
    if (days !== undefined && (typeof days !== 'number' || !(days > 0) || days > MAX_TOKEN_DAYS))
      throw badRequest(`expires_in_days: a positive number of days, at most ${MAX_TOKEN_DAYS} (10 years)`);
    const { token, row } = auth.createToken(
      name,
      tokenRole as Role,
      admin.name,
      days as number | undefined,
      admin.subject,
    );
    return reply.status(201).send({ ...row, token });
  });

  app.delete<Params<'id'>>('/api/tokens/:id', ADMIN, async (req) => {
    req.need('admin');
    const id = req.params.id;
    if (!/^\d{1,15}$/.test(id) || !auth.revokeToken(Number(id))) throw notFound(`token ${id}`);
    hub.recheck();
    return { ok: true };
  });
}
