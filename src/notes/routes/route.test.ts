// route(): a declared route registered from its key serves that method and path with its
// declaration as the schema, and the server serves every declared route. The type checks (a key
// that is not declared, parameters typed from the declaration) are checked by `npm run typecheck`.
import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { API, type RouteKey } from '../api-routes.ts';
import { type Kit, makeServer } from '../test-kit.ts';
import { route } from './route.ts';
import { useZodSchemas, type ZodProvider } from './schema.ts';

let kit: Kit | undefined;
afterEach(async () => {
  await kit?.server.close();
  kit = undefined;
});

function bare() {
  const app = Fastify();
  useZodSchemas(app);
  return app.withTypeProvider<ZodProvider>();
}

describe('route()', () => {
  it('registers the method and path of its key with the declaration as the schema', async () => {
    const app = bare();
    route(app, 'DELETE /api/tokens/:id', { config: { need: 'admin' } }, async (req) => {
      // @ts-expect-error: the declaration's path parameter is a string.
      const id: number = req.params.id;
      // Serialized from the declared answer: what it does not declare is dropped.
      const answer = { ok: true as const, id };
      return answer;
    });
    // A key that is not declared does not compile, and at run time the server refuses it.
    // @ts-expect-error: not a key of API.
    expect(() => route(app, 'GET /api/nope', async () => ({}))).toThrow(/route GET \/api\/nope/);
    const res = await app.inject({ method: 'DELETE', url: '/api/tokens/7' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ok: true });
    expect(app.hasRoute({ method: 'GET', url: '/api/tokens/:id' })).toBe(false);
    await app.close();
  });

  it('validates the request against the declaration', async () => {
    const app = bare();
    route(app, 'POST /api/notes', { config: { need: 'admin' } }, async (req, reply) =>
      reply.status(201).send({
        id: 1,
        name: req.body.name,
        public: req.body.public ?? false,
        model: null,
        created_at: 'now',
        updated_at: 'now',
        deleted_at: null,
      }),
    );
    const bad = await app.inject({ method: 'POST', url: '/api/notes', payload: { name: 3 } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toBe('name: expected a string');
    await app.close();
  });

  it('a declared path registered without route() (its schema not the declaration) stops the server', async () => {
    const app = bare();
    expect(() => app.get('/api/tokens', async () => ({ tokens: [] }))).toThrow(
      /GET \/api\/tokens: declare it in src\/notes\/api-routes.ts and register it with route\(\)/,
    );
    await app.close();
  });

  it('every declared route is served by the notes server', async () => {
    kit = await makeServer();
    const missing = (Object.keys(API) as RouteKey[]).filter((key) => {
      const [method, url] = key.split(' ') as [string, string];
      return !kit!.server.app.hasRoute({ method: method as 'GET', url });
    });
    expect(missing).toEqual([]);
  });
});
