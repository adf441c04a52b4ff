// Connection bounds on a real HTTP server and real sockets: sockets that only sit there (half-open,
// slowloris, idle keep-alive) give way to a client that sends a request; busy ones never do.
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../tests/helpers/rune.ts';
import {
  bytesSent,
  type ConnectionLimits,
  limitConnections,
  MIN_PROGRESS_BYTES,
  openFileLimit,
  totalConnections,
} from './connections.ts';

const servers: http.Server[] = [];
const sockets: net.Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
});

/** A server answering `/hold` only when `release` is called, everything else at once. */
async function serve(limits: ConnectionLimits) {
  const held: http.ServerResponse[] = [];
  const server = http.createServer((req, res) => {
    if (req.url === '/hold') held.push(res);
    else res.end('ok');
  });
  limitConnections(server, limits);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    held,
    release: () => {
      for (const r of held.splice(0)) r.end('released');
    },
  };
}

function connect(port: number): Promise<net.Socket> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => resolve(socket));
    socket.on('error', () => {});
    sockets.push(socket);
  });
}

const closed = (socket: net.Socket) =>
  new Promise<boolean>((resolve) => {
    if (socket.destroyed || socket.readableEnded) return resolve(true);
    socket.once('close', () => resolve(true));
  });

/** A plain GET on a connection of its own: its status, or 'refused' when the server closed it. */
function get(port: number, path = '/'): Promise<number | 'refused'> {
  return new Promise((resolve) => {
    const req = http.get({ port, host: '127.0.0.1', path, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', () => resolve('refused'));
  });
}

/** Sockets the server has counted: a request on each proves it was accepted (answered). */
async function settle(port: number): Promise<void> {
  expect(await get(port)).toBe(200);
}

describe('limitConnections', () => {
  it('closes the longest-idle half-open socket of an address for a client that sends a request', async () => {
    const { port } = await serve({ perAddress: 4, total: 1000, trusted: [], sendTimeoutMs: 60_000 });
    const idle = [] as net.Socket[];
    for (let i = 0; i < 4; i++) idle.push(await connect(port));
    await settle(port); // itself one past the bound: the oldest idle socket made room
    expect(await closed(idle[0]!)).toBe(true);
    // Newer idle sockets push the older ones out: never more than the bound stay open.
    for (let i = 0; i < 4; i++) idle.push(await connect(port));
    for (const s of idle.slice(0, 4)) expect(await closed(s)).toBe(true);
    expect(await get(port)).toBe(200);
  });

  it('closes slowloris sockets still sending their headers, not sockets serving a request', async () => {
    const { port, held, release } = await serve({
      perAddress: 4,
      total: 1000,
      trusted: [],
      sendTimeoutMs: 60_000,
    });
    const busy = [get(port, '/hold'), get(port, '/hold')];
    while (held.length < 2) await new Promise((r) => setTimeout(r, 5));
    const slow = [await connect(port), await connect(port)];
    for (const s of slow) s.write('GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ');
    for (let i = 0; i < 3; i++) expect(await get(port)).toBe(200);
    expect(await closed(slow[0]!)).toBe(true);
    release();
    expect(await Promise.all(busy)).toEqual([200, 200]);
  });

  it('refuses a new connection when every connection of the address is in use', async () => {
    const { port, held, release } = await serve({
      perAddress: 3,
      total: 1000,
      trusted: [],
      sendTimeoutMs: 60_000,
    });
    const busy = [get(port, '/hold'), get(port, '/hold'), get(port, '/hold')];
    while (held.length < 3) await new Promise((r) => setTimeout(r, 5));
    expect(await get(port)).toBe('refused');
    release();
    expect(await Promise.all(busy)).toEqual([200, 200, 200]);
    expect(await get(port)).toBe(200);
  });

  it('bounds connections in all the same way, trusted proxies included', async () => {
    const { port, held, release } = await serve({
      perAddress: 1000,
      total: 3,
      trusted: ['127.0.0.1'],
      sendTimeoutMs: 60_000,
    });
    const idle = [await connect(port), await connect(port), await connect(port)];
    expect(await get(port)).toBe(200);
    expect(await closed(idle[0]!)).toBe(true);
    const busy = [get(port, '/hold'), get(port, '/hold'), get(port, '/hold')];
    while (held.length < 3) await new Promise((r) => setTimeout(r, 5));
    expect(await get(port)).toBe('refused');
    release();
    expect(await Promise.all(busy)).toEqual([200, 200, 200]);
  });

  it('leaves idle keep-alive sockets of other addresses alone', async () => {
    // The bound of one address never closes another's sockets.
    const { port } = await serve({ perAddress: 2, total: 1000, trusted: [], sendTimeoutMs: 60_000 });
    const other = await new Promise<net.Socket>((resolve) => {
      const s = net.connect({ port, host: '127.0.0.1', localAddress: '127.0.0.2' }, () => resolve(s));
      s.on('error', () => {});
      sockets.push(s);
    });
    for (let i = 0; i < 6; i++) expect(await get(port)).toBe(200);
    expect(other.destroyed).toBe(false);
    other.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    const answer = await new Promise<string>((resolve) => {
      let text = '';
      other.on('data', (c) => {
        text += c;
      });
      other.on('close', () => resolve(text));
    });
    expect(answer).toMatch(/^HTTP\/1.1 200/);
  });
});

/** A server whose every answer is `size` bytes in one write, so that a client that reads nothing leaves most of it waiting. */
async function serveLarge(size: number, sendTimeoutMs: number) {
  const body = Buffer.alloc(size, 'x');
  const server = http.createServer((_req, res) => res.end(body));
  const served: net.Socket[] = [];
  server.on('connection', (socket) => served.push(socket));
  limitConnections(server, { perAddress: 2, total: 1000, trusted: [], sendTimeoutMs });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as net.AddressInfo).port, served };
}

/** A raw GET whose answer is read only as the test takes it: a client that stops reading. */
async function request(port: number) {
  const socket = await connect(port);
  socket.pause();
  socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
  let received = 0;
  return {
    socket,
    received: () => received,
    /** What has arrived so far, as a slow network delivers it a bit at a time. */
    take: () => {
      for (let chunk = socket.read(); chunk !== null; chunk = socket.read()) received += chunk.length;
    },
    /** Reads everything from now on. */
    drain: () => {
      socket.on('data', (chunk: Buffer) => {
        received += chunk.length;
      });
      socket.resume();
    },
  };
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('a response waiting on a client that does not read', () => {
  // Larger than what loopback's socket buffers take on both ends, so most of it waits in Node.
  const SIZE = 16 * 1024 * 1024;

  it('is followed as the client reads, in the middle of one large write', async () => {
    const { port, served } = await serveLarge(2 * SIZE, 60_000);
    const client = await request(port);
    while (served.length === 0 || served[0]!.writableLength === 0) await pause(10);
    const before = bytesSent(served[0]!);
    // The socket buffers on both ends drain first; then the server's queue moves.
    while (bytesSent(served[0]!) - before < MIN_PROGRESS_BYTES && client.received() < SIZE) {
      client.take();
      await pause(5);
    }
    // The one write is not complete, yet what the client took counts.
    expect(served[0]!.writableLength).toBeGreaterThan(0);
    expect(bytesSent(served[0]!) - before).toBeGreaterThanOrEqual(MIN_PROGRESS_BYTES);
  });

  it('cuts the connection after the send timeout without progress; a reader that keeps reading gets it all', async () => {
    const { port, served } = await serveLarge(SIZE, 400);
    const stalled = await request(port);
    while (served.length < 1) await pause(10);
    const slow = await request(port);
    while (served.length < 2) await pause(10);
    // Reads a bit at a time, for longer than the timeout in all, never pausing for as long.
    while (!served[1]!.destroyed && slow.received() < SIZE) {
      slow.take();
      await pause(5);
    }
    while (!served[0]!.destroyed) await pause(50);
    // The server's end of the stalled one is gone (the client, not reading, does not know yet);
    // once it reads, it finds the answer cut short.
    stalled.drain();
    expect(await closed(stalled.socket)).toBe(true);
    expect(stalled.received()).toBeLessThan(SIZE);
    expect(served[1]!.destroyed).toBe(false);
    expect(slow.received()).toBeGreaterThan(SIZE);
  }, 30_000);
});

describe('the bound in all', () => {
  it.each([
    [null, 4096],
    [1024, 768],
    [200, 64],
    [1_048_576, 65_536],
  ])('descriptor limit %s → %s connections', (fds, total) => {
    expect(totalConnections(fds)).toBe(total);
  });

  it('reads the soft limit of open files', () => {
    const dir = tempDir('rune-limits-');
    const file = join(dir, 'limits');
    writeFileSync(
      file,
      'Limit                     Soft Limit           Hard Limit           Units     \nMax open files            1024                 524288               files     \n',
    );
    expect(openFileLimit(file)).toBe(1024);
    writeFileSync(file, 'Max open files            unlimited            unlimited            files\n');
    expect(openFileLimit(file)).toBe(Number.MAX_SAFE_INTEGER);
    expect(openFileLimit(join(dir, 'missing'))).toBeNull();
    expect(openFileLimit()).toBeGreaterThan(0);
  });
});
