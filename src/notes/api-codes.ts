// Every error code the notes server answers with and the one HTTP status that goes with it.
// docs/notes-api.md's error table lists the same pairs; api-codes.test.ts fails when they differ.
export const API_CODES = {
  BAD_REQUEST: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  CSRF: 403,
  NOT_FOUND: 404,
  REQUEST_TIMEOUT: 408,
  CONFLICT: 409,
  TOO_LARGE: 413,
  URI_TOO_LONG: 414,
  UNSUPPORTED_MEDIA: 415,
  RATE_LIMITED: 429,
  QUOTA_EXCEEDED: 429,
  HEADERS_TOO_LARGE: 431,
  INTERNAL: 500,
  UPSTREAM_ERROR: 502,
  BUSY: 503,
  STORAGE_ERROR: 503,
  STORAGE_FULL: 507,
} as const;

export type ApiCode = keyof typeof API_CODES;

/**
 * The code for an error another layer (fastify, a plugin) raised with only a status: the first code
 * the table pairs with that status, or BAD_REQUEST when a client error has no code of its own.
 */
export function codeOfStatus(status: number): ApiCode {
  const found = (Object.keys(API_CODES) as ApiCode[]).find((code) => API_CODES[code] === status);
  return found ?? 'BAD_REQUEST';
}
