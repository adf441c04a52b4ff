// JSON calls to the notes server: the CSRF token on every state-changing request, errors as
// ApiError carrying the server's {code, message} (and, for a 409 save, the current text).
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly body: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

let csrfToken: string | null = null;
export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}
export function getCsrfToken(): string | null {
  return csrfToken;
}

export const enc = encodeURIComponent;

export async function api<T = Record<string, unknown>>(
  method: string,
  path: string,
  body?: unknown,
  init: { raw?: Blob | ArrayBuffer; contentType?: string } = {},
): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (method !== 'GET' && csrfToken) headers['X-CSRF-Token'] = csrfToken;
  let payload: BodyInit | undefined;
  if (init.raw !== undefined) {
    payload = init.raw;
    headers['Content-Type'] = init.contentType || 'application/octet-stream';
  } else if (body !== undefined) {
    payload = JSON.stringify(body);
    headers['Content-Type'] = 'application/json';
  }
  let response: Response;
  try {
    response = await fetch(path, { method, headers, body: payload, credentials: 'same-origin' });
  } catch (cause) {
    throw new ApiError(0, 'NETWORK', `the server cannot be reached (${String(cause)})`);
  }
  const text = await response.text();
  let data: Record<string, unknown> = {};
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = { message: text.slice(0, 200) };
    }
  }
  if (!response.ok) {
    throw new ApiError(
      response.status,
      typeof data['code'] === 'string' ? data['code'] : `HTTP_${response.status}`,
      typeof data['message'] === 'string' ? data['message'] : response.statusText,
      data,
    );
  }
  return data as T;
}

type Routes = import('../../src/notes/api-routes.ts').ApiRoutes;
/** A route of the notes API as the server declares it: "METHOD /path/:param". */
export type Route = keyof Routes;
type Part<K extends Route, P extends string> = Routes[K] extends Record<P, infer S> ? S : undefined;
type In<S> = S extends { _zod: { input: infer T } } ? T : never;
/** The path parameters of a route, by name (`:note` → `note`). */
export type ParamsOf<K extends Route> = {
  [P in K extends `${string} ${infer Path}` ? ParamNames<Path> : never]: string | number;
};
type ParamNames<Path> = Path extends `${string}:${infer Name}/${infer Rest}`
  ? Name | ParamNames<`/${Rest}`>
  : Path extends `${string}:${infer Name}`
    ? Name
    : never;
/** What a route takes as its JSON body. */
export type BodyOf<K extends Route> = In<Part<K, 'body'>>;
/** What a route answers on success (its 2xx JSON). */
export type ReplyOf<K extends Route> =
  Part<K, 'response'> extends infer R
    ? R extends Record<number, unknown>
      ? In<R[keyof R]>
      : undefined
    : never;

/** The method and path of a declared route, its parameters filled in. */
function target<K extends Route>(route: K, params: ParamsOf<K>): [method: string, path: string] {
  const [method, pattern] = (route as string).split(' ') as [string, string];
  const values = params as Record<string, string | number>;
  return [method, pattern.replace(/:(\w+)/g, (_, name: string) => enc(String(values[name])))];
}

/**
 * A call of a declared route, typed from its declaration (src/notes/api-routes.ts): `params`
 * fill the path, `body` and the answer have the declared shapes; `query` is added as it is.
 */
export function call<K extends Route>(
  route: K,
  params: ParamsOf<K>,
  body?: BodyOf<K>,
  query = '',
): Promise<ReplyOf<K>> {
  const [method, path] = target(route, params);
  return api<ReplyOf<K>>(method, `${path}${query}`, body);
}

/** A declared route whose body is bytes (an upload), its answer typed from the declaration. */
export function send<K extends Route>(
  route: K,
  params: ParamsOf<K>,
  raw: Blob,
  query = '',
): Promise<ReplyOf<K>> {
  const [method, path] = target(route, params);
  return api<ReplyOf<K>>(method, `${path}${query}`, undefined, { raw, contentType: raw.type });
}

export type User = import('../../src/notes/api-types.ts').User;
export type Role = 'anonymous' | 'guest' | 'user' | 'admin';
export type { Approval, FileInfo, Note, Revision } from '../../src/notes/api-types.ts';
export type ChatMessage = import('../../src/notes/api-types.ts').ChatMessage;
export interface Presence {
  client_id: string;
  name: string;
  role: Role;
  file_id: number | null;
  typing: boolean;
  /**
   * What the client attached, or null; the web editor puts its selection there as
   * `{cursor: {anchor, head}}` (base64 Yjs relative positions, see awareness.ts).
   */
  state?: Record<string, unknown> | null;
}
/** A hit of `GET /api/search`, as declared. */
export type SearchResult = import('../../src/notes/api-types.ts').SearchHit;

export const rank: Record<Role, number> = { anonymous: 0, guest: 1, user: 2, admin: 3 };

/** Bytes ↔ base64 for Yjs updates (btoa needs a binary string; chunked to stay off the stack limit). */
export function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}
export function fromBase64(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
