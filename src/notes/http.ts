// Small HTTP helpers shared by the notes routes: the `{code, message}` error, names, content types.
import { API_CODES, type ApiCode } from './api-codes.ts';

export type { ApiCode };

/** An error that crosses the wire: a string code, its status (from API_CODES) and a message safe to show. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: ApiCode;
  readonly extra: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(
    code: ApiCode,
    message: string,
    extra: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ) {
    super(message);
    this.status = API_CODES[code];
    this.code = code;
    this.extra = extra;
    this.headers = headers;
  }
}

export const notFound = (what: string): ApiError => new ApiError('NOT_FOUND', `${what} not found`);
export const badRequest = (message: string): ApiError => new ApiError('BAD_REQUEST', message);
export const forbidden = (message: string): ApiError => new ApiError('FORBIDDEN', message);

/**
 * Characters no name may hold: controls (C0, DEL, C1), line and paragraph separators, unpaired
 * surrogates, and invisible format characters — bidirectional controls (which make a name read
 * differently than it sorts and compares), zero-width spaces, soft hyphens, tags — except the
 * zero-width (non-)joiners that some scripts and emoji sequences need.
 */
const FORBIDDEN_IN_NAMES = /[\p{Cc}\p{Zl}\p{Zp}\p{Cs}]|(?![\u200c\u200d])\p{Cf}/u;

export const NAME_MAX = 120;

/**
 * The checks both kinds of names share: a string, trimmed, in Unicode NFC (what is stored and
 * compared, so names that look the same are the same), of 1–120 characters (code points), none of
 * them forbidden, not only digits (those are ids) and not `.` or `..`.
 */
function baseName(value: unknown, rule: string): string {
  if (typeof value !== 'string') throw badRequest('name: expected a string');
  const name = value.trim().normalize('NFC');
  const length = [...name].length;
  if (
    length === 0 ||
    length > NAME_MAX ||
    FORBIDDEN_IN_NAMES.test(name) ||
    /^\d+$/.test(name) ||
    name === '.' ||
    name === '..'
  ) {
    throw badRequest(`name: ${rule}`);
  }
  return name;
}

/** A name as it is looked up (a path parameter): NFC, so any normal form finds the stored name. */
export function lookupName(ref: string): string {
  return ref.normalize('NFC');
}

/** Note names are used in URLs and folder names of exports. */
export function checkNoteName(value: unknown): string {
  const rule = '1–120 letters, digits, spaces, ".", "-" or "_", not only digits, and not "." or ".."';
  const name = baseName(value, rule);
  if (!/^[\p{L}\p{M}\p{N} ._-]+$/u.test(name)) throw badRequest(`name: ${rule}`);
  return name;
}

export function checkFileName(value: unknown): string {
  const name = baseName(
    value,
    '1–120 characters without "/", "\\", control or invisible formatting characters, not only digits',
  );
  if (/[/\\]/.test(name)) {
    throw badRequest(
      'name: 1–120 characters without "/", "\\", control or invisible formatting characters, not only digits',
    );
  }
  return name;
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
