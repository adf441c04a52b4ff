import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type MockLlm, startMockLlm } from '../../tests/helpers/mock-llm.ts';
import { failureFromThrown } from './failure.ts';
import { httpFetch } from './http-fetch.ts';
import { readSse } from './sse.ts';

let mock: MockLlm;
let extra: Server;
let extraUrl: string;
const seen: { url: string; method: string; headers: Record<string, unknown>; body: string }[] = [];

beforeAll(async () => {
  mock = await startMockLlm();
  // Redirects, compression and odd statuses, which the model mock does not do.
  extra = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      seen.push({ url: req.url ?? '', method: req.method ?? '', headers: req.headers, body });
      const path = req.url ?? '/';
      if (path === '/303') res.writeHead(303, { location: '/echo' }).end();
      else if (path === '/307') res.writeHead(307, { location: '/echo' }).end();
      else if (path === '/cross')
        res.writeHead(302, { location: `${extraUrl.replace('127.0.0.1', 'localhost')}/echo` }).end();
      else if (path === '/loop') res.writeHead(302, { location: '/loop' }).end();
      else if (path === '/gzip') {
        res.writeHead(200, { 'content-encoding': 'gzip', 'content-type': 'text/plain' });
        res.end(gzipSync('squeezed text'));
      } else if (path === '/204') res.writeHead(204).end();
      else if (path === '/headers') {
        res.setHeader('x-multi', ['a', 'b']);
        res.setHeader('Set-Cookie', ['c=1', 'd=2']);
        res.end('\ufeffbom');
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ method: req.method, body, auth: req.headers.authorization ?? null }));
      }
    });
  });
  await new Promise<void>((resolve) => extra.listen(0, '127.0.0.1', resolve));
  extraUrl = `http://127.0.0.1:${(extra.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await mock.close();
  await new Promise((resolve) => extra.close(resolve));
});

beforeEach(() => {
  mock.script([]);
  seen.length = 0;
});

describe('httpFetch', () => {
  it('sends method, headers and a JSON body, and reads status, headers and json', async () => {
    mock.script([{ text: 'hello' }]);
    const response = await httpFetch(`${mock.baseUrl}/chat/completions`, {
      method: 'post',
      headers: { 'content-type': 'application/json', Authorization: 'Bearer sk-x' },
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(response.status).toBe(200);
    expect(response.ok).toBe(true);
    expect(response.headers.get('Content-Type')).toContain('application/json');
    const json = (await response.json()) as { choices: { message: { content: string } }[] };
    expect(json.choices[0]?.message.content).toBe('hello');
    const request = mock.requests[0];
    expect(request?.method).toBe('POST');
    expect(request?.headers.authorization).toBe('Bearer sk-x');
    expect(request?.body.model).toBe('m');
    await expect(response.text()).rejects.toThrow(/already been read/);
  });

  it('streams an SSE body chunk by chunk', async () => {
    mock.script([{ text: 'one two three', chunkSize: 3 }]);
    const response = await httpFetch(`${mock.baseUrl}/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ model: 'm', stream: true, messages: [] }),
    });
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const text: string[] = [];
    for await (const event of readSse(response.body as AsyncIterable<Uint8Array>)) {
      if (event.data === '[DONE]') break;
      const delta = JSON.parse(event.data).choices?.[0]?.delta?.content;
      if (delta) text.push(delta);
    }
    expect(text.join('')).toBe('one two three');
    expect(text.length).toBeGreaterThan(1);
  });

  it('carries the openai SDK: a streamed completion through the client', async () => {
    mock.script([{ text: 'via the SDK' }]);
    const client = new OpenAI({
      apiKey: 'sk-test',
      baseURL: mock.baseUrl,
      maxRetries: 0,
      fetch: httpFetch as unknown as NonNullable<ConstructorParameters<typeof OpenAI>[0]>['fetch'],
    });
    const stream = await client.chat.completions.create({ model: 'm', messages: [], stream: true });
    let content = '';
    for await (const chunk of stream) content += chunk.choices[0]?.delta?.content ?? '';
    expect(content).toBe('via the SDK');
    // An HTTP error becomes the SDK's APIError with the status and Retry-After readable.
    mock.script([{ status: 429, text: 'slow down', headers: { 'retry-after': '7' } }]);
    const error = await client.chat.completions.create({ model: 'm', messages: [] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(429);
    expect((error as InstanceType<typeof OpenAI.APIError>).headers?.get('retry-after')).toBe('7');
  });

  it('rejects with the signal reason when aborted before the answer, and ends a body mid-stream', async () => {
    mock.script([{ hang: true }]);
    const early = new AbortController();
    const pending = httpFetch(`${mock.baseUrl}/chat/completions`, {
      method: 'POST',
      body: '{"model":"m","messages":[]}',
      signal: early.signal,
    });
    setTimeout(() => early.abort(), 50);
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });

    const already = new AbortController();
    const reason = new Error('caller gave up');
    already.abort(reason);
    await expect(httpFetch(mock.url, { signal: already.signal })).rejects.toBe(reason);

    mock.script([{ text: 'a long answer cut short', chunkSize: 1, delay: 0 }]);
    const late = new AbortController();
    const response = await httpFetch(`${mock.baseUrl}/chat/completions`, {
      method: 'POST',
      body: '{"model":"m","stream":true,"messages":[]}',
      signal: late.signal,
    });
    const reading = (async () => {
      for await (const _ of response.body as AsyncIterable<Uint8Array>) late.abort();
    })();
    await expect(reading).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('fails like fetch on a refused connection, and the provider error names the cause', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const error = await httpFetch(`http://127.0.0.1:${port}/v1`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toBe('fetch failed');
    expect(((error as Error).cause as NodeJS.ErrnoException).code).toBe('ECONNREFUSED');
    expect(failureFromThrown(error, undefined, false).message).toMatch(/fetch failed: .*ECONNREFUSED/);
  });

  it('ends a body cut by the server with an error, not a silent short answer', async () => {
    mock.script([{ text: 'never finished', cutAfter: 1 }]);
    const response = await httpFetch(`${mock.baseUrl}/chat/completions`, {
      method: 'POST',
      body: '{"model":"m","stream":true,"messages":[]}',
    });
    await expect(response.text()).rejects.toThrow();
  });

  it('follows redirects as fetch does: 303 turns into GET, 307 keeps the body, credentials stay home', async () => {
    const r303 = await httpFetch(`${extraUrl}/303`, { method: 'POST', body: 'payload' });
    expect(r303.redirected).toBe(true);
    expect(r303.url).toBe(`${extraUrl}/echo`);
    expect(await r303.json()).toMatchObject({ method: 'GET', body: '' });

    const r307 = await httpFetch(`${extraUrl}/307`, { method: 'POST', body: 'payload' });
    expect(await r307.json()).toMatchObject({ method: 'POST', body: 'payload' });

    // localhost is another origin than 127.0.0.1: the Authorization header is not carried over.
    seen.length = 0;
    const crossed = await httpFetch(`${extraUrl}/cross`, { headers: { authorization: 'Bearer secret' } });
    expect(seen[0]?.headers.authorization).toBe('Bearer secret');
    expect(await crossed.json()).toMatchObject({ method: 'GET', auth: null });

    await expect(httpFetch(`${extraUrl}/loop`)).rejects.toThrow('fetch failed');
    const manual = await httpFetch(`${extraUrl}/303`, { redirect: 'manual' });
    expect(manual.status).toBe(303);
    expect(manual.headers.get('location')).toBe('/echo');
  });

  it('decodes gzip, has no body for 204, joins repeated headers and drops a BOM', async () => {
    expect(await (await httpFetch(`${extraUrl}/gzip`)).text()).toBe('squeezed text');
    const empty = await httpFetch(`${extraUrl}/204`);
    expect(empty.status).toBe(204);
    expect(empty.body).toBeNull();
    const headers = await httpFetch(`${extraUrl}/headers`);
    expect(headers.headers.get('x-multi')).toBe('a, b');
    expect([...headers.headers].filter(([name]) => name === 'set-cookie')).toEqual([
      ['set-cookie', 'c=1'],
      ['set-cookie', 'd=2'],
    ]);
    expect(await headers.text()).toBe('bom');
  });

  it('accepts a Headers object and pairs as request headers, and refuses other protocols', async () => {
    await httpFetch(`${extraUrl}/echo`, { headers: new Headers({ 'x-one': '1' }) }).then((r) => r.text());
    await httpFetch(`${extraUrl}/echo`, { headers: [['x-two', '2']] }).then((r) => r.text());
    expect(seen.map((request) => [request.headers['x-one'], request.headers['x-two']])).toEqual([
      ['1', undefined],
      [undefined, '2'],
    ]);
    await expect(httpFetch('file:///etc/passwd')).rejects.toThrow('fetch failed');
  });
});
