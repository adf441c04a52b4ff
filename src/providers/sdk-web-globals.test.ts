import { describe, expect, it } from 'vitest';
import { FormData, Headers, ReadableStream } from './sdk-web-globals.ts';

describe('the openai SDK stand-ins for Headers and FormData', () => {
  it('Headers: case-insensitive, appends join with a comma, delete, sorted lower-case iteration', () => {
    const headers = new Headers({ 'X-B': '1' });
    headers.append('x-b', ' 2 ');
    headers.set('Accept', 'application/json');
    headers.append('set-cookie', 'a=1');
    headers.append('Set-Cookie', 'b=2');
    expect(headers.get('x-B')).toBe('1, 2');
    expect(headers.has('ACCEPT')).toBe(true);
    expect([...headers]).toEqual([
      ['accept', 'application/json'],
      ['set-cookie', 'a=1'],
      ['set-cookie', 'b=2'],
      ['x-b', '1, 2'],
    ]);
    headers.delete('X-b');
    expect(headers.get('x-b')).toBeNull();
    const seen: string[] = [];
    headers.forEach((value, name) => {
      seen.push(`${name}=${value}`);
    });
    expect(seen).toEqual(['accept=application/json', 'set-cookie=a=1', 'set-cookie=b=2']);
  });

  it('instanceof accepts both the stand-in and real objects, nothing else', () => {
    expect(new Headers() instanceof Headers).toBe(true);
    expect(new globalThis.Headers() instanceof Headers).toBe(true);
    expect({ get: () => null } instanceof Headers).toBe(false);
    expect(new globalThis.FormData() instanceof FormData).toBe(true);
    expect({} instanceof FormData).toBe(false);
    // Constructing still gives the real FormData (file uploads).
    const form = new FormData();
    expect(form).toBeInstanceOf(globalThis.FormData);
    expect(new globalThis.ReadableStream() instanceof ReadableStream).toBe(true);
    expect(new ReadableStream()).toBeInstanceOf(globalThis.ReadableStream);
    expect({ getReader: () => null } instanceof ReadableStream).toBe(false);
  });
});
