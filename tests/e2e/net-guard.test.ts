// The net guard's matrix through the built binary: with `--allow-domain localhost:PORT`, Python
// (Debian's python3, raw sockets), curl and Node reach that name and port, blocking and not, and
// nothing else: not another port of the same name, not another address, through connect, sendto,
// sendmsg, Fast Open, or a disconnect-and-reuse sequence; and a socket the guard handed over never
// ends up listening on the host. The servers run here, in the host's network namespace; the
// "other" ones count every connection they get, which must stay zero.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { readFileSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, requireBinary, runRune, tempDir } from '../helpers/rune.ts';

const PY = '/usr/bin/python3';
const HERE = import.meta.dirname;
const CLIENT = join(HERE, 'net-guard-client.py');

let allowedPort = 0;
let otherPort = 0;
// A server that never accepts, its accept queue full: the kernel drops further SYNs, so a connect
// to it stays in SYN_SENT.
let stalledPort = 0;
let stalled: ChildProcess | undefined;
const fillers: Socket[] = [];
const servers: Server[] = [];
const otherHits: string[] = [];
// UDP servers on the host at the allowed port and the other one: the guard serves TCP only, so
// every datagram that arrives here is one that left the sandbox.
const udpServers: UdpSocket[] = [];
const udpHits: string[] = [];

async function listenUdp(port: number, host: string): Promise<void> {
  const socket = createSocket('udp4');
  socket.on('message', (message) => udpHits.push(`${port}: ${message.toString('latin1').slice(0, 40)}`));
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(port, host, () => resolve());
  });
  udpServers.push(socket);
}

/** Long enough for a datagram on loopback to have arrived. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 200));

function respond(tag: string, onConnection?: (socket: Socket) => void) {
  return createServer((socket) => {
    onConnection?.(socket);
    socket.on('error', () => {});
    socket.once('data', (data) => {
      const first = data.toString('latin1').split(/\r?\n/)[0]?.slice(0, 40) ?? '';
      const body = `${tag}:${first}\n`;
      socket.end(
        `HTTP/1.0 200 OK\r\ncontent-type: text/plain\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
      );
    });
  });
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve((server.address() as { port: number }).port));
    servers.push(server);
  });
}

/** Connects from the host and says whether the sandbox's listener answered with its token. */
function tokenFromHost(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host });
    let data = '';
    const done = () => {
      socket.destroy();
      resolve(data.includes('SANDBOX-LISTENER-TOKEN'));
    };
    socket.on('data', (chunk) => {
      data += chunk.toString();
    });
    socket.on('error', done);
    socket.on('close', done);
    socket.setTimeout(2000, done);
  });
}

interface Check {
  check: string;
  reply?: unknown;
  error?: string | null;
  listening?: number;
}

/** Runs the Python client in the sandbox; while a check holds a listener, probes it from the host. */
function runPython(): Promise<{ checks: Map<string, Check>; hostReachedListener: string[]; stderr: string }> {
  const cwd = tempDir('rune-guard-cwd-');
  const args = [
    'sandbox',
    '--allow-read',
    HERE,
    '--allow-domain',
    `localhost:${allowedPort}`,
    '--allow-domain',
    `127.0.0.1:${stalledPort}`,
    '--',
    PY,
    CLIENT,
    'localhost',
    String(allowedPort),
    String(otherPort),
    '127.0.0.2',
    String(stalledPort),
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(requireBinary(), args, { cwd, env: cleanEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
    const checks = new Map<string, Check>();
    const hostReachedListener: string[] = [];
    let buffer = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 50_000);
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      buffer += chunk;
      for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        if (!line.startsWith('{')) continue;
        const parsed = JSON.parse(line) as Check;
        checks.set(parsed.check, parsed);
        if (parsed.listening !== undefined && parsed.check.endsWith('(listening)')) {
          const port = parsed.listening;
          void Promise.all([tokenFromHost(port, '127.0.0.1'), tokenFromHost(port, '::1')]).then((reached) => {
            if (reached.some(Boolean)) hostReachedListener.push(parsed.check);
            child.stdin.write('\n');
          });
        }
      }
    });
    child.on('error', reject);
    child.on('close', () => {
      clearTimeout(timer);
      resolve({ checks, hostReachedListener, stderr });
    });
  });
}

beforeAll(async () => {
  requireBinary();
  allowedPort = await listen(respond('ALLOWED'), 0, '127.0.0.1');
  const hit = (where: string) => (socket: Socket) => otherHits.push(`${where} from ${socket.remotePort}`);
  otherPort = await listen(respond('OTHER', hit('other port')), 0, '127.0.0.1');
  await listen(respond('OTHER', hit('other address')), allowedPort, '127.0.0.2');
  await listenUdp(allowedPort, '127.0.0.1');
  await listenUdp(otherPort, '127.0.0.1');
  stalled = spawn(
    PY,
    [
      '-c',
      'import socket, time\ns = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(0)\nprint(s.getsockname()[1], flush=True)\ntime.sleep(600)',
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  stalledPort = await new Promise<number>((resolve) =>
    stalled?.stdout?.once('data', (d: Buffer) => resolve(Number(String(d).trim()))),
  );
  // listen(0) queues one connection; this one fills the queue.
  const filler = createConnection({ port: stalledPort, host: '127.0.0.1' });
  filler.on('error', () => {});
  await new Promise((resolve) => filler.once('connect', resolve));
  fillers.push(filler);
});

afterAll(() => {
  for (const server of servers) server.close();
  for (const socket of udpServers) socket.close();
  for (const filler of fillers) filler.destroy();
  stalled?.kill();
});

describe('net guard: Python, blocking and non-blocking, every way to address a peer', () => {
  let result: Awaited<ReturnType<typeof runPython>>;
  beforeAll(async () => {
    otherHits.length = 0;
    result = await runPython();
  });
  const check = (name: string): Check => {
    const found = result.checks.get(name);
    if (!found) throw new Error(`no result for "${name}"; stderr:\n${result.stderr}`);
    return found;
  };
  const reached = (name: string) => expect(JSON.stringify(check(name).reply)).toContain('ALLOWED:');
  const refused = (name: string) => {
    expect(check(name).error, name).toBeTruthy();
    expect(JSON.stringify(check(name).reply ?? '')).not.toMatch(/ALLOWED|OTHER/);
  };

  it('reaches the allowed name and port with connect(), which returns 0 (blocking) or EINPROGRESS', () => {
    reached('connect blocking allowed');
    reached('connect python allowed');
    reached('connect from a thread allowed');
    const nonblocking = check('connect nonblocking allowed').reply as { connect: string; peer: unknown[] };
    expect(nonblocking.connect).toBe('EINPROGRESS');
    expect(nonblocking.peer).toEqual(['127.0.0.1', allowedPort]);
    reached('connect nonblocking allowed');
    expect(check('connect again').reply).toEqual({
      connecting: ['EINPROGRESS', 'EALREADY'],
      established: ['EINPROGRESS', 0, 'EISCONN'],
    });
    expect(check('half close').reply).toContain('ALLOWED:half');
    expect(check('kernel errors').reply).toEqual({
      'bad fd': 'EBADF',
      'not a socket': 'ENOTSOCK',
      'address too long': 'EINVAL',
      'no address': 'EFAULT',
    });
    expect(check('connect keeps socket options').reply).toEqual({
      nodelay: 1,
      keepalive: 1,
      keepidle: 77,
      data: expect.stringContaining('ALLOWED:ping'),
    });
  });

  it('reaches it with Fast Open through sendto and sendmsg, blocking and not', () => {
    expect(check('fastopen blocking allowed').reply).toEqual({
      sendto: 3,
      data: expect.stringContaining('ALLOWED:tfo'),
    });
    expect(check('fastopen nonblocking allowed').reply).toEqual({
      sendto: 'EINPROGRESS',
      data: expect.stringContaining('ALLOWED:ping'),
    });
    expect(check('fastopen sendmsg allowed').reply).toEqual({
      sendmsg: 6,
      data: expect.stringContaining('ALLOWED:tfomsg'),
    });
  });

  it('refuses another port of the allowed name and another address, by connect and Fast Open', () => {
    for (const name of [
      'connect blocking other port',
      'connect nonblocking other port',
      'connect blocking other address',
      'connect nonblocking other address',
      'fastopen blocking other port',
      'fastopen nonblocking other port',
      'fastopen sendmsg other address',
      'fastopen sendmmsg other address',
    ])
      refused(name);
    // sendmmsg with Fast Open is not served at all (EOPNOTSUPP, as with client Fast Open off).
    expect(check('fastopen sendmmsg allowed').error).toMatch(/^(EOPNOTSUPP|ENOTSUP)$/);
  });

  it('sends the bytes of a sendto() with another address on a connected socket to its peer only', () => {
    expect(check('sendto other port on a connected socket').reply).toContain('ALLOWED:redirected');
  });

  it('after a disconnect (AF_UNSPEC), the socket reaches the allowed peer again and nothing else', () => {
    for (const name of [
      'disconnect then connect other port',
      'disconnect then fastopen other port',
      'disconnect then fastopen other address',
    ]) {
      const reply = check(name).reply as { first: string; then: { error?: string; data?: string } };
      expect(reply.first, name).toContain('ALLOWED:');
      expect(reply.then.error, name).toBeTruthy();
      expect(reply.then.data, name).toBeUndefined();
    }
    const reuse = check('disconnect then reuse allowed').reply as { then: { data: string } };
    expect(reuse.then.data).toContain('ALLOWED:ping');
  });

  it('never lets a handed-over socket listen on the host (after a disconnect or a shutdown while connecting)', () => {
    expect(check('disconnect then listen (listening)').listening).toBeGreaterThan(0);
    expect(check('shutdown while connecting then listen').reply).toMatchObject({
      connect: 'EINPROGRESS',
      state: 'SYN_SENT',
      shutdown: 0,
    });
    expect(result.hostReachedListener).toEqual([]);
  });

  it('a socket passed to another process over SCM_RIGHTS cannot be re-pointed there either', () => {
    const reply = check('passed over SCM_RIGHTS').reply as {
      first: string;
      receiver: Record<string, { error?: string; data?: string } | number | string>;
    };
    expect(reply.first).toContain('ALLOWED:');
    expect(reply.receiver.disconnect).toBe(0);
    for (const name of ['then connect other port', 'then fastopen other address']) {
      const then = reply.receiver[name] as { error?: string; data?: string };
      expect(then.error, name).toBeTruthy();
      expect(then.data, name).toBeUndefined();
    }
    expect((reply.receiver['then connect allowed'] as { data: string }).data).toContain('ALLOWED:ping');
  });

  it('UDP reaches nothing on the host, not even the allowed name and port (sendto, sendmsg with msg_name on a connected socket, IPv4-mapped)', async () => {
    const udp = check('udp').reply as Record<string, string>;
    expect(Object.keys(udp)).toHaveLength(5);
    await settle();
    expect(udpHits).toEqual([]);
  });

  it('no connection reached any other server', () => {
    expect(otherHits).toEqual([]);
  });
});

describe('net guard: curl and Node', () => {
  const sandbox = (command: string[], extra: string[] = []) =>
    runRune(['sandbox', '--allow-domain', `localhost:${allowedPort}`, ...extra, '--', ...command], {
      cwd: tempDir('rune-guard-cwd-'),
      env: cleanEnv(),
    });

  it('curl reaches the allowed name:port, with and without Fast Open, and no other port or address', async () => {
    otherHits.length = 0;
    const curl = (url: string, ...flags: string[]) =>
      `curl -sS -m 5 ${flags.join(' ')} ${url}; echo "[rc=$?]"`;
    const result = await sandbox([
      '/bin/sh',
      '-c',
      [
        curl(`http://localhost:${allowedPort}/plain`),
        curl(`http://localhost:${allowedPort}/tfo`, '--tcp-fastopen'),
        curl(`http://localhost:${otherPort}/`),
        curl(`http://localhost:${otherPort}/`, '--tcp-fastopen'),
        curl(`http://127.0.0.2:${allowedPort}/`),
      ].join('; '),
    ]);
    expect(result.stdout.trim().split('\n')).toEqual([
      'ALLOWED:GET /plain HTTP/1.1',
      '[rc=0]',
      'ALLOWED:GET /tfo HTTP/1.1',
      '[rc=0]',
      '[rc=7]',
      '[rc=7]',
      '[rc=7]',
    ]);
    expect(otherHits).toEqual([]);
  });

  it('Node (net and fetch) reaches the allowed name:port and no other', async () => {
    otherHits.length = 0;
    const script = `
      const net = require('node:net');
      const raw = (port, host = 'localhost') => new Promise((done) => {
        const s = net.connect({ host, port, noDelay: true, keepAlive: true });
        s.on('connect', () => s.write('node'));
        s.on('data', (d) => { done(String(d).split('\\r\\n\\r\\n')[1].trim()); s.destroy(); });
        s.on('error', (e) => done(e.code));
      });
      (async () => {
        console.log(await raw(${allowedPort}));
        console.log(await raw(${otherPort}));
        console.log(await raw(${allowedPort}, '127.0.0.2'));
        const ok = await fetch('http://localhost:${allowedPort}/fetch').then((r) => r.text(), (e) => e.cause?.code);
        console.log(String(ok).trim());
        const no = await fetch('http://localhost:${otherPort}/').then((r) => r.text(), (e) => e.cause?.code ?? e.message);
        console.log(String(no).trim());
      })();`;
    const result = await sandbox(['node', '-e', script]);
    const lines = result.stdout.trim().split('\n');
    expect(lines[0]).toBe('ALLOWED:node');
    expect(lines[1]).toMatch(/^E[A-Z]+$/);
    expect(lines[2]).toMatch(/^E[A-Z]+$/);
    expect(lines[3]).toBe('ALLOWED:GET /fetch HTTP/1.1');
    expect(lines[4]).toMatch(/^E[A-Z]+$/);
    expect(otherHits).toEqual([]);
  });

  it('Node UDP (dgram: sendmsg with an address, and a connected socket) reaches nothing on the host', async () => {
    udpHits.length = 0;
    const script = `
      const dgram = require('node:dgram');
      const send = (socket, ...args) => new Promise((done) => socket.send(...args, (e) => done(e ? e.code : 'sent')));
      (async () => {
        const a = dgram.createSocket('udp4');
        console.log(await send(a, 'node-udp', ${allowedPort}, '127.0.0.1'));
        console.log(await send(a, 'node-udp', ${otherPort}, 'localhost'));
        const b = dgram.createSocket('udp4');
        await new Promise((done) => b.connect(${allowedPort}, '127.0.0.1', done));
        console.log(await send(b, 'node-udp-connected'));
        a.close(); b.close();
      })();`;
    const result = await sandbox(['node', '-e', script]);
    expect(result.stdout.trim().split('\n'), result.stderr).toHaveLength(3);
    await settle();
    expect(udpHits).toEqual([]);
  });

  it('with the guard on, the ways around the supervised calls are closed: io_uring, raw, packet and netlink sockets', async () => {
    // io_uring's IORING_OP_CONNECT/SENDMSG would connect without a system call seccomp sees.
    const py = [
      'import ctypes, errno, socket',
      'libc = ctypes.CDLL(None, use_errno=True)',
      'params = ctypes.create_string_buffer(120)',
      'r = libc.syscall(425, 8, params)',
      'print("io_uring_setup", r, errno.errorcode.get(ctypes.get_errno(), 0))',
      'for name, fam, typ in (("raw", socket.AF_INET, socket.SOCK_RAW), ("raw6", socket.AF_INET6, socket.SOCK_RAW), ("packet", socket.AF_PACKET, socket.SOCK_RAW), ("netlink", socket.AF_NETLINK, socket.SOCK_RAW)):',
      '    try:',
      '        socket.socket(fam, typ, 0 if fam in (socket.AF_PACKET, socket.AF_NETLINK) else socket.IPPROTO_TCP); print(name, "opened")',
      '    except OSError as e:',
      '        print(name, errno.errorcode[e.errno])',
    ].join('\n');
    // Control: on this host (io_uring enabled) the same call gets a ring, and root opens raw sockets.
    if (readFileSync('/proc/sys/kernel/io_uring_disabled', 'utf8').trim() === '0') {
      const host = spawnSync(PY, ['-c', py], { encoding: 'utf8' }).stdout.split('\n');
      expect(host[0]).toMatch(/^io_uring_setup \d+ 0$/);
      if (process.getuid?.() === 0) expect(host[1]).toBe('raw opened');
    }
    const result = await sandbox([PY, '-c', py]);
    expect(result.stdout.trim().split('\n'), result.stderr).toEqual([
      'io_uring_setup -1 EPERM',
      'raw EPERM',
      'raw6 EPERM',
      'packet EAFNOSUPPORT',
      'netlink EAFNOSUPPORT',
    ]);
  });

  it('an unspecified destination (0.0.0.0, ::) is never allowed: Linux takes it for "this host"', async () => {
    // Allowed as literals here; the same holds for a name that resolves to one (DNS sinkholes do).
    otherHits.length = 0;
    const result = await runRune(
      [
        'sandbox',
        '--layers',
        '--allow-domain',
        '0.0.0.0',
        '--allow-domain',
        `[::]:${allowedPort}`,
        '--',
        '/bin/sh',
        '-c',
        [
          `curl -sS -m 5 http://0.0.0.0:${allowedPort}/; echo "[rc=$?]"`,
          `curl -sS -m 5 http://0.0.0.0:${otherPort}/; echo "[rc=$?]"`,
          `curl -sS -m 5 'http://[::]:${allowedPort}/'; echo "[rc=$?]"`,
        ].join('; '),
      ],
      { cwd: tempDir('rune-guard-cwd-'), env: cleanEnv() },
    );
    expect(result.stdout.trim().split('\n')).toEqual(['[rc=7]', '[rc=7]', '[rc=7]']);
    expect(otherHits).toEqual([]);
    expect(result.stderr).toMatch(
      /an unspecified address means this host and is never allowed: 0\.0\.0\.0, \[::\]/,
    );
  });

  it('IPv6: an allowed [::1]:PORT is reached, also by an IPv4-mapped address of an allowed IPv4 entry', async () => {
    const v6 = createServer((socket) => socket.end('V6-ALLOWED\n'));
    const v6port = await new Promise<number>((resolve, reject) => {
      v6.once('error', reject);
      v6.listen(0, '::1', () => resolve((v6.address() as { port: number }).port));
    });
    servers.push(v6);
    const py = [
      'import socket',
      'def get(family, addr):',
      '    try:',
      '        s = socket.socket(family); s.settimeout(5); s.connect(addr); s.sendall(b"x"); return s.recv(200).decode().replace("\\r\\n", " ").strip()',
      '    except OSError as e:',
      '        return type(e).__name__',
      `print(get(socket.AF_INET6, ("::1", ${v6port})))`,
      `print(get(socket.AF_INET, ("127.0.0.1", ${v6port})))`,
      `print(get(socket.AF_INET6, ("::ffff:127.0.0.1", ${allowedPort})))`,
      `print(get(socket.AF_INET6, ("::ffff:127.0.0.1", ${otherPort})))`,
    ].join('\n');
    const result = await runRune(
      [
        'sandbox',
        '--allow-domain',
        `[::1]:${v6port}`,
        '--allow-domain',
        `127.0.0.1:${allowedPort}`,
        '--',
        PY,
        '-c',
        py,
      ],
      { cwd: tempDir('rune-guard-cwd-'), env: cleanEnv() },
    );
    const lines = result.stdout.trim().split('\n');
    expect(lines[0]).toBe('V6-ALLOWED');
    expect(lines[1]).not.toContain('ALLOWED');
    expect(lines[2]).toContain('ALLOWED:x');
    expect(lines[3]).not.toMatch(/ALLOWED|OTHER/);
  });

  it('an entry without a port allows every port of that name', async () => {
    const result = await runRune(
      [
        'sandbox',
        '--allow-domain',
        'localhost',
        '--',
        'curl',
        '-sS',
        '-m',
        '5',
        `http://localhost:${otherPort}/any`,
      ],
      { cwd: tempDir('rune-guard-cwd-'), env: cleanEnv() },
    );
    expect(result.stdout).toContain('OTHER:GET /any');
  });
});
