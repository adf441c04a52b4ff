// Every JSON route of the notes HTTP API, declared once: its path parameters, query, body and 2xx
// answer, in zod. The route plugins register each by its key (`route()`, routes/route.ts), which
// passes it as fastify's `schema` (validation and serialization: routes/schema.ts), the browser's
// `call()` takes its types from them (web/src/api.ts), and api-routes.test.ts fails when
// docs/notes-api.md lists other routes, parameters or fields. A key is "METHOD path" as fastify
// registers it.
import { z } from '../config/zod.ts';
import {
  Approval,
  ChatMessage,
  FileInfo,
  Note,
  Ok,
  Revision,
  Role,
  SearchHit,
  Token,
  User,
} from './api-objects.ts';
import { ApiError, checkFileName, checkNoteName } from './http.ts';

/** A string field; `max` characters at most. */
const str = (max = 10_000_000) =>
  z.string({ error: 'expected a string' }).max(max, { error: `longer than ${max} characters` });
const bool = () => z.boolean({ error: 'expected true or false' });
/** `?flag=1` or `?flag=true`; anything else (or nothing) is false. */
const flag = () =>
  z
    .string()
    .optional()
    .transform((v) => v === '1' || v === 'true');
/** A query parameter read as a number between `min` and `max`; absent or not a number: `fallback`. */
const clamped = (fallback: number, min: number, max: number) =>
  z
    .string()
    .optional()
    .transform((v) => Math.min(Math.max(Number(v ?? fallback) || fallback, min), max));

/** A name checked and normalized as http.ts does (the message without its "name: " prefix). */
const named = (check: (value: unknown) => string) =>
  z.string({ error: 'expected a string' }).transform((value, ctx) => {
    try {
      return check(value);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      ctx.addIssue({ code: 'custom', message: error.message.replace(/^name: /, ''), input: value });
      return z.NEVER;
    }
  });
const noteName = named(checkNoteName);
const fileName = named(checkFileName);

const params = <K extends string>(...names: K[]) =>
  z.object(Object.fromEntries(names.map((n) => [n, z.string()])) as Record<K, z.ZodString>);
const NOTE = params('note');
const FILE = params('note', 'file');
const REV = params('note', 'file', 'rev');

const revision = z.string().regex(/^\d{1,15}$/, { error: 'expected a number' });
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const MAX_TOKEN_DAYS = 3650;
const ANSWERS = ['yes', 'no', 'session', 'always'] as const;
const roleField = z.enum(Role.options, { error: 'expected guest, user or admin' });

/** What a login provider sends back; whatever else it sends (`error`, …) is kept for oauth.ts. */
const CALLBACK = z.looseObject({ code: z.string().optional(), state: z.string().optional() });

const files = z.object({ files: z.array(FileInfo) });
const UserEntry = z.object({
  subject: z.string(),
  name: z.string(),
  provider: z.string(),
  role: Role.nullable(),
});

export const API = {
  'GET /healthz': { response: { 200: z.object({ ok: z.literal(true), version: z.string() }) } },
  'GET /api/me': {
    response: {
      200: z.object({
        user: User.nullable(),
        role: z.enum(['anonymous', ...Role.options]),
        csrf_token: z.string().nullable(),
      }),
    },
  },
  'POST /auth/local': {
    body: z.object({
      username: z.string({ error: 'required' }).trim().min(1, { error: 'required' }),
      password: z.string({ error: 'required' }).min(1, { error: 'required' }).max(1024, {
        error: 'longer than 1024 characters',
      }),
    }),
    response: { 200: z.object({ user: User, csrf_token: z.string() }) },
  },
  'POST /auth/logout': { response: { 200: Ok } },
  'GET /auth/providers': {
    response: {
      200: z.object({
        local: z.literal(true),
        oauth: z.array(z.object({ name: z.string(), url: z.string() })),
        github: z.string().nullable(),
      }),
    },
  },
  'GET /auth/oauth/:name/start': { params: params('name') },
  'GET /auth/oauth/:name/callback': { params: params('name'), querystring: CALLBACK },
  'GET /auth/github/start': {},
  'GET /auth/github/callback': { querystring: CALLBACK },
  'GET /api/users': { response: { 200: z.object({ users: z.array(UserEntry) }) } },
  'PATCH /api/users/:subject': {
    params: z.object({ subject: z.string().max(512, { error: 'longer than any subject can be' }) }),
    body: z.object({ role: roleField }),
    response: { 200: z.object({ subject: z.string(), role: Role }) },
  },
  'GET /api/notes': {
    querystring: z.object({ deleted: flag() }),
    response: { 200: z.object({ notes: z.array(Note) }) },
  },
  'POST /api/notes': {
    body: z.object({ name: noteName, public: bool().optional() }),
    response: { 201: Note },
  },
  'GET /api/notes/:note': {
    params: NOTE,
    response: { 200: z.object({ note: Note, files: z.array(FileInfo) }) },
  },
  'PATCH /api/notes/:note': {
    params: NOTE,
    body: z.object({
      name: noteName.optional(),
      public: bool().optional(),
      model: z
        .string({ error: 'expected a model name or null' })
        .trim()
        .min(1, { error: 'expected a model name or null' })
        .nullable()
        .optional(),
    }),
    response: { 200: Note },
  },
  'DELETE /api/notes/:note': {
    params: NOTE,
    querystring: z.object({ purge: flag() }),
    response: { 200: Ok },
  },
  'POST /api/notes/:note/restore': { params: NOTE, response: { 200: Note } },
  'GET /api/notes/:note/export': {
    params: NOTE,
    querystring: z.object({ format: z.enum(['zip', 'tar'], { error: 'zip or tar' }).default('zip') }),
  },
  'GET /api/notes/:note/files': {
    params: NOTE,
    querystring: z.object({ deleted: flag() }),
    response: { 200: files },
  },
  'POST /api/notes/:note/files': {
    params: NOTE,
    body: z.object({ name: fileName, content: str().optional(), public: bool().optional() }),
    response: { 201: FileInfo },
  },
  'GET /api/notes/:note/files/:file': { params: FILE, response: { 200: FileInfo } },
  'PUT /api/notes/:note/files/:file': {
    params: FILE,
    body: z.object({
      content: str(),
      base_revision: z
        .number({ error: 'the revision this text was based on (an integer ≥ 1) is required' })
        .int({ error: 'the revision this text was based on (an integer ≥ 1) is required' })
        .min(1, { error: 'the revision this text was based on (an integer ≥ 1) is required' }),
    }),
    response: { 200: FileInfo.extend({ merged: z.boolean() }) },
  },
  'PATCH /api/notes/:note/files/:file': {
    params: FILE,
    body: z.object({ name: fileName.optional(), public: bool().optional() }),
    response: { 200: FileInfo },
  },
  'DELETE /api/notes/:note/files/:file': {
    params: FILE,
    querystring: z.object({ purge: flag() }),
    response: { 200: Ok },
  },
  'POST /api/notes/:note/files/:file/restore': { params: FILE, response: { 200: FileInfo } },
  'GET /api/notes/:note/files/:file/revisions': {
    params: FILE,
    response: { 200: z.object({ revisions: z.array(Revision) }) },
  },
  'GET /api/notes/:note/files/:file/revisions/:rev': {
    params: REV.extend({ rev: revision }),
    response: { 200: Revision },
  },
  'GET /api/notes/:note/files/:file/revisions/:rev/diff': {
    params: REV.extend({ rev: revision }),
    querystring: z.object({ against: revision.optional() }),
    response: {
      200: z.object({
        from: z.number(),
        to: z.number(),
        diff: z.string().nullable(),
        too_large: z.literal(true).optional(),
        message: z.string().optional(),
      }),
    },
  },
  'POST /api/notes/:note/files/:file/revisions/:rev/restore': {
    params: REV.extend({ rev: revision }),
    response: { 200: FileInfo },
  },
  'GET /api/notes/:note/files/:file/collab': {
    params: FILE,
    querystring: z.object({ client_id: z.string().max(64).optional() }),
    response: { 200: z.object({ state: z.string(), revision: z.number(), text: z.string() }) },
  },
  'POST /api/notes/:note/files/:file/collab': {
    params: FILE,
    body: z.object({
      update: str().regex(BASE64, { error: 'expected base64' }),
      client_id: str(64).optional(),
    }),
    response: { 200: Ok },
  },
  'POST /api/notes/:note/presence': {
    params: NOTE,
    body: z.object({
      client_id: str(64),
      file_id: z
        .number({ error: 'expected a number or null' })
        .int({ error: 'expected a number or null' })
        .nullable()
        .optional(),
      typing: bool().optional(),
      state: z
        .record(z.string(), z.unknown(), { error: 'expected a JSON object or null' })
        .nullable()
        .optional(),
    }),
    response: { 200: Ok },
  },
  'GET /api/events': {
    querystring: z.object({
      note_id: z.string().optional(),
      sync_file: z.string().optional(),
      sync_state: z.string().optional(),
      last_event_id: z.string().optional(),
      client_id: z.string().optional(),
    }),
  },
  'GET /api/notes/:note/chat': {
    params: NOTE,
    querystring: z.object({
      before: z
        .string()
        .optional()
        .transform((v) => (v && /^\d+$/.test(v) ? Number(v) : undefined)),
      limit: clamped(100, 1, 500),
    }),
    response: { 200: z.object({ messages: z.array(ChatMessage), running: z.string().nullable() }) },
  },
  'POST /api/notes/:note/chat': {
    params: NOTE,
    body: z.object({ message: str(100_000).trim().min(1, { error: 'must not be empty' }) }),
    response: { 202: z.object({ run_id: z.string(), message: ChatMessage }) },
  },
  'POST /api/notes/:note/chat/cancel': {
    params: NOTE,
    response: { 200: z.object({ cancelled: z.boolean() }) },
  },
  'GET /api/approvals': {
    querystring: z.object({ note: z.string().optional() }),
    response: { 200: z.object({ approvals: z.array(Approval) }) },
  },
  'POST /api/approvals/:id': {
    params: params('id'),
    body: z
      .object({
        answer: z.enum(ANSWERS, { error: 'yes, no, session or always' }),
        instead: str(4000).optional(),
      })
      .refine((b) => b.instead === undefined || b.answer === 'no', {
        error: 'only with the answer no',
        path: ['instead'],
      }),
    response: { 200: Approval },
  },
  'GET /api/search': {
    querystring: z.object({
      q: z.string().optional(),
      note: z.string().optional(),
      limit: clamped(20, 1, 100),
    }),
    response: { 200: z.object({ results: z.array(SearchHit), partial: z.boolean().optional() }) },
  },
  'POST /api/notes/:note/uploads': {
    params: NOTE,
    querystring: z.object({ name: fileName.default('upload') }),
    response: {
      201: z.object({
        hash: z.string(),
        name: z.string(),
        type: z.string(),
        size: z.number(),
        url: z.string(),
      }),
    },
  },
  'GET /api/notes/:note/uploads/:hash': { params: params('note', 'hash') },
  'GET /api/tokens': { response: { 200: z.object({ tokens: z.array(Token) }) } },
  'POST /api/tokens': {
    body: z.object({
      name: str(120)
        .trim()
        .min(1, { error: 'must not be empty' })
        .regex(/^[^\p{Cc}\p{Cf}\p{Cs}]*$/u, { error: 'no control or invisible characters' }),
      role: roleField,
      expires_in_days: z
        .number({ error: `a positive number of days, at most ${MAX_TOKEN_DAYS} (10 years)` })
        .positive({ error: `a positive number of days, at most ${MAX_TOKEN_DAYS} (10 years)` })
        .max(MAX_TOKEN_DAYS, { error: `a positive number of days, at most ${MAX_TOKEN_DAYS} (10 years)` })
        .optional(),
    }),
    response: { 201: Token.extend({ token: z.string() }) },
  },
  'DELETE /api/tokens/:id': { params: params('id'), response: { 200: Ok } },
} as const;

export type ApiRoutes = typeof API;
export type RouteKey = keyof ApiRoutes;
