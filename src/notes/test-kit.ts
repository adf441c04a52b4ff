// Shared set-up of the notes tests: a server on a fresh SQLite file with known accounts, and
// helpers that log in and make CSRF-correct requests through fastify inject().
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LightMyRequestResponse } from 'fastify';
import { loadConfig } from '../config/load.ts';
import { createLogger } from '../core/logger.ts';
import { type BuildOptions, build, type NotesServer } from './server.ts';

export const ACCOUNTS = `
[notes.local]
admins = ["ada:adapass1"]
users = ["uma:umapass1"]
guests = ["gus:guspass1"]
`;

export interface Kit {
  server: NotesServer;
  dir: string;
  warnings: string[];
}

export async function makeServer(toml = ACCOUNTS, extra: Partial<BuildOptions> = {}): Promise<Kit> {
  const dir = mkdtempSync(join(tmpdir(), 'rune-notes-test-'));
  const { config } = loadConfig({ env: {}, file: '/virtual/rune.toml', readFile: () => toml });
  const warnings: string[] = [];
  const logger = createLogger({ level: 'warn', write: (line) => warnings.push(line) });
  const server = await build({ config, dataDir: dir, logger, idleMs: 50, ...extra });
  return { server, dir, warnings };
}

export interface Client {
  name: string;
  cookie?: string;
  csrf?: string;
  bearer?: string;
  request(
    method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
    url: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<LightMyRequestResponse>;
}

function client(
  server: NotesServer,
  name: string,
  auth: { cookie?: string; csrf?: string; bearer?: string },
): Client {
  return {
    name,
    ...auth,
    request(method, url, body, headers = {}) {
      const h: Record<string, string> = { ...headers };
      if (auth.cookie) h.cookie = auth.cookie;
      if (auth.csrf && method !== 'GET') h['x-csrf-token'] = auth.csrf;
      if (auth.bearer) h.authorization = `Bearer ${auth.bearer}`;
      return server.app.inject({
        method,
        url,
        headers: h,
        ...(body === undefined ? {} : { payload: body as Record<string, unknown> }),
      });
    },
  };
}

export function anonymous(server: NotesServer): Client {
  return client(server, 'anonymous', {});
}

export function bearer(server: NotesServer, token: string): Client {
  return client(server, 'token', { bearer: token });
}

export async function loginAs(server: NotesServer, username: string, password: string): Promise<Client> {
  const res = await server.app.inject({
    method: 'POST',
    url: '/auth/local',
    payload: { username, password },
    headers: { accept: 'application/json' },
  });
  if (res.statusCode !== 200) throw new Error(`login ${username} failed: ${res.statusCode} ${res.body}`);
  const setCookie = String(res.headers['set-cookie']);
  const cookie = setCookie.split(';')[0]!;
  return client(server, username, { cookie, csrf: res.json().csrf_token as string });
}
