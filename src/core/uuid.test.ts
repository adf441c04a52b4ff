import { describe, expect, it } from 'vitest';
import { newUuid } from './uuid.ts';

const V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('newUuid', () => {
  it('makes version 4 UUIDs from the kernel generator, each different', () => {
    const ids = new Set(Array.from({ length: 200 }, () => newUuid()));
    expect(ids.size).toBe(200);
    for (const id of ids) expect(id).toMatch(V4);
  });

  it('sets the version and variant bits whatever the random bytes are', () => {
    expect(newUuid(() => Buffer.alloc(16, 0xff))).toBe('ffffffff-ffff-4fff-bfff-ffffffffffff');
    expect(newUuid(() => Buffer.alloc(16, 0))).toBe('00000000-0000-4000-8000-000000000000');
  });

  it("falls back to node:crypto when the kernel's generator cannot be read", () => {
    expect(newUuid(() => undefined)).toMatch(V4);
  });
});
