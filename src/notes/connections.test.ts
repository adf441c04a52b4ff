// Connection bounds on a real HTTP server and real sockets: sockets that only sit there (half-open,
// slowloris, idle keep-alive) give way to a client that sends a request; busy ones never do.
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../tests/helpers/rune.ts';
import { type ConnectionLimits, limitConnections, openFileLimit, totalConnections } from './connections.ts';

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
    const { port } = await serve({ perAddress: 4, total: 1000, trusted: [] });
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
    const { port, held, release } = await serve({ perAddress: 4, total: 1000, trusted: [] });
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
    const { port, held, release } = await serve({ perAddress: 3, total: 1000, trusted: [] });
    const busy = [get(port, '/hold'), get(port, '/hold'), get(port, '/hold')];
    while (held.length < 3) await new Promise((r) => setTimeout(r, 5));
    expect(await get(port)).toBe('refused');
    release();
    expect(await Promise.all(busy)).toEqual([200, 200, 200]);
    expect(await get(port)).toBe(200);
  });

  it('bounds connections in all the same way, trusted proxies included', async () => {
    const { port, held, release } = await serve({ perAddress: 1000, total: 3, trusted: ['127.0.0.1'] });
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
    const { port } = await serve({ perAddress: 2, total: 1000, trusted: [] });
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
