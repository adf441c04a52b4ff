// Users (admin): who can log in or has logged in, and role changes that take effect at once,
// event streams included.
import type { FastifyInstance } from 'fastify';
import { badRequest } from '../http.ts';
import type { Role } from '../roles.ts';
import { ADMIN } from './gate.ts';
import { route } from './route.ts';
import type { ZodProvider } from './schema.ts';

export async function userRoutes(root: FastifyInstance): Promise<void> {
  const app = root.withTypeProvider<ZodProvider>();
  const { auth, hub, db } = app.notes;

  route(app, 'GET /api/users', async (req) => {
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

  route(app, 'PATCH /api/users/:subject', ADMIN, async (req) => {
    const admin = req.need('admin');
    const { subject } = req.params;
    const { role: newRole } = req.body;
    if (subject === admin.subject && newRole !== 'admin') throw badRequest('you cannot demote yourself');
    auth.setRole(subject, newRole);
    hub.recheck();
    return { subject, role: newRole };
  });
}
