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

export interface User {
  name: string;
  role: Role;
  provider: string;
}
export type Role = 'anonymous' | 'guest' | 'user' | 'admin';
export type { Approval, FileInfo, Note } from '../../src/notes/api-types.ts';
export interface Revision {
  revision: number;
  file_id: number;
  author: string | null;
  created_at: string;
  size: number;
  content?: string;
}
export interface ChatMessage {
  id: number;
  note_id: number;
  role: 'user' | 'assistant' | 'tool' | 'system';
  author: string | null;
  content: string;
  run_id: string | null;
  created_at: string;
}
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
export interface SearchResult {
  kind: 'file' | 'chat';
  note_id: number;
  note: string;
  file_id?: number;
  file?: string;
  message_id?: number;
  snippet: { text: string; match: boolean }[];
}

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
