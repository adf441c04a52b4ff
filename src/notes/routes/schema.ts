// Fastify's schema mechanism over zod, the project's schema language: a route's `schema` holds zod
// types (declared once in src/notes/api-routes.ts), requests are validated by zod (a failure is
// the API's 400 BAD_REQUEST naming the field), and 2xx JSON answers are serialized by
// fast-json-stringify from the JSON Schema of the declared response. Why not a published zod
// type provider: docs/adr/0040-notes-http-schemas.md.
import fastJsonStringify from 'fast-json-stringify';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  FastifySchemaCompiler,
  FastifySerializerCompiler,
  FastifyTypeProvider,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import { z } from '../../config/zod.ts';
import { API } from '../api-routes.ts';
import { badRequest } from '../http.ts';

/** `app.withTypeProvider<ZodProvider>()`: request parts and replies typed from the route's zod schema. */
export interface ZodProvider extends FastifyTypeProvider {
  validator: this['schema'] extends z.ZodType ? z.output<this['schema']> : unknown;
  serializer: this['schema'] extends z.ZodType ? z.input<this['schema']> : unknown;
}

/** A route plugin's instance with the zod type provider. */
export type ZodApp = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  ZodProvider
>;

/** What a failed check says: the first problem, prefixed by the field it is about. */
export function describeIssue(error: z.ZodError, part: string): string {
  const issue = error.issues[0];
  if (!issue) return `${part}: invalid`;
  const field = issue.path.join('.');
  if (!field) return part === 'body' ? 'expected a JSON object as the body' : `${part}: ${issue.message}`;
  return `${field}: ${issue.message}`;
}

const validatorCompiler: FastifySchemaCompiler<z.ZodType> = ({ schema, httpPart }) => {
  const part = httpPart ?? 'body';
  return (data: unknown) => {
    // No body (or JSON null) is an empty object: every field the route requires is then named.
    const input = part === 'body' && (data === null || data === undefined) ? {} : data;
    const result = schema.safeParse(input);
    if (result.success) return { value: result.data };
    return { error: badRequest(describeIssue(result.error, part)) };
  };
};

/** The JSON Schema fast-json-stringify compiles for a declared answer. */
export function jsonSchemaOf(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _drop, ...json } = z.toJSONSchema(schema, {
    target: 'draft-7',
    io: 'output',
    unrepresentable: 'any',
  }) as Record<string, unknown>;
  return simpler(json) as Record<string, unknown>;
}

/**
 * `anyOf: [{type: T}, {type: 'null'}]` (zod's `nullable`) as `type: [T, 'null']`: the same schema,
 * which fast-json-stringify writes without trying each branch.
 */
function simpler(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(simpler);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) out[key] = simpler(value);
  const anyOf = out['anyOf'] as Array<Record<string, unknown>> | undefined;
  if (anyOf?.length === 2 && anyOf[1]?.['type'] === 'null' && Object.keys(anyOf[1]).length === 1) {
    const first = anyOf[0] as Record<string, unknown>;
    if (typeof first['type'] === 'string' && Object.keys(first).length === 1) {
      delete out['anyOf'];
      out['type'] = [first['type'], 'null'];
    }
  }
  return out;
}

/** Compiled once per declaration, whatever number of servers a process starts (tests start many). */
const compiled = new WeakMap<z.ZodType, (data: unknown) => string>();

const serializerCompiler: FastifySerializerCompiler<z.ZodType> = ({ schema }) => {
  let serialize = compiled.get(schema);
  if (!serialize) {
    serialize = fastJsonStringify(jsonSchemaOf(schema) as unknown as Parameters<typeof fastJsonStringify>[0]);
    compiled.set(schema, serialize);
  }
  return serialize;
};

/** Paths of the JSON API: each route there is declared in api-routes.ts. */
const DECLARED = /^\/(api|auth)\/|^\/healthz$/;

/**
 * Sets the pair on the root instance (every route plugin's `schema` is zod), and refuses to start
 * a server with an API route whose `schema` is not its declaration in api-routes.ts, so what the
 * doc's drift test (api-routes.test.ts) compares is what is served.
 */
export function useZodSchemas(app: FastifyInstance): void {
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.addHook('onRoute', (route) => {
    if (!DECLARED.test(route.url)) return;
    for (const method of [route.method].flat()) {
      if (method === 'HEAD') continue;
      const key = `${method} ${route.url}`;
      if (!(key in API) || route.schema !== API[key as keyof typeof API]) {
        throw new Error(
          `notes route ${key}: declare it in src/notes/api-routes.ts and register it with route() (routes/route.ts)`,
        );
      }
    }
  });
}
