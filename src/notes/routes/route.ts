// A declared route registered from its key alone: `route(app, 'GET /api/notes/:note', options,
// handler)` splits the key of src/notes/api-routes.ts into method and path and passes the
// declaration as fastify's `schema`, so each route's method and path are written once and its
// `req.params`, `req.query`, `req.body` and answer are typed from the declaration.
import type {
  ContextConfigDefault,
  FastifyReply,
  FastifyRequest,
  FastifySchema,
  HTTPMethods,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
  RouteGenericInterface,
  RouteHandlerMethod,
  RouteShorthandOptions,
} from 'fastify';
import { API, type ApiRoutes, type RouteKey } from '../api-routes.ts';
import type { ZodApp, ZodProvider } from './schema.ts';

/** A declared route's handler: the request's parts and the answer typed from `API[K]`. */
export type Handler<K extends RouteKey> = RouteHandlerMethod<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  RouteGenericInterface,
  ContextConfigDefault,
  ApiRoutes[K],
  ZodProvider
>;

/**
 * A handler that answers what is not the declared JSON (a stream, text it rendered, a redirect):
 * the request typed from `API[K]`, the reply as fastify's own.
 */
export type RawHandler<K extends RouteKey> = (
  req: FastifyRequest<
    RouteGenericInterface,
    RawServerDefault,
    RawRequestDefaultExpression,
    ApiRoutes[K],
    ZodProvider
  >,
  reply: FastifyReply,
) => unknown;

/** Route options other than the schema (the declaration is the schema): `config`, hooks, `bodyLimit`. */
export type Options = Omit<
  RouteShorthandOptions<
    RawServerDefault,
    RawRequestDefaultExpression,
    RawReplyDefaultExpression,
    RouteGenericInterface,
    ContextConfigDefault,
    FastifySchema,
    ZodProvider
  >,
  'schema'
>;

function register(app: ZodApp, key: RouteKey, options: Options, handler: unknown): void {
  const space = key.indexOf(' ');
  app.route({
    ...options,
    method: key.slice(0, space) as HTTPMethods,
    url: key.slice(space + 1),
    schema: API[key],
    handler: handler as RouteHandlerMethod,
  });
}

/** Registers the declared route `key` ("METHOD path" of api-routes.ts): `options` (if any), `handler`. */
export function route<K extends RouteKey>(app: ZodApp, key: K, handler: Handler<K>): void;
export function route<K extends RouteKey>(app: ZodApp, key: K, options: Options, handler: Handler<K>): void;
export function route<K extends RouteKey>(
  app: ZodApp,
  key: K,
  ...rest: [Handler<K>] | [Options, Handler<K>]
): void {
  const [options, handler] = rest.length === 1 ? [{}, rest[0]] : rest;
  register(app, key, options, handler);
}

/** `route()` for a declared route whose answer is not the declared JSON (`RawHandler`). */
export function rawRoute<K extends RouteKey>(app: ZodApp, key: K, handler: RawHandler<K>): void {
  register(app, key, {}, handler);
}
