// The network is closed by more than one layer, and each holds without the others: Landlock alone
// (`rune _landlock`: no namespace, no seccomp) refuses TCP connect and bind, seccomp alone
// (`rune _seccomp`: no namespace) refuses every inet socket. Under a container runtime's seccomp
// profile, where no network namespace can be made and the net guard cannot run, the layer report
// says the network is closed by those two (not "skipped", not an empty namespace) and that allowed
// domains are unreachable, and nothing reaches the host's servers. Servers here count every TCP
// connection and UDP datagram they get.
import { spawn } from 'node:child_process';
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, type RunResult, requireBinary, tempDir } from '../helpers/rune.ts';
import { containerModeProblem, parseLayers, runSandbox, SYSTEM_PYTHON } from './harness.ts';

let tcp: Server;
let udp: UdpSocket;
let port = 0;
let tcpHits = 0;
let udpHits = 0;

/** Tries TCP connect, TCP bind, a UDP send and an inet6 socket; prints "what result" per line. */
const PROBE = (target: number) =>
  [
    'import socket, errno',
    'def t(what, fn):',
    '    try:',
    '        fn(); print(what, "ok")',
    '    except OSError as e:',
    '        print(what, errno.errorcode.get(e.errno, e.errno))',
    `t("connect", lambda: socket.create_connection(("127.0.0.1", ${target}), timeout=3).sendall(b"x"))`,
    't("bind", lambda: socket.socket().bind(("127.0.0.1", 0)))',
    `t("udp", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("127.0.0.1", ${target})))`,
    't("inet6", lambda: socket.socket(socket.AF_INET6))',
  ].join('\n');

function results(r: RunResult): Record<string, string> {
  return Object.fromEntries(
    r.stdout
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split(' ') as [string, string]),
  );
}

/** Runs a command with nothing of rune around it, or through rune's hidden one-layer subcommands. */
function run(argv: string[]): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0] as string, argv.slice(1), {
      cwd: tempDir('rune-netlayers-cwd-'),
      env: cleanEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      stdout += c;
    });
    child.stderr.setEncoding('utf8').on('data', (c: string) => {
      stderr += c;
    });
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** Waits until a datagram in flight would have arrived (loopback: well under this). */
const settle = () => new Promise((r) => setTimeout(r, 200));

beforeAll(async () => {
  requireBinary();
  tcp = createServer((socket) => {
    tcpHits++;
    socket.on('error', () => {});
    socket.end();
  });
  await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', r));
  port = (tcp.address() as { port: number }).port;
  udp = createSocket('udp4');
  udp.on('message', () => {
    udpHits++;
  });
  await new Promise<void>((r) => udp.bind(port, '127.0.0.1', r));
});

afterAll(() => {
  tcp?.close();
  udp?.close();
});

describe('each network layer holds on its own', () => {
  it('control: on the host the probe reaches both servers', async () => {
    const before = [tcpHits, udpHits];
    const r = await run([SYSTEM_PYTHON, '-c', PROBE(port)]);
    expect(results(r)).toEqual({ connect: 'ok', bind: 'ok', udp: 'ok', inet6: 'ok' });
    await settle();
    expect([tcpHits - (before[0] ?? 0), udpHits - (before[1] ?? 0)]).toEqual([1, 1]);
  });

  it('Landlock alone (no namespace, no seccomp) refuses TCP connect and bind', async (context) => {
    const layers = parseLayers(
      (
        await runSandbox({
          mode: 'host',
          args: ['sandbox', '--layers', '--', '/bin/true'],
          cwd: '/',
          env: cleanEnv() as Record<string, string>,
        })
      ).stderr,
    );
    const abi = Number(/ABI (\d+)/.exec(layers.get('landlock')?.detail ?? '')?.[1] ?? 0);
    if (abi < 4) context.skip(`Landlock ABI ${abi} has no TCP rule`);
    const before = tcpHits;
    const r = await run([
      requireBinary(),
      '_landlock',
      ...['/usr', '/etc', '/lib', '/lib64', '/bin'].flatMap((p) => ['--ro', p]),
      '--',
      SYSTEM_PYTHON,
      '-c',
      PROBE(port),
    ]);
    const got = results(r);
    expect(got.connect, r.stderr).toBe('EACCES');
    expect(got.bind).toBe('EACCES');
    // UDP is outside Landlock's rules: that is why the report says "UDP has seccomp only".
    expect(tcpHits).toBe(before);
  });

  it('seccomp alone (no namespace) refuses every inet and inet6 socket', async () => {
    const before = [tcpHits, udpHits];
    const r = await run([requireBinary(), '_seccomp', '--', SYSTEM_PYTHON, '-c', PROBE(port)]);
    expect(results(r), r.stderr).toEqual({
      connect: 'EACCES',
      bind: 'EACCES',
      udp: 'EACCES',
      inet6: 'EACCES',
    });
    await settle();
    expect([tcpHits, udpHits]).toEqual(before);
  });
});

describe("under a container runtime's seccomp profile (no network namespace, no net guard)", () => {
  const problem = containerModeProblem();
  const sandbox = (extra: string[]) =>
    runSandbox({
      mode: 'container',
      args: ['sandbox', '--layers', ...extra, '--', SYSTEM_PYTHON, '-c', PROBE(port)],
      cwd: tempDir('rune-netlayers-cwd-'),
      env: cleanEnv() as Record<string, string>,
    });

  it('reports the network as closed by seccomp and Landlock, and nothing reaches the host', async (context) => {
    if (problem) context.skip(problem);
    const before = [tcpHits, udpHits];
    const r = await sandbox([]);
    const network = parseLayers(r.stderr).get('network');
    expect(network?.applied, r.stderr).toBe(true);
    expect(network?.detail).toMatch(/^no network namespace: seccomp refuses inet and inet6 sockets/);
    expect(network?.detail).toContain('Landlock denies TCP bind and connect');
    expect(parseLayers(r.stderr).get('namespaces')?.applied).toBe(false);
    expect(results(r)).toEqual({ connect: 'EACCES', bind: 'EACCES', udp: 'EACCES', inet6: 'EACCES' });
    await settle();
    expect([tcpHits, udpHits]).toEqual(before);
  });

  it('with an allowed name:port, says the allowed domains are unreachable, and they are', async (context) => {
    if (problem) context.skip(problem);
    const before = [tcpHits, udpHits];
    const r = await sandbox(['--allow-domain', `127.0.0.1:${port}`]);
    const network = parseLayers(r.stderr).get('network');
    expect(network?.applied, r.stderr).toBe(true);
    expect(network?.detail).toContain('allowed domains unreachable: the net guard needs a network namespace');
    expect(results(r).connect).toBe('EACCES');
    await settle();
    expect([tcpHits, udpHits]).toEqual(before);
  });
});

describe('an inet socket as rune sandbox standard input', () => {
  it("never reaches the command (its stdin is rune's own unix socket pair), and rune reports the unreadable input instead of crashing", async () => {
    // Python makes an unconnected host TCP socket fd 0, then becomes rune.
    const wrap =
      'import os, socket, sys\ns = socket.socket()\nos.dup2(s.fileno(), 0)\nos.execv(sys.argv[1], sys.argv[1:])';
    const r = await run([
      SYSTEM_PYTHON,
      '-c',
      wrap,
      requireBinary(),
      'sandbox',
      '--',
      '/bin/sh',
      '-c',
      `cat; echo "input ended $?"; ${SYSTEM_PYTHON} -c 'import socket; print(socket.socket(fileno=0).family.name)'`,
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('input ended 0\nAF_UNIX\n');
    expect(r.stderr).toContain('rune sandbox: standard input could not be read: ENOTCONN');
  });
});
