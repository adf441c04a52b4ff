// docs/notes-api.md and the declared routes (api-routes.ts) must agree: the same routes, path
// parameters, query parameters and body fields (which of them optional). Edit one side alone and
// this fails; a route plugin registering a path without its declaration makes the server refuse
// to start (routes/schema.ts), so every server test fails.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { z } from '../config/zod.ts';
import { API, type RouteKey } from './api-routes.ts';

interface DocRoute {
  key: string;
  query: string[];
  body: Array<{ name: string; optional: boolean }> | null;
}

const doc = readFileSync(new URL('../../docs/notes-api.md', import.meta.url), 'utf8');

/** The route rows of the doc's tables: `METHOD /path` (several in a cell), then role, request. */
function docRoutes(): DocRoute[] {
  const routes: DocRoute[] = [];
  for (const line of doc.split('\n')) {
    if (!line.startsWith('| `')) continue;
    const cells = line.split(/(?<!\\)\|/).map((c) => c.trim());
    const request = cells[3] ?? '';
    for (const [, method, target] of cells[1]!.matchAll(/`(GET|POST|PUT|PATCH|DELETE) ([^`]+)`/g)) {
      const [path, inPath] = target!.split('?');
      const key = `${method} ${path!.replace(/\{(\w+)\}/g, ':$1')}`;
      routes.push({
        key,
        query: queryNames(`${inPath ? `?${inPath} ` : ''}${request}`),
        body: bodyFields(request),
      });
    }
  }
  return routes;
}

function queryNames(text: string): string[] {
  const names = new Set<string>();
  for (const [, list] of text.matchAll(/`\?([^`]*)`/g))
    for (const part of list!.split('&')) names.add(part.split('=')[0]!);
  for (const [, list] of text.matchAll(/\?([\w&=<>… -]+)/g))
    for (const part of list!.split('&')) names.add(part.split('=')[0]!.trim());
  return [...names].filter((n) => /^\w+$/.test(n)).sort();
}

/** The keys of the first `{…}` of a request cell; "any of" makes them all optional. */
function bodyFields(request: string): DocRoute['body'] {
  const braces = /`\{(.*?)\}`/.exec(request);
  if (!braces) return null;
  const anyOf = /any of/.test(request);
  return [...braces[1]!.matchAll(/(?:^|[{,]\s*)"(\w+)"(\?)?/g)].map(([, name, mark]) => ({
    name: name!,
    optional: anyOf || mark === '?',
  }));
}

const shapeOf = (schema: unknown): Record<string, z.ZodType> =>
  (schema as { shape?: Record<string, z.ZodType> } | undefined)?.shape ?? {};

describe('docs/notes-api.md and the declared routes', () => {
  const documented = docRoutes();
  const byKey = new Map(documented.map((r) => [r.key, r]));

  it('list the same routes', () => {
    expect([...byKey.keys()].sort()).toEqual(Object.keys(API).sort());
  });

  it('name the same path parameters, query parameters and body fields', () => {
    for (const key of Object.keys(API) as RouteKey[]) {
      const declared = API[key] as { params?: unknown; querystring?: unknown; body?: unknown };
      const listed = byKey.get(key);
      if (!listed) continue; // the list test names it
      const inPath = [...key.matchAll(/:(\w+)/g)].map((m) => m[1]).sort();
      expect(Object.keys(shapeOf(declared.params)).sort(), `${key}: params`).toEqual(inPath);
      expect(Object.keys(shapeOf(declared.querystring)).sort(), `${key}: query`).toEqual(listed.query);
      const fields = Object.entries(shapeOf(declared.body)).map(([name, type]) => ({
        name,
        optional: type.safeParse(undefined).success,
      }));
      expect(
        fields.sort((a, b) => a.name.localeCompare(b.name)),
        `${key}: body`,
      ).toEqual((listed.body ?? []).sort((a, b) => a.name.localeCompare(b.name)));
    }
  });
});
