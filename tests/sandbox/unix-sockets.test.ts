// Pathname UNIX sockets in granted folders, attacked: a listener started OUTSIDE the sandbox (a
// Docker API socket, an ssh-agent, a dev server in the project folder) must not be reachable from
// inside, whether its folder is granted writable or read-only — Landlock before ABI 9 does not
// mediate connect(2) on them and a read-only mount does not stop it (ADR 0016). Every form is tried:
// stream, seqpacket, datagram (sendto on an unbound socket or a socketpair one, connect + send),
// relative paths, a symlink, a connection made by a child and passed on, curl --unix-socket. Each
// case has a control on the host, and the outside listener counts what it got. UNIX sockets the
// command makes itself (a server in the workspace, socketpair, Python multiprocessing) keep working.
// Under a container runtime's seccomp profile there is no view and seccomp refuses new UNIX sockets;
// the attacks run there too (socketpair datagrams were open in both modes).
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireBinary } from '../helpers/rune.ts';
import { containerModeProblem, parseLayers, runSandbox, SYSTEM_PYTHON } from './harness.ts';

const PY = SYSTEM_PYTHON;
const root = mkdtempSync(join(tmpdir(), 'rune-unix-'));
/** Granted writable: the workspace, where a dev server's or an editor's socket lives. */
const work = join(root, 'work');
/** Granted read-only: where an agent's or a runtime's socket lives. */
const ro = join(root, 'ro');
const sock = {
  stream: join(work, 'outside-stream.sock'),
  seqpacket: join(work, 'outside-seq.sock'),
  dgram: join(work, 'outside-dgram.sock'),
  agent: join(ro, 'agent.sock'),
  roDgram: join(ro, 'log.sock'),
  http: join(ro, 'docker.sock'),
};
const received = join(root, 'received.log');
const env = { PATH: '/usr/bin:/bin', HOME: root, LANG: 'C.UTF-8' };

/** The outside listeners: stream and seqpacket ones answer OUTSIDE-<name>, datagrams are logged. */
const LISTENER = `
import os, socket, sys, threading
received = sys.argv[1]
def stream(path, typ, name):
    s = socket.socket(socket.AF_UNIX, typ); s.bind(path); s.listen(16)
    def loop():
        while True:
            c, _ = s.accept()
            with open(received, "a") as f: f.write("connection " + name + "\\n")
            try: c.send(("OUTSIDE-" + name).encode())
            except OSError: pass
            c.close()
    threading.Thread(target=loop, daemon=True).start()
def dgram(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind(path)
    def loop():
        while True:
            data = s.recv(200)
            with open(received, "a") as f: f.write("datagram " + data.decode(errors="replace") + "\\n")
    threading.Thread(target=loop, daemon=True).start()
stream(sys.argv[2], socket.SOCK_STREAM, "stream")
stream(sys.argv[3], socket.SOCK_SEQPACKET, "seqpacket")
dgram(sys.argv[4])
stream(sys.argv[5], socket.SOCK_STREAM, "agent")
dgram(sys.argv[6])
print("ready", flush=True)
sys.stdin.read()
`;

/** The attacker's client: `client.py FORM ARGS…` prints one line, the answer or "ERR <errno name>". */
const CLIENT = `
import errno, os, socket, sys
form, args = sys.argv[1], sys.argv[2:]
def connect(path, typ=socket.SOCK_STREAM):
    s = socket.socket(socket.AF_UNIX, typ); s.settimeout(5); s.connect(path); return s
def run():
    if form in ("stream", "seqpacket"):
        return connect(args[0], socket.SOCK_SEQPACKET if form == "seqpacket" else socket.SOCK_STREAM).recv(40).decode()
    if form == "relative":
        os.chdir(args[0]); return connect(args[1]).recv(40).decode()
    if form == "symlink":
        if os.path.lexists(args[1]): os.unlink(args[1])
        os.symlink(args[0], args[1]); return connect(args[1]).recv(40).decode()
    if form == "nonblocking":
        s = socket.socket(socket.AF_UNIX); s.setblocking(False)
        s.connect(args[0]); s.setblocking(True); s.settimeout(5); return s.recv(40).decode()
    if form == "dup-then-connect":
        s = socket.socket(socket.AF_UNIX); other = os.dup(s.fileno())
        try: s.connect(args[0])
        except OSError: pass
        return socket.socket(fileno=other).recv(40).decode()
    if form == "passed-fd":
        parent, child = socket.socketpair()
        if os.fork() == 0:
            try:
                s = connect(args[0]); socket.send_fds(child, [b"x"], [s.fileno()])
            except OSError as e:
                child.send(b"E" + errno.errorcode.get(e.errno, "?").encode())
            os._exit(0)
        msg, fds, _, _ = socket.recv_fds(parent, 40, 1); os.wait()
        if not fds: return "ERR " + msg[1:].decode()
        # The passed descriptor is non-blocking (the child's timeout mode set O_NONBLOCK on it):
        # wait for the answer with a timeout, or a listener slower than this line reads EAGAIN.
        s = socket.socket(fileno=fds[0]); s.settimeout(5); return s.recv(40).decode()
    if form == "dgram-sendto":
        socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(b"sendto", args[0]); return "sent"
    if form == "dgram-connect":
        s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.connect(args[0]); s.send(b"connect-send"); return "sent"
    if form == "dgram-socketpair":
        a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM); a.sendto(b"socketpair", args[0]); return "sent"
    if form == "raw-socketpair":
        a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_RAW); a.sendto(b"raw-socketpair", args[0]); return "sent"
    if form == "dgram-sendmsg":
        s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.sendmsg([b"sendmsg"], [], 0, args[0]); return "sent"
    raise SystemExit("unknown form " + form)
try:
    print(run())
except OSError as e:
    print("ERR", errno.errorcode.get(e.errno, e.errno))
`;

/** What a command does with UNIX sockets of its own: each line must come back. */
const OWN_SOCKETS = `
import os, socket, threading
here = os.getcwd()
for name, typ in (("stream", socket.SOCK_STREAM), ("seqpacket", socket.SOCK_SEQPACKET)):
    path = os.path.join(here, "own-" + name + ".sock")
    srv = socket.socket(socket.AF_UNIX, typ); srv.bind(path); srv.listen(1)
    t = threading.Thread(target=lambda: srv.accept()[0].send(b"own " + name.encode())); t.start()
    c = socket.socket(socket.AF_UNIX, typ); c.connect(path); print(c.recv(40).decode()); t.join()
srv = socket.socket(socket.AF_UNIX); srv.bind("child.sock"); srv.listen(1)
if os.fork() == 0:
    srv.accept()[0].send(b"own child server"); os._exit(0)
c = socket.socket(socket.AF_UNIX); c.setblocking(False)
try: c.connect("child.sock")
except BlockingIOError: pass
c.setblocking(True); print(c.recv(40).decode()); os.wait()
srv = socket.socket(socket.AF_UNIX); srv.bind("backlog.sock"); srv.listen(0)
full = socket.socket(socket.AF_UNIX); full.setblocking(False)
try:
    while True: full.connect("backlog.sock"); full = socket.socket(socket.AF_UNIX); full.setblocking(False)
except BlockingIOError: pass
def accept_later():
    import time; time.sleep(0.5)
    while True:
        a = srv.accept()[0]
        try: a.send(b"own full backlog")
        except OSError: pass  # a connection that filled the backlog, closed since
threading.Thread(target=accept_later, daemon=True).start()
c = socket.socket(socket.AF_UNIX); c.connect("backlog.sock")
data = b""
while not data.endswith(b"own full backlog"): data += c.recv(40)
print(data[-16:].decode())
a, b = socket.socketpair(); a.send(b"own socketpair"); print(b.recv(40).decode())
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET); a.send(b"own seqpacket pair"); print(b.recv(40).decode())
`;

const MULTIPROCESSING = `
import multiprocessing, threading
from multiprocessing.connection import Client, Listener
def double(x): return 2 * x
if __name__ == "__main__":
    with multiprocessing.Pool(2) as pool: print("pool", pool.map(double, [1, 2, 3]))
    with Listener("mp.sock", "AF_UNIX") as listener:
        t = threading.Thread(target=lambda: Client("mp.sock", "AF_UNIX").send("listener ok")); t.start()
        with listener.accept() as conn: print(conn.recv())
        t.join()
`;

let listener: ChildProcess | undefined;
let http: HttpServer | undefined;

const receivedLog = () => (existsSync(received) ? readFileSync(received, 'utf8') : '');

function hostClient(form: string, ...args: string[]): string {
  const r = spawnSync(PY, [join(work, 'client.py'), form, ...args], { cwd: work, env, encoding: 'utf8' });
  return r.stdout.trim();
}

/** Datagrams in flight on the host's side have arrived well within this. */
const settle = () => new Promise((r) => setTimeout(r, 200));

interface Attack {
  name: string;
  /** The client's form and arguments. */
  form: string;
  args: string[];
  /** What the control on the host prints (the case can fail). */
  control: RegExp;
  /** For datagrams: what the listener logs when one got through. */
  datagram?: string;
  /** Arguments of the control, when the attack's do not fit the host (a symlink the attack makes). */
  controlArgs?: string[];
  /** What the command prints inside (default: the connect or the socket refused). */
  refused?: RegExp;
}

const attacks: Attack[] = [
  {
    name: 'stream connect to a listener in the writable workspace',
    form: 'stream',
    args: [sock.stream],
    control: /OUTSIDE-stream/,
  },
  {
    name: 'seqpacket connect to a listener in the writable workspace',
    form: 'seqpacket',
    args: [sock.seqpacket],
    control: /OUTSIDE-seqpacket/,
  },
  {
    name: 'stream connect to an agent socket in a read-only grant',
    form: 'stream',
    args: [sock.agent],
    control: /OUTSIDE-agent/,
  },
  {
    name: 'a relative path after chdir',
    form: 'relative',
    args: [ro, 'agent.sock'],
    control: /OUTSIDE-agent/,
  },
  {
    name: 'a symlink in the workspace to the read-only grant’s socket',
    form: 'symlink',
    args: [sock.agent, join(work, 'innocent.sock')],
    controlArgs: [sock.agent, join(work, 'innocent-control.sock')],
    control: /OUTSIDE-agent/,
  },
  { name: 'a non-blocking connect', form: 'nonblocking', args: [sock.stream], control: /OUTSIDE-stream/ },
  {
    name: 'a second fd of the socket kept while the first connects',
    form: 'dup-then-connect',
    args: [sock.stream],
    control: /OUTSIDE-stream/,
    // The first fd's connect is refused; the second is a socket never connected.
    refused: /^ERR (EINVAL|ENOTCONN|EACCES)$/,
  },
  {
    name: 'a connection made by a child and passed on (SCM_RIGHTS)',
    form: 'passed-fd',
    args: [sock.agent],
    control: /OUTSIDE-agent/,
  },
  {
    name: 'datagram sendto() on an unbound socket',
    form: 'dgram-sendto',
    args: [sock.dgram],
    control: /sent/,
    datagram: 'sendto',
  },
  {
    name: 'datagram sendmsg() with an address',
    form: 'dgram-sendmsg',
    args: [sock.roDgram],
    control: /sent/,
    datagram: 'sendmsg',
  },
  {
    name: 'datagram connect() + send()',
    form: 'dgram-connect',
    args: [sock.roDgram],
    control: /sent/,
    datagram: 'connect-send',
  },
  {
    name: 'datagram sendto() on a socketpair() socket',
    form: 'dgram-socketpair',
    args: [sock.dgram],
    control: /sent/,
    datagram: 'socketpair',
  },
  {
    name: 'sendto() on a socketpair(SOCK_RAW) socket (a datagram one for AF_UNIX)',
    form: 'raw-socketpair',
    args: [sock.roDgram],
    control: /sent/,
    datagram: 'raw-socketpair',
  },
];

describe('pathname UNIX sockets of listeners outside the sandbox', () => {
  beforeAll(async () => {
    requireBinary();
    mkdirSync(work, { recursive: true });
    mkdirSync(ro, { recursive: true });
    writeFileSync(join(work, 'client.py'), CLIENT);
    writeFileSync(join(work, 'mp.py'), MULTIPROCESSING);
    listener = spawn(
      PY,
      ['-c', LISTENER, received, sock.stream, sock.seqpacket, sock.dgram, sock.agent, sock.roDgram],
      {
        stdio: ['pipe', 'pipe', 'inherit'],
      },
    );
    await new Promise<void>((resolve, reject) => {
      listener?.stdout?.setEncoding('utf8').on('data', (c: string) => c.includes('ready') && resolve());
      listener?.on('exit', (code) => reject(new Error(`the outside listener exited (${code})`)));
    });
    http = createHttpServer((_, res) => res.end('OUTSIDE-http\n'));
    await new Promise<void>((r) => http?.listen(sock.http, r));
  });

  afterAll(() => {
    listener?.stdin?.end();
    listener?.kill();
    http?.close();
    rmSync(root, { recursive: true, force: true });
  });

  describe('control: each form reaches the listener from the host', () => {
    for (const a of attacks) {
      it(a.name, async () => {
        // A blocking helper: the listener is another process, and the HTTP server is not used here.
        expect(hostClient(a.form, ...(a.controlArgs ?? a.args))).toMatch(a.control);
        if (a.datagram) {
          await settle();
          expect(receivedLog()).toContain(`datagram ${a.datagram}\n`);
        }
      });
    }
    it('curl --unix-socket', async () => {
      const r = await new Promise<string>((resolve) => {
        const child = spawn('curl', ['-s', '--unix-socket', sock.http, 'http://docker/version'], { env });
        let out = '';
        child.stdout.setEncoding('utf8').on('data', (c: string) => {
          out += c;
        });
        child.on('close', () => resolve(out));
      });
      expect(r).toContain('OUTSIDE-http');
    });
  });

  for (const mode of ['host', 'container'] as const) {
    describe(
      mode === 'host'
        ? 'inside, as the host runs rune'
        : "inside, under a container runtime's seccomp profile",
      () => {
        let unavailable: string | undefined;
        const inside = (argv: string[], cwd = work) =>
          runSandbox({
            mode,
            args: ['sandbox', '--layers', '--allow-write', work, '--allow-read', ro, '--', ...argv],
            cwd,
            env,
          });

        beforeAll(async () => {
          unavailable = mode === 'container' ? containerModeProblem() : undefined;
        });

        for (const a of attacks) {
          it(a.name, async (context) => {
            if (unavailable) context.skip(`container mode: ${unavailable}`);
            rmSync(received, { force: true });
            const r = await inside([PY, join(work, 'client.py'), a.form, ...a.args]);
            expect(r.code, r.stderr).toBe(0);
            expect(r.stdout).not.toContain('OUTSIDE');
            // Refused where the command is told, not failing in some other way.
            expect(r.stdout.trim()).toMatch(a.refused ?? /^ERR EACCES$/);
            await settle();
            expect(receivedLog()).not.toContain('datagram');
          });
        }

        it('curl --unix-socket to a Docker-like API socket in a read-only grant', async (context) => {
          if (unavailable) context.skip(`container mode: ${unavailable}`);
          const r = await inside(['curl', '-sS', '--unix-socket', sock.http, 'http://docker/version']);
          expect(r.stdout).not.toContain('OUTSIDE');
          expect(r.code).toBe(7); // curl: could not connect
        });

        it('the layer report says what keeps them out', async (context) => {
          if (unavailable) context.skip(`container mode: ${unavailable}`);
          const r = await inside(['/bin/true']);
          const layers = parseLayers(r.stderr);
          expect(layers.get('seccomp')?.detail).toContain('no UNIX datagram sockets');
          if (mode === 'host')
            expect(layers.get('network')?.detail).toMatch(
              /pathname UNIX sockets in granted folders: connect\(\) made by the net guard's connector, kept only when SO_PEERCRED names a listener inside/,
            );
          else expect(layers.get('namespaces')?.detail).toContain('seccomp refuses new UNIX sockets');
        });
      },
    );
  }

  describe('UNIX sockets of the command itself keep working', () => {
    it('a server it starts in the workspace (stream, seqpacket, a forked server, non-blocking, relative, a blocking connect waiting out a full backlog), socketpair', async () => {
      const r = await runSandbox({
        mode: 'host',
        args: ['sandbox', '--allow-write', work, '--', PY, '-c', OWN_SOCKETS],
        cwd: work,
        env,
      });
      expect(r.stderr).toBe('');
      expect(r.stdout.split('\n')).toEqual([
        'own stream',
        'own seqpacket',
        'own child server',
        'own full backlog',
        'own socketpair',
        'own seqpacket pair',
        '',
      ]);
    });

    it('a Node server and client on a socket in the workspace', async (context) => {
      // A node under /usr is in the view; one elsewhere (nvm) would need its folder granted.
      if (!existsSync('/usr/bin/node')) context.skip('needs Debian nodejs at /usr/bin/node');
      const script =
        "const net = require('node:net'); const srv = net.createServer((c) => c.end('own node')).listen('node.sock', () => net.connect('node.sock').on('data', (d) => { process.stdout.write(d); srv.close(); }));";
      const r = await runSandbox({
        mode: 'host',
        args: ['sandbox', '--allow-write', work, '--', '/usr/bin/node', '-e', script],
        cwd: work,
        env,
      });
      expect(r.stdout).toBe('own node');
    });

    it('Python multiprocessing: a pool, and a Listener/Client pair on a socket in the workspace', async (context) => {
      if (!existsSync('/usr/bin/python3')) context.skip('needs /usr/bin/python3');
      const r = await runSandbox({
        mode: 'host',
        args: ['sandbox', '--allow-write', work, '--', PY, 'mp.py'],
        cwd: work,
        env,
      });
      expect(r.stdout).toBe('pool [2, 4, 6]\nlistener ok\n');
    });
  });
});
