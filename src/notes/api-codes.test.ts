import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { API_CODES, codeOfStatus } from './api-codes.ts';
import { ApiError } from './http.ts';

/** The `| status | `CODE` | when |` rows of docs/notes-api.md's error table, as code → status. */
function documentedCodes(): Record<string, number> {
  const doc = readFileSync(join(import.meta.dirname, '../../docs/notes-api.md'), 'utf8');
  const section = doc.slice(doc.indexOf('**Errors**'), doc.indexOf('## Objects'));
  const rows = [...section.matchAll(/^\s*\|\s*(\d{3})\s*\|\s*`([A-Z_]+)`\s*\|/gm)];
  const documented: Record<string, number> = {};
  for (const [, status, code] of rows) {
    // A code documented twice would hide a second status behind the first one.
    expect(documented, `${code} is documented twice`).not.toHaveProperty(code as string);
    documented[code as string] = Number(status);
  }
  return documented;
}

describe('API_CODES', () => {
  it("agree with docs/notes-api.md's error table, row by row", () => {
    const documented = documentedCodes();
    expect(Object.keys(documented).length).toBeGreaterThan(10);
    expect(documented).toEqual({ ...API_CODES });
  });

  it('give an ApiError its status', () => {
    const error = new ApiError('STORAGE_FULL', 'disk full');
    expect([error.status, error.code, error.message]).toEqual([507, 'STORAGE_FULL', 'disk full']);
  });

  it('name a status raised elsewhere by its first code, a client error without one as BAD_REQUEST', () => {
    expect([413, 415, 404, 403, 405].map(codeOfStatus)).toEqual([
      'TOO_LARGE',
      'UNSUPPORTED_MEDIA',
      'NOT_FOUND',
      'FORBIDDEN',
      'BAD_REQUEST',
    ]);
  });
});
