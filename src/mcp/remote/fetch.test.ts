// The guarded fetch against real local HTTP servers; names resolve through an injected lookup, so a
// "public" name can be made to point at a loopback server (what DNS rebinding does).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { whileCollecting } from '../../../tests/helpers/gc.ts';
import type { LookupFn } from '../../tools/types.ts';
import { BodyLimit, createGuardedFetch, RemoteNetworkError, RemoteRefusedError } from './fetch.ts';
import type { HostGrant } from './hosts.ts';

let server: Server;
let port: number;
let connections = 0;
const seen: Array<{ url: string; headers: IncomingMessage['headers'] }> = [];
const routes: Record<string, (req: IncomingMessage, res: ServerResponse) => void> = {};

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push({ url: req.url ?? '', headers: req.headers });
    const route = routes[(req.url ?? '').split('?')[0] as string];
    if (route) route(req, res);
    else res.writeHead(404).end('no');
  });
  server.on('connection', () => {
    connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => {
  server.closeAllConnections();
  return new Promise<void>((resolve) => server.close(() => resolve()));
});

routes['/ok'] = (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
routes['/big'] = (_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(Buffer.alloc(5000, 'a'));
};
routes['/events'] = (_req, res) => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  // Ten events of 302 bytes: 3020 in all, none over the 1000-byte event limit.
  for (let i = 0; i < 10; i++) res.write(`data: ${'x'.repeat(294)}\n\n`);
  res.end();
};
routes['/huge-event'] = (_req, res) => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.end(`data: ${'x'.repeat(3000)}\n\n`);
};
routes['/hang'] = () => {};
routes['/redirect-away'] = (_req, res) =>
  res.writeHead(302, { location: 'http://elsewhere.example.net/steal' }).end();
routes['/redirect-home'] = (_req, res) => res.writeHead(307, { location: '/ok' }).end();

const grant = (over: Partial<HostGrant> = {}): HostGrant => ({
  server: 'test',
  origin: 'table',
  tableDomains: [],
  policyDomains: [],
  unrestricted: false,
  ...over,
});
const toLoopback: LookupFn = async () => [{ address: '127.0.0.1', family: 4 }];

async function refused(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(RemoteRefusedError);
    return (error as Error).message;
  }
  throw new Error('expected a refusal');
}

describe('createGuardedFetch', () => {
  it('fetches from a loopback server granted by its literal address and port', async () => {
    const fetch = createGuardedFetch({ grant: grant({ tableDomains: [`127.0.0.1:${port}`] }) });
    const response = await fetch(`http://127.0.0.1:${port}/ok`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ok: true });
    fetch.close();
  });

  it('refuses a host that is not granted, before connecting', async () => {
    const before = connections;
    const fetch = createGuardedFetch({ grant: grant({ policyDomains: ['mcp.example.com'] }) });
    const message = await refused(fetch(`http://127.0.0.1:${port}/ok`));
    expect(message).toContain(`add "127.0.0.1:${port}" to allowed_domains in the [[mcp]] table "test"`);
    expect(connections).toBe(before);
  });

  it('refuses a name that resolves to a private address unless that address is listed itself', async () => {
    const before = connections;
    const wildcard = createGuardedFetch({
      grant: grant({ tableDomains: ['*.example.com'] }),
      lookup: toLoopback,
    });
    const message = await refused(wildcard(`http://mcp.example.com:${port}/ok`));
    expect(message).toMatch(
      /refused to connect to mcp\.example\.com .*127\.0\.0\.1 is a loopback, private or reserved address/,
    );
    expect(connections).toBe(before);
    // Listed by name only: its DNS answer could be anyone's, so the loopback stays closed.
    const named = createGuardedFetch({
      grant: grant({ tableDomains: [`mcp.example.com:${port}`] }),
      lookup: toLoopback,
    });
    expect(await refused(named(`http://mcp.example.com:${port}/ok`))).toMatch(
      new RegExp(`127\\.0\\.0\\.1 is a loopback.*add "127\\.0\\.0\\.1:${port}"`),
    );
    expect(connections).toBe(before);
    const literal = createGuardedFetch({
      grant: grant({ tableDomains: [`mcp.example.com:${port}`, `127.0.0.1:${port}`] }),
      lookup: toLoopback,
    });
    expect((await literal(`http://mcp.example.com:${port}/ok`)).status).toBe(200);
    literal.close();
  });

  it('checks every address a name resolves to, not only the first', async () => {
    const fetch = createGuardedFetch({
      grant: grant({ tableDomains: ['*.example.com'] }),
      lookup: async () => [
        { address: '93.184.216.34', family: 4 },
        { address: '10.0.0.7', family: 4 },
      ],
    });
    expect(await refused(fetch('http://mcp.example.com/ok'))).toMatch(/10\.0\.0\.7/);
  });

  it('resolves and checks again for every new connection (a rebinding name gets caught)', async () => {
    const answers = ['127.0.0.1', '10.1.2.3'];
    let calls = 0;
    const rebinding: LookupFn = async () => [{ address: answers[Math.min(calls++, 1)] as string, family: 4 }];
    routes['/close'] = (_req, res) => res.writeHead(200, { connection: 'close' }).end('bye');
    // Its first address listed itself: granted, and each connection resolves anew.
    const listed = createGuardedFetch({
      grant: grant({ tableDomains: [`mcp.example.com:${port}`, `127.0.0.1:${port}`] }),
      lookup: rebinding,
    });
    expect((await listed(`http://mcp.example.com:${port}/close`)).status).toBe(200);
    listed.close();
    expect(calls).toBe(1);
    // The second answer, now private and not listed, is refused at connect time.
    const wildcard = createGuardedFetch({
      grant: grant({ tableDomains: ['*.example.com'] }),
      lookup: rebinding,
    });
    expect(await refused(wildcard(`http://mcp.example.com:${port}/close`))).toMatch(
      /10\.1\.2\.3 is a loopback, private/,
    );
    expect(calls).toBe(2);
  });

  it('refuses cloud metadata host names even when a wildcard covers them', async () => {
    const fetch = createGuardedFetch({ grant: grant({ unrestricted: true }), lookup: toLoopback });
    expect(await refused(fetch('http://metadata.google.internal/computeMetadata/v1/'))).toMatch(
      /cloud metadata service/,
    );
  });

  it('returns a redirect as is when asked to (the SDK follows within the origin itself)', async () => {
    const fetch = createGuardedFetch({ grant: grant({ tableDomains: [`127.0.0.1:${port}`] }) });
    const response = await fetch(`http://127.0.0.1:${port}/redirect-away`, { redirect: 'manual' });
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('http://elsewhere.example.net/steal');
    fetch.close();
  });

  it('follows a redirect only to a granted host, and keeps credentials on their origin', async () => {
    const fetch = createGuardedFetch({ grant: grant({ tableDomains: [`127.0.0.1:${port}`] }) });
    const home = await fetch(`http://127.0.0.1:${port}/redirect-home`, {
      headers: { authorization: 'Bearer same-origin-token' },
    });
    expect(home.status).toBe(200);
    expect(seen.at(-1)).toMatchObject({ url: '/ok', headers: { authorization: 'Bearer same-origin-token' } });
    const message = await refused(fetch(`http://127.0.0.1:${port}/redirect-away`));
    expect(message).toContain(
      'a redirect of MCP server "test" to http://elsewhere.example.net/steal was refused',
    );
    fetch.close();
  });

  it('fails a response larger than the body limit while it is read', async () => {
    const fetch = createGuardedFetch({
      grant: grant({ tableDomains: [`127.0.0.1:${port}`] }),
      maxBodyBytes: 1000,
    });
    const response = await fetch(`http://127.0.0.1:${port}/big`);
    await expect(response.text()).rejects.toThrow();
    fetch.close();
  });

  it('bounds each event of an event stream, not the stream', async () => {
    const fetch = createGuardedFetch({
      grant: grant({ tableDomains: [`127.0.0.1:${port}`] }),
      maxEventBytes: 1000,
    });
    expect((await (await fetch(`http://127.0.0.1:${port}/events`)).text()).length).toBe(3020);
    await expect((await fetch(`http://127.0.0.1:${port}/huge-event`)).text()).rejects.toThrow();
    fetch.close();
  });

  it('gives up when no response headers come in time', async () => {
    const fetch = createGuardedFetch({
      grant: grant({ tableDomains: [`127.0.0.1:${port}`] }),
      headersTimeoutMs: 200,
    });
    await expect(fetch(`http://127.0.0.1:${port}/hang`)).rejects.toBeInstanceOf(RemoteNetworkError);
    fetch.close();
  });

  it('gives up on a server that accepts and never answers while the collector runs, caller signal and all', async () => {
    // The shape the SDK (and the OAuth discovery and token requests of a login) calls it with.
    const fetch = createGuardedFetch({
      grant: grant({ tableDomains: [`127.0.0.1:${port}`] }),
      headersTimeoutMs: 300,
    });
    const caller = new AbortController();
    const error = await whileCollecting(
      fetch(`http://127.0.0.1:${port}/hang`, { signal: caller.signal }).catch((e: unknown) => e),
    );
    expect(error).toBeInstanceOf(RemoteNetworkError);
    expect((error as Error).message).toBe(
      `no answer from 127.0.0.1:${port} within 300 ms (MCP server "test")`,
    );
    fetch.close();
  });

  it('reports an unreachable server as a network error', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const deadPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const fetch = createGuardedFetch({ grant: grant({ tableDomains: [`127.0.0.1:${deadPort}`] }) });
    const error = await fetch(`http://127.0.0.1:${deadPort}/ok`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RemoteNetworkError);
    expect((error as Error).message).toBe(`cannot reach 127.0.0.1:${deadPort}: ECONNREFUSED`);
  });
});

describe('BodyLimit', () => {
  async function pass(limit: number, perEvent: boolean, chunks: string[]): Promise<number> {
    const limiter = new BodyLimit(limit, perEvent, 'test');
    let total = 0;
    limiter.on('data', (chunk: Buffer) => {
      total += chunk.length;
    });
    const done = new Promise<void>((resolve, reject) => {
      limiter.on('end', resolve);
      limiter.on('error', reject);
    });
    for (const chunk of chunks) limiter.write(Buffer.from(chunk));
    limiter.end();
    await done;
    return total;
  }

  it.each([
    [10, false, ['12345', '12345'], true],
    [10, false, ['12345', '123456'], false],
    [10, true, ['data: 1234\n\n', 'data: 1234\n\n'], true],
    [10, true, ['data: 1234\r\n\r\n', 'data: 1234\r\r'], true],
    [10, true, ['data: 12', '345\n\n'], false],
    [10, true, ['data: 1\ndata: 2\ndata: 3\n\n'], false],
  ])('limit %i per event %s: %j passes %s', async (limit, perEvent, chunks, ok) => {
    const result = pass(limit, perEvent, chunks);
    if (ok) await expect(result).resolves.toBe(chunks.join('').length);
    else await expect(result).rejects.toBeInstanceOf(RemoteNetworkError);
  });
});
