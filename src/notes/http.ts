// Small HTTP helpers shared by the notes routes: the `{code, message}` error, cookies, names.
export type ApiCode =
  | 'BAD_REQUEST'
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'CSRF'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'TOO_LARGE'
  | 'UNSUPPORTED_MEDIA'
  | 'RATE_LIMITED'
  | 'INTERNAL';

/** An error that crosses the wire: a status, a string code and a message safe to show. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: ApiCode;
  readonly extra: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(
    status: number,
    code: ApiCode,
    message: string,
    extra: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ) {
    super(message);
    this.status = status;
    this.code = code;
    this.extra = extra;
    this.headers = headers;
  }
}

export const notFound = (what: string): ApiError => new ApiError(404, 'NOT_FOUND', `${what} not found`);
export const badRequest = (message: string): ApiError => new ApiError(400, 'BAD_REQUEST', message);
export const forbidden = (message: string): ApiError => new ApiError(403, 'FORBIDDEN', message);

export function parseCookies(header: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!header) return out;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (!name || name in out) continue;
    try {
      out[name] = decodeURIComponent(value);
    } catch {
      out[name] = value;
    }
  }
  return out;
}

export function cookie(
  name: string,
  value: string,
  opts: { secure: boolean; maxAge?: number; path?: string; sameSite?: 'Lax' | 'Strict' },
): string {
  const parts = [
    `${name}=${encodeURIComponent(value)}`,
    `Path=${opts.path ?? '/'}`,
    'HttpOnly',
    `SameSite=${opts.sameSite ?? 'Lax'}`,
  ];
  if (opts.maxAge !== undefined) parts.push(`Max-Age=${opts.maxAge}`);
  if (opts.secure) parts.push('Secure');
  return parts.join('; ');
}

const NOTE_NAME = /^[\p{L}\p{N} ._-]{1,120}$/u;

/** Note names are used in URLs and folder names of exports. */
export function checkNoteName(value: unknown): string {
  if (typeof value !== 'string') throw badRequest('name: expected a string');
  const name = value.trim();
  if (!NOTE_NAME.test(name) || /^\d+$/.test(name) || name === '.' || name === '..') {
    throw badRequest(
      'name: 1–120 letters, digits, spaces, ".", "-" or "_", not only digits, and not "." or ".."',
    );
  }
  return name;
}

export function checkFileName(value: unknown): string {
  if (typeof value !== 'string') throw badRequest('name: expected a string');
  const name = value.trim();
  const bad = /[/\\\x00-\x1f\x7f]/.test(name);
  if (bad || name.length === 0 || name.length > 120 || /^\d+$/.test(name) || name === '.' || name === '..') {
    throw badRequest('name: 1–120 characters without "/", "\\" or control characters, not only digits');
  }
  return name;
}

export function optionalBool(body: Record<string, unknown>, key: string): boolean | undefined {
  const value = body[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') throw badRequest(`${key}: expected true or false`);
  return value;
}

export function requireString(body: Record<string, unknown>, key: string, max = 10_000_000): string {
  const value = body[key];
  if (typeof value !== 'string') throw badRequest(`${key}: expected a string`);
  if (value.length > max) throw badRequest(`${key}: longer than ${max} characters`);
  return value;
}

export function bodyObject(body: unknown): Record<string, unknown> {
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) throw badRequest('expected a JSON object as the body');
  return body as Record<string, unknown>;
}

/** Policy for every HTML page: no inline script anywhere. Inline styles stay for Mermaid and KaTeX. */
export const PAGE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "font-src 'self' data:",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "form-action 'self'",
].join('; ');

export const UPLOAD_CSP = "default-src 'none'; sandbox";

const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  mjs: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  json: 'application/json; charset=utf-8',
  svg: 'image/svg+xml',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  ico: 'image/x-icon',
  woff: 'font/woff',
  woff2: 'font/woff2',
  ttf: 'font/ttf',
  txt: 'text/plain; charset=utf-8',
  map: 'application/json; charset=utf-8',
  webmanifest: 'application/manifest+json',
};

export function contentTypeFor(path: string): string {
  const ext = path.slice(path.lastIndexOf('.') + 1).toLowerCase();
  return TYPES[ext] ?? 'application/octet-stream';
}

/** Image types a browser shows inline without running anything (SVG can carry script: not here). */
export const SAFE_IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/avif']);
