// Users (admin): who can log in or has logged in, and role changes that take effect at once,
// event streams included.
import type { FastifyInstance } from 'fastify';
import { badRequest, bodyObject } from '../http.ts';
import { ROLES, type Role } from '../roles.ts';
import { ADMIN } from './gate.ts';
import type { Params } from './kit.ts';

export async function userRoutes(app: FastifyInstance): Promise<void> {
  const { auth, hub, db } = app.notes;

  app.get('/api/users', async (req) => {
    req.need('admin');
    const local = [...auth.accounts.values()].map((a) => ({
      subject: `local:${a.name}`,
      name: a.name,
      provider: 'local',
      role: auth.roleOf(`local:${a.name}`),
    }));
    const others = db
      .prepare(
        "select subject, name, provider, role from sessions where subject not like 'local:%' group by subject",
      )
      .all() as Array<{ subject: string; name: string; provider: string; role: Role }>;
    // External identities the config no longer admits are not users any more.
    const current = others.flatMap((o) => {
      const role = auth.roleOf(o.subject);
      return role ? [{ ...o, role }] : [];
    });
    return { users: [...local, ...current] };
  });

  app.patch<Params<'id'>>('/api/users/:id', ADMIN, async (req) => {
    const admin = req.need('admin');
    const subject = req.params.id;
    const body = bodyObject(req.body);
    const newRole = body.role;
    if (typeof newRole !== 'string' || !(ROLES as readonly string[]).includes(newRole)) {
      throw badRequest('role: expected guest, user or admin');
    }
    if (subject === admin.subject && newRole !== 'admin') throw badRequest('you cannot demote yourself');
    if (subject.length > 512) throw badRequest('subject: longer than any subject can be');
    auth.setRole(subject, newRole as Role);
    hub.recheck();
    return { subject, role: newRole };
  });
}
