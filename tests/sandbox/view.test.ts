// The sandbox's view, attacked: what a command was not granted must not exist (host UNIX sockets,
// block devices, /run, other terminals, host IPC), what it was granted read-only must be read-only
// for the kernel (metadata included), and the sandbox's own plumbing must be out of reach. Each
// case has a control that runs the same command on the host and shows it works there, so the case
// can fail. The whole battery runs twice: as the host runs rune, and under a container runtime's
// default seccomp profile (no namespaces possible), where each case is either still stopped by
// what is left or named as lost in the layer report.
import { spawn, spawnSync } from 'node:child_process';
import {
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunResult, requireBinary } from '../helpers/rune.ts';
import {
  CONTAINER_SECCOMP,
  containerModeProblem,
  type LayerState,
  type Mode,
  parseLayers,
  runSandbox,
  SYSTEM_PYTHON,
} from './harness.ts';

const PY = SYSTEM_PYTHON;
const FAKE_KEY =
  '-----BEGIN OPENSSH PRIVATE KEY-----\nFAKE-KEY-rune-view-4242\n-----END OPENSSH PRIVATE KEY-----\n';
const isRoot = process.getuid?.() === 0;

// Under the host's /tmp on purpose: that is where Concourse build folders and most grants live, and
// the view must bind them into its private /tmp.
const root = mkdtempSync(join(tmpdir(), 'rune-view-'));
const home = join(root, 'home');
const project = join(root, 'project');
const work = join(root, 'work');
const outside = `/var/tmp/rune-view-${process.pid}`;
/** Never granted, and outside /tmp so that no private /tmp hides it by accident. */
const secret = join(outside, 'secret');
const scratch = join(root, 'scratch');
const rotmp = join(root, 'rotmp');
const shmDir = `/dev/shm/rune-view-${process.pid}`;
const sockets = {
  desktop: join(home, '.docker', 'desktop', 'docker.sock'),
  runtime: join(outside, 'api.sock'),
  tmp: join(root, 'api.sock'),
  home: join(home, '.local', 'run', 'agent.sock'),
};
const servers: Server[] = [];
const env = { PATH: '/usr/bin:/bin', HOME: home, LANG: 'C.UTF-8' };
const trueMode = statSync('/usr/bin/true').mode & 0o7777;

/** Changes that leave no file behind, as a shell script printing one marker per change that worked. */
function metadataAndWrites(file: string): string {
  return [
    `cat ${file} >/dev/null 2>&1 && echo READABLE`,
    `(echo x >> ${file}) 2>/dev/null && echo WROTE`,
    `truncate -s 0 ${file} 2>/dev/null && echo TRUNCATED`,
    `chmod 600 ${file} 2>/dev/null && echo CHMODED`,
    `touch -d 2001-01-01 ${file} 2>/dev/null && echo TOUCHED`,
    `${PY} -c 'import os, sys; os.setxattr(sys.argv[1], "user.rune", b"1")' ${file} 2>/dev/null && echo XATTR`,
    `ln ${file} ${file}.link 2>/dev/null && echo LINKED`,
    `mv ${file} ${file}.moved 2>/dev/null && echo RENAMED`,
  ].join('; ');
}
const ALL_CHANGES = ['READABLE', 'WROTE', 'TRUNCATED', 'CHMODED', 'TOUCHED', 'XATTR', 'LINKED', 'RENAMED'];

/** Whether this file system takes user xattrs (a tmpfs before Linux 6.6 does not). */
function xattrsSupported(dir: string): boolean {
  const probe = join(dir, '.xattr-probe');
  writeFileSync(probe, '');
  const r = spawnSync(PY, ['-c', 'import os, sys; os.setxattr(sys.argv[1], "user.rune", b"1")', probe]);
  rmSync(probe, { force: true });
  return r.status === 0;
}

/** The same on the host without blocking the event loop (the test's own socket servers must answer). */
function hostAsync(script: string): Promise<{ stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', script], {
      cwd: project,
      env,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      stdout += c;
    });
    child.on('error', reject);
    child.on('close', () => resolve({ stdout }));
  });
}

function host(script: string, options: { env?: Record<string, string>; stdio?: (number | 'ignore')[] } = {}) {
  return spawnSync('/bin/sh', ['-c', script], {
    cwd: project,
    env: { ...env, ...options.env },
    encoding: 'utf8',
    stdio: ['pipe', 'pipe', 'pipe', ...(options.stdio ?? [])],
    timeout: 30_000,
  });
}

function hostFile(path: string): { text: string; mode: number; mtimeMs: number } {
  const st = statSync(path);
  return { text: readFileSync(path, 'utf8'), mode: st.mode & 0o7777, mtimeMs: st.mtimeMs };
}

/** A scratch copy for a control, so the control never changes a fixture. */
function scratchCopy(path: string, name: string): string {
  mkdirSync(scratch, { recursive: true });
  const copy = join(scratch, name);
  rmSync(copy, { force: true });
  copyFileSync(path, copy);
  return copy;
}

const noKey = (r: RunResult) => expect(r.stdout + r.stderr).not.toContain('FAKE-KEY-rune-view');

type Fallback =
  /** What still stops the case without namespaces. */
  | 'seccomp'
  | 'landlock'
  | 'fd-close'
  /** Nothing to stop: the plumbing the attack aims at does not exist without namespaces. */
  | 'no-target'
  /** Lost without namespaces: the report must name it; `still` lists markers that must stay absent. */
  | { lost: RegExp; still?: string[] };

interface Case {
  klass: string;
  name: string;
  fallback: Fallback;
  /** Runs the same command on the host and shows it works there (so the case can fail). */
  control: () => void | Promise<void>;
  attack: (
    inside: (script: string, options?: InsideOptions) => Promise<RunResult>,
    mode: Mode,
  ) => Promise<void>;
  /** Why the case needs root (its control opens what only root may open). */
  rootOnly?: string;
}

interface InsideOptions {
  flags?: string[];
  env?: Record<string, string>;
}

const PTY_HOLDER = `
import os, select, sys
master, slave = os.openpty()
print(os.ttyname(slave), flush=True)
got = b""
while True:
    r, _, _ = select.select([master, sys.stdin], [], [], 30)
    if not r:
        break
    if master in r:
        got += os.read(master, 4096)
    if sys.stdin in r and not sys.stdin.buffer.read1(1):
        break
print("GOT", got.decode(errors="replace").replace("\\n", " "), flush=True)
`;

/** A host terminal held open by a helper process that reports what was written into it. */
async function withHostTerminal(use: (tty: string) => Promise<void>): Promise<string> {
  const holder = spawn(PY, ['-c', PTY_HOLDER], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  holder.stdout.setEncoding('utf8').on('data', (c: string) => {
    out += c;
  });
  while (!out.includes('\n')) await new Promise((r) => setTimeout(r, 20));
  const tty = out.split('\n')[0] as string;
  try {
    await use(tty);
  } finally {
    holder.stdin.end();
  }
  await new Promise((r) => holder.on('close', r));
  return out;
}

const SHM = (key: number, create: boolean, text = '') => `${PY} -c '
import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
sid = libc.shmget(${key}, 4096, ${create ? '0o1666' : '0'})
print("shmget", sid, errno.errorcode.get(ctypes.get_errno(), 0))
if sid >= 0:
    addr = libc.shmat(sid, None, 0)
    if addr not in (None, ctypes.c_void_p(-1).value):
        ${text ? `ctypes.memmove(addr, b"${text}", ${text.length})` : 'print("read", ctypes.string_at(addr, 7).decode(errors="replace"))'}
'`;

const IPC_LEFT_BEHIND = (key: number) => `${PY} -c '
import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
print("shm", libc.shmget(${key}, 4096, 0o1600), "sem", libc.semget(${key}, 1, 0o1600), "msg", libc.msgget(${key}, 0o1600))
'`;

const IPC_EXISTS = (key: number) =>
  `${PY} -c 'import ctypes; libc = ctypes.CDLL(None); print(libc.shmget(${key}, 0, 0), libc.semget(${key}, 0, 0), libc.msgget(${key}, 0))'`;

const IPC_REMOVE = (key: number) => `${PY} -c '
import ctypes
libc = ctypes.CDLL(None)
s = libc.shmget(${key}, 0, 0)
if s >= 0: libc.shmctl(s, 0, None)
s = libc.semget(${key}, 0, 0)
if s >= 0: libc.semctl(s, 0, 0)
s = libc.msgget(${key}, 0)
if s >= 0: libc.msgctl(s, 0, None)
'`;

const MQ_NAME = `/rune-view-${process.pid}`;
const MQ = (create: boolean) => `${PY} -c '
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.mq_open(b"${MQ_NAME}", ${create ? 'os.O_RDWR | os.O_CREAT, ctypes.c_int(0o600), None' : 'os.O_RDWR'})
print("mq", fd, errno.errorcode.get(ctypes.get_errno(), 0))
'`;

const SHM_KEY = 0x52560000 + (process.pid % 0xffff);
const LEFT_KEY = SHM_KEY + 0x10000;
const CONTROL_KEY = SHM_KEY + 0x20000;

const UNIX_CONNECT = (path: string) =>
  `${PY} -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print(s.recv(20).decode())' ${path}`;

const INOTIFY = (path: string) => `${PY} -c '
import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init1(0)
print("watch", libc.inotify_add_watch(fd, b"${path}", 0xfff), errno.errorcode.get(ctypes.get_errno(), 0))
'`;

/** The host's block devices this user can open (the control's proof that opening one works). */
function openableBlockDevices(): string[] {
  return readdirSync('/sys/class/block').filter((name) => {
    try {
      closeSync(openSync(`/dev/${name}`, 'r'));
      return true;
    } catch {
      return false;
    }
  });
}

const cases: Case[] = [
  // ------------------------------------------------------------ host UNIX sockets
  ...(
    [
      ['a runtime API socket in a folder never granted (/var/tmp/…)', sockets.runtime],
      ["a socket in the host's /tmp", sockets.tmp],
      ['an agent socket under the home folder', sockets.home],
    ] as const
  ).map(
    ([what, path]): Case => ({
      klass: 'host UNIX sockets',
      name: `connect(2) to ${what}`,
      fallback: 'seccomp',
      control: async () => expect((await hostAsync(UNIX_CONNECT(path))).stdout).toContain('HOSTSOCK'),
      attack: async (inside) => {
        const r = await inside(UNIX_CONNECT(path));
        expect(r.stdout).not.toContain('HOSTSOCK');
        expect(r.stderr).toMatch(/FileNotFoundError|PermissionError/);
      },
    }),
  ),

  {
    klass: 'host UNIX sockets',
    name: "connect(2) to Docker Desktop's socket under a home folder granted read-only",
    fallback: 'seccomp',
    control: async () =>
      expect((await hostAsync(UNIX_CONNECT(sockets.desktop))).stdout).toContain('HOSTSOCK'),
    attack: async (inside) => {
      // A read-only mount does not stop connect(2): the runtime's folder is hidden instead.
      const r = await inside(`${UNIX_CONNECT(sockets.desktop)}; cat "$HOME/notes.txt"`, {
        flags: ['--allow-read', home],
      });
      expect(r.stdout).not.toContain('HOSTSOCK');
      expect(r.stdout).toContain('home notes');
    },
  },

  // ------------------------------------------------------------ metadata Landlock does not mediate
  {
    klass: 'metadata on read-only paths',
    name: 'set the setuid bit on a system binary (/usr/bin/true)',
    fallback: 'seccomp',
    control: () => {
      const copy = scratchCopy('/usr/bin/true', 'true');
      host(`chmod u+s ${copy}`);
      expect(statSync(copy).mode & 0o4000).toBe(0o4000);
    },
    attack: async (inside) => {
      await inside(
        `chmod u+s /usr/bin/true; chmod 4755 /usr/bin/true; ${PY} -c 'import os; os.chmod("/usr/bin/true", 0o4755)'`,
      );
      expect(statSync('/usr/bin/true').mode & 0o7777).toBe(trueMode);
    },
  },
  {
    klass: 'metadata on read-only paths',
    name: "loosen a key's mode (chmod 644 ~/.ssh/id_rsa) with ~/.ssh granted read-only by name",
    // Without a view the metadata guard refuses chmod outside the writable grants.
    fallback: 'seccomp',
    control: () => {
      const copy = scratchCopy(join(home, '.ssh', 'id_rsa'), 'id_rsa');
      host(`chmod 644 ${copy}`);
      expect(statSync(copy).mode & 0o777).toBe(0o644);
    },
    attack: async (inside) => {
      const r = await inside('chmod 644 "$HOME/.ssh/id_rsa"; cat "$HOME/.ssh/id_rsa" | head -c 0', {
        // A grant into the secrets floor needs --unrestricted (src/sandbox/floor-grants.ts).
        flags: ['--unrestricted', '--allow-read', join(home, '.ssh')],
      });
      expect(r.stderr).toMatch(/Read-only file system|Operation not permitted/);
      expect(statSync(join(home, '.ssh', 'id_rsa')).mode & 0o777).toBe(0o600);
    },
  },
  {
    klass: 'metadata on read-only paths',
    name: 'chmod and chown of a file never granted (the command owns it; as root, every host file)',
    // No view: the path exists, Landlock does not mediate chmod/chown; the metadata guard refuses.
    fallback: 'seccomp',
    control: () => {
      const copy = scratchCopy(join(secret, 'file.txt'), 'never.txt');
      const r = host(`chmod 777 ${copy} && echo CHMODED; chown "$(id -u):$(id -g)" ${copy} && echo CHOWNED`);
      expect(r.stdout).toBe('CHMODED\nCHOWNED\n');
    },
    attack: async (inside) => {
      const file = join(secret, 'file.txt');
      const before = statSync(file);
      const r = await inside(
        `chmod 777 ${file} && echo CHMODED; chown "$(id -u):$(id -g)" ${file} && echo CHOWNED; ${PY} -c 'import os, sys; os.chmod(sys.argv[1], 0o777)' ${file} 2>/dev/null && echo PYCHMOD; chmod 600 ${work}/mine.txt 2>/dev/null; touch ${work}/mine.txt && chmod 640 ${work}/mine.txt && echo OWN`,
      );
      // The command's own files in a writable grant still change.
      expect(r.stdout).toBe('OWN\n');
      expect(statSync(file).mode).toBe(before.mode);
      expect(statSync(file).ctimeMs).toBe(before.ctimeMs);
    },
  },
  {
    klass: 'metadata on read-only paths',
    name: 'chown, utimensat and an xattr on the read-only working directory',
    fallback: { lost: /utimes on read-only paths/, still: ['CHOWNED', 'XATTR'] },
    control: () => {
      const copy = scratchCopy(join(project, 'README.md'), 'README.md');
      const r = host(
        `chown "$(id -u):$(id -g)" ${copy} && echo CHOWNED; touch -d 2001-01-01 ${copy} && echo TOUCHED`,
      );
      expect(r.stdout).toContain('CHOWNED');
      expect(r.stdout).toContain('TOUCHED');
    },
    attack: async (inside) => {
      const before = hostFile(join(project, 'README.md'));
      const r = await inside(
        `chown "$(id -u):$(id -g)" README.md 2>/dev/null && echo CHOWNED; touch -d 2001-01-01 README.md 2>/dev/null && echo TOUCHED; ${PY} -c 'import os; os.setxattr("README.md", "user.rune", b"1")' 2>/dev/null && echo XATTR`,
      );
      expect(r.stdout).toBe('');
      expect(hostFile(join(project, 'README.md'))).toEqual(before);
    },
  },

  // ------------------------------------------------------------ folders never granted
  {
    klass: 'folders never granted',
    name: 'stat and list a folder never granted',
    fallback: { lost: /stat of folders never granted/ },
    control: () => {
      const r = host(
        `stat -c %i ${secret} >/dev/null && echo STATTED; ls ${secret} >/dev/null && echo LISTED`,
      );
      expect(r.stdout).toBe('STATTED\nLISTED\n');
    },
    attack: async (inside) => {
      const r = await inside(
        `stat -c %i ${secret} >/dev/null 2>&1 && echo STATTED; ls ${secret} >/dev/null 2>&1 && echo LISTED; echo end`,
      );
      expect(r.stdout).toBe('end\n');
    },
  },
  {
    klass: 'folders never granted',
    name: 'an inotify watch on a folder never granted',
    fallback: 'seccomp',
    control: () => expect(host(INOTIFY(secret)).stdout).toMatch(/^watch [1-9]/),
    attack: async (inside) => {
      const r = await inside(INOTIFY(secret));
      expect(r.stdout).toMatch(/^watch -1 (ENOENT|EACCES)/);
    },
  },
  {
    klass: 'folders never granted',
    name: '/run, /var, /home, /root and the host sockets under them do not exist',
    fallback: { lost: /stat of folders never granted/ },
    control: () => {
      const r = host('for d in /root /run /var /home; do test -e $d && echo "PRESENT $d"; done');
      expect(r.stdout).toContain('PRESENT /var');
    },
    attack: async (inside) => {
      const paths = [
        '/root',
        '/home',
        '/run',
        '/var',
        '/var/run/docker.sock',
        '/run/docker.sock',
        '/run/containerd/containerd.sock',
        '/run/dbus/system_bus_socket',
        '/run/user',
        '/srv',
        '/mnt',
        '/media',
        '/boot',
        '/dev/mqueue',
      ];
      const r = await inside(
        `for d in ${paths.join(' ')}; do test -e $d -o -L $d && echo "PRESENT $d"; done; echo end`,
      );
      expect(r.stdout).toBe('end\n');
    },
  },
  {
    klass: 'folders never granted',
    name: '`ls /` lists only the view',
    fallback: 'landlock',
    control: () => {
      const listed = host('ls -A /').stdout.split('\n').filter(Boolean);
      expect(listed.filter((name) => !VIEW_ROOT.includes(name)).length).toBeGreaterThan(0);
    },
    attack: async (inside, mode) => {
      const r = await inside('ls -A /');
      const listed = r.stdout.split('\n').filter(Boolean);
      if (mode === 'container') expect(listed).toEqual([]);
      else {
        expect(listed).toContain('usr');
        expect(listed.filter((name) => !VIEW_ROOT.includes(name))).toEqual([]);
      }
    },
  },

  // ------------------------------------------------------------ read-only only in Landlock
  ...(
    [
      ["under the host's /tmp", () => join(rotmp, 'file.txt'), () => [rotmp]],
      ["under the host's /dev/shm", () => join(shmDir, 'file.txt'), () => [shmDir]],
      ['under a writable grant', () => join(work, 'ro', 'file.txt'), () => [join(work, 'ro')]],
    ] as const
  ).map(
    ([where, file, grants]): Case => ({
      klass: 'read-only grants',
      name: `a read-only grant ${where} cannot be written, truncated, renamed, chmod-ed, touched, linked or given an xattr`,
      fallback:
        where === 'under a writable grant'
          ? { lost: /writes to read-only grants under writable ones/, still: ['XATTR'] }
          : {
              lost: /utimes on read-only paths/,
              still: ['WROTE', 'TRUNCATED', 'CHMODED', 'XATTR', 'LINKED', 'RENAMED'],
            },
      control: () => {
        const dir = mkdtempSync(join(scratch, 'ops-'));
        const copy = join(dir, 'file.txt');
        copyFileSync(file(), copy);
        const expected = ALL_CHANGES.filter((m) => m !== 'XATTR' || xattrsSupported(dir));
        expect(host(metadataAndWrites(copy)).stdout.split('\n').filter(Boolean)).toEqual(expected);
      },
      attack: async (inside, mode) => {
        const before = hostFile(file());
        const r = await inside(`${metadataAndWrites(file())}; echo end`, {
          flags: grants().flatMap((g) => ['--allow-read', g]),
        });
        expect(r.stdout).toContain('end');
        if (mode === 'host') {
          expect(r.stdout).toBe('READABLE\nend\n');
          expect(hostFile(file())).toEqual(before);
        }
      },
    }),
  ),

  // ------------------------------------------------------------ terminals
  {
    klass: 'terminals',
    name: "read and write another terminal through the host's /dev/pts",
    fallback: 'landlock',
    control: async () => {
      const log = await withHostTerminal(async (tty) => {
        expect(host(`echo INJECT-host > ${tty} && echo WROTE`).stdout).toBe('WROTE\n');
      });
      expect(log).toContain('INJECT-host');
    },
    attack: async (inside) => {
      const log = await withHostTerminal(async (tty) => {
        const r = await inside(
          `(echo INJECT-sandbox > ${tty}) 2>/dev/null && echo WROTE; (exec 7<${tty}) 2>/dev/null && echo OPENED; echo end`,
        );
        expect(r.stdout).toBe('end\n');
      });
      expect(log).not.toContain('INJECT-sandbox');
    },
  },
  {
    klass: 'terminals',
    name: 'exhaust the ptys',
    fallback: 'landlock',
    control: () => {
      const r = host(`${PY} -c '${PTY_FLOOD}'`);
      expect(Number(r.stdout.trim())).toBe(100);
    },
    attack: async (inside) => {
      const r = await inside(`${PY} -c '${PTY_FLOOD}'`);
      expect(Number(r.stdout.trim())).toBeLessThanOrEqual(64);
      // The host still gets a terminal afterwards.
      expect(host(`${PY} -c 'import os; os.openpty(); print("ok")'`).stdout).toBe('ok\n');
    },
  },

  // ------------------------------------------------------------ System V IPC and message queues
  {
    klass: 'IPC',
    name: "read and write a host process's System V shared memory",
    fallback: 'seccomp',
    control: () => expect(host(SHM(SHM_KEY, false)).stdout).toContain('read HOSTSHM'),
    attack: async (inside) => {
      const r = await inside(`${SHM(SHM_KEY, false)}; ${SHM(SHM_KEY, true, 'PWNED!!')}`);
      expect(r.stdout).not.toContain('HOSTSHM');
      expect(host(SHM(SHM_KEY, false)).stdout).toContain('read HOSTSHM');
    },
  },
  {
    klass: 'IPC',
    name: 'System V segments, semaphores and queues outliving the call',
    fallback: 'seccomp',
    control: () => {
      host(IPC_LEFT_BEHIND(CONTROL_KEY));
      expect(host(IPC_EXISTS(CONTROL_KEY)).stdout).not.toMatch(/^-1 -1 -1$/m);
      host(IPC_REMOVE(CONTROL_KEY));
    },
    attack: async (inside) => {
      await inside(IPC_LEFT_BEHIND(LEFT_KEY));
      expect(host(IPC_EXISTS(LEFT_KEY)).stdout.trim()).toBe('-1 -1 -1');
    },
  },
  {
    klass: 'IPC',
    name: "a host process's POSIX message queue",
    fallback: 'seccomp',
    control: () => expect(host(MQ(false)).stdout).toMatch(/^mq [0-9]/),
    attack: async (inside) => {
      const r = await inside(MQ(false));
      expect(r.stdout).toMatch(/^mq -1 (ENOENT|EPERM)/);
    },
  },

  // ------------------------------------------------------------ device nodes
  {
    klass: 'devices',
    name: 'block and loop devices of the host',
    rootOnly: 'only root may open the host block devices, so the control needs root',
    fallback: 'landlock',
    control: () => {
      const devices = openableBlockDevices();
      expect(devices.length).toBeGreaterThan(0);
      expect(host(`(exec 7</dev/${devices[0]}) && echo OPENED`).stdout).toBe('OPENED\n');
    },
    attack: async (inside, mode) => {
      const devices = [...openableBlockDevices(), 'loop-control'];
      const r = await inside(
        `for d in ${devices.join(' ')}; do (exec 7</dev/$d) 2>/dev/null && echo "OPENED $d"; ${mode === 'host' ? 'test -e /dev/$d && echo "PRESENT $d";' : ''} done; echo end`,
      );
      expect(r.stdout).toBe('end\n');
    },
  },
  {
    klass: 'devices',
    name: 'consoles and the kernel log',
    rootOnly: 'only root may open the consoles, so the control needs root',
    fallback: 'landlock',
    control: () => {
      const r = host('for d in console tty0 kmsg; do (exec 7</dev/$d) 2>/dev/null && echo "OPENED $d"; done');
      expect(r.stdout).toContain('OPENED');
    },
    attack: async (inside) => {
      const r = await inside(
        'for d in console tty0 tty1 kmsg mem port; do (exec 7</dev/$d) 2>/dev/null && echo "OPENED $d"; done; echo end',
      );
      expect(r.stdout).toBe('end\n');
    },
  },

  {
    klass: 'devices',
    name: "chmod, utimes and an xattr on the view's device nodes (the host's own /dev/null, /dev/tty)",
    rootOnly: 'a command is the owner of the host device nodes only when rune runs as root',
    fallback: { lost: /utimes on read-only paths/, still: ['CHMODED', 'XATTR'] },
    control: () => {
      // The same mode again and a time stamp: harmless on the host, and it shows root may.
      const r = host('chmod 666 /dev/null && echo CHMODED; touch -c /dev/null && echo TOUCHED');
      expect(r.stdout).toBe('CHMODED\nTOUCHED\n');
    },
    attack: async (inside) => {
      const before = ['/dev/null', '/dev/zero', '/dev/tty'].map((d) => statSync(d).ctimeMs);
      const r = await inside(
        `for d in null zero full random urandom tty; do chmod 666 /dev/$d 2>/dev/null && echo "CHMODED $d"; touch -c /dev/$d 2>/dev/null && echo "TOUCHED $d"; ${PY} -c 'import os, sys; os.setxattr(sys.argv[1], "trusted.rune", b"1")' /dev/$d 2>/dev/null && echo "XATTR $d"; done; echo x > /dev/null && head -c 3 /dev/zero | wc -c`,
      );
      // The devices still work; their inodes are out of reach.
      expect(r.stdout).toBe('3\n');
      expect(['/dev/null', '/dev/zero', '/dev/tty'].map((d) => statSync(d).ctimeMs)).toEqual(before);
    },
  },

  // ------------------------------------------------------------ /etc secrets as a class
  {
    klass: '/etc secrets',
    name: '/etc/shadow- and /etc/gshadow- (the backups)',
    rootOnly: 'only root may read /etc/shadow-, so the control needs root',
    fallback: 'landlock',
    control: () => expect(host('cat /etc/shadow-').stdout).toMatch(/^root:/m),
    attack: async (inside) => {
      const r = await inside('cat /etc/shadow- /etc/gshadow- /etc/shadow /etc/gshadow');
      expect(r.stdout).not.toMatch(/^root:/m);
    },
  },
  {
    klass: '/etc secrets',
    name: 'every file of /etc that others may not read',
    rootOnly: 'only root may read those files, so the control needs root',
    fallback: 'landlock',
    control: () => {
      const files = closedEtcFiles();
      expect(files.length).toBeGreaterThan(0);
      expect(host(`cat ${files.join(' ')}`).stdout.length).toBeGreaterThan(0);
    },
    attack: async (inside) => {
      const r = await inside(`cat ${closedEtcFiles().join(' ')}; echo end`);
      expect(r.stdout).toBe('end\n');
    },
  },

  // ------------------------------------------------------------ the sandbox's plumbing
  {
    klass: 'plumbing',
    name: "write to a host pipe inherited by rune sandbox, through the init's /proc/1/fd or its own fds",
    fallback: 'fd-close',
    control: () =>
      expect(withHostPipe('/bin/sh', ['-c', 'echo INJECT-host >&5']).piped).toContain('INJECT-host'),
    attack: async (_inside, mode) => {
      const args = ['sandbox', '--allow-write', work, '--', '/bin/sh', '-c', INJECT_EVERY_FD];
      const r = withHostPipe(...wrapped(mode, requireBinary(), args));
      expect(r.stderr).toContain('end');
      expect(r.piped).not.toContain('INJECT-sandbox');
    },
  },
  {
    klass: 'plumbing',
    name: 'write to a host pipe the sandbox helper itself inherited',
    fallback: 'fd-close',
    control: () =>
      expect(withHostPipe('/bin/sh', ['-c', 'echo INJECT-host >&5']).piped).toContain('INJECT-host'),
    attack: async (_inside, mode) => {
      // rune's Node marks what it inherits close-on-exec; the helper must not rely on that.
      const r = withHostPipe(
        ...wrapped(mode, helperBinary(), [...HELPER_VIEW_ARGS, '--', '/bin/sh', '-c', INJECT_EVERY_FD]),
      );
      expect(r.stderr).toContain('end');
      expect(r.piped).not.toContain('INJECT-sandbox');
    },
  },
  {
    klass: 'plumbing',
    name: "fake the init's status pipe (a stopped status) so rune sandbox hangs",
    fallback: 'no-target',
    control: () => expect(host(`printf '\\177\\023\\000\\000' > /dev/null; exit 3`).status).toBe(3),
    attack: async (inside) => {
      const r = await inside(
        `for f in /proc/1/fd/*; do (printf '\\177\\023\\000\\000' > "$f") 2>/dev/null; done; exit 3`,
      );
      expect(r.signal).toBeNull();
      expect(r.code).toBe(3);
    },
  },
  {
    klass: 'plumbing',
    name: "the namespace's init cannot be inspected (/proc/1)",
    fallback: 'landlock',
    control: () =>
      expect(host('ls /proc/self/fd >/dev/null && readlink /proc/self/fd/0 && echo READ').stdout).toContain(
        'READ',
      ),
    attack: async (inside, mode) => {
      const r = await inside(
        'ls /proc/1/fd >/dev/null 2>&1 && echo LISTED; readlink /proc/1/fd/* 2>/dev/null | grep -q . && echo READLINK; grep -q . /proc/1/environ 2>/dev/null && echo ENVIRON; echo end',
      );
      // Without a PID namespace /proc/1 is the host's init: root may list its fd numbers, but
      // Landlock refuses every ptrace-mode access (its fds, memory and environment).
      expect(r.stdout).toMatch(mode === 'host' ? /^end\n$/ : /^(LISTED\n)?end\n$/);
    },
  },

  // ------------------------------------------------------------ grants through symlinks
  {
    klass: 'symlinked grants',
    name: 'a read-only grant `docs -> ~` does not expose ~/.ssh or ~/.aws',
    fallback: 'landlock',
    control: () => expect(host('cat docs/.ssh/id_rsa').stdout).toContain('FAKE-KEY'),
    attack: async (inside) => {
      const r = await inside(
        'cat docs/.ssh/id_rsa docs/.aws/credentials "$HOME/.ssh/id_rsa"; ls -a docs/.ssh docs/.aws; ls docs/.ssh/; cat docs/notes.txt',
        { flags: ['--allow-read', join(project, 'docs')] },
      );
      noKey(r);
      expect(r.stdout).not.toContain('AWS-SECRET');
      expect(r.stdout).not.toContain('id_rsa');
      expect(r.stdout).toContain('home notes'); // the rest of the grant is there
    },
  },
  {
    klass: 'symlinked grants',
    name: 'a writable grant `docs -> ~` does not expose or accept ~/.ssh',
    fallback: { lost: /hidden or protected paths inside writable grants/ },
    control: () => expect(host('cat docs/.ssh/id_rsa').stdout).toContain('FAKE-KEY'),
    attack: async (inside) => {
      const r = await inside(
        'cat docs/.ssh/id_rsa; echo ssh-rsa AAAA >> docs/.ssh/authorized_keys; echo written > docs/new.txt; cat docs/new.txt',
        { flags: ['--allow-write', join(project, 'docs')] },
      );
      noKey(r);
      expect(existsSync(join(home, '.ssh', 'authorized_keys'))).toBe(false);
      expect(readFileSync(join(home, 'new.txt'), 'utf8')).toBe('written\n');
    },
  },
  {
    klass: 'symlinked grants',
    name: 'a grant through a symlink to a folder above the home folder (`up -> …`)',
    fallback: 'landlock',
    control: () => expect(host('cat up/home/.ssh/id_rsa').stdout).toContain('FAKE-KEY'),
    attack: async (inside) => {
      const r = await inside('cat up/home/.ssh/id_rsa up/home/.aws/credentials; ls -a up/home/.ssh', {
        flags: ['--allow-read', join(project, 'up')],
      });
      noKey(r);
      expect(r.stdout).not.toContain('AWS-SECRET');
    },
  },

  // ------------------------------------------------------------ what else the host's tree shows
  {
    klass: 'host-wide /proc and /sys',
    name: '/proc/sys cannot be opened for writing',
    rootOnly: 'only root may open /proc/sys for writing, so the control needs root',
    fallback: 'landlock',
    control: () => expect(host(`${PY} -c '${PROC_SYS_OPEN}'`).stdout).toContain('OPENED'),
    attack: async (inside) => {
      const r = await inside(`${PY} -c '${PROC_SYS_OPEN}'; echo end`);
      expect(r.stdout).toBe('end\n');
    },
  },
  {
    klass: 'host-wide /proc and /sys',
    name: "host processes, kernel timers, the host's mounts and cgroups are not visible",
    fallback: { lost: /reading the host's \/proc and \/sys/ },
    control: () => {
      const r = host(`test -e /proc/${process.pid} && echo HOSTPID; ls /sys/fs/cgroup | head -1`);
      expect(r.stdout).toContain('HOSTPID');
      expect(hostOnlyMounts().length).toBeGreaterThan(0);
    },
    attack: async (inside) => {
      const r = await inside(
        `test -e /proc/${process.pid} && echo HOSTPID; ls /sys/fs/cgroup; head -c 64 /proc/timer_list /proc/kcore /proc/keys 2>/dev/null; echo; cut -d" " -f5 /proc/self/mountinfo`,
      );
      expect(r.stdout).not.toContain('HOSTPID');
      expect(r.stdout).not.toMatch(/Timer List|cpu:/);
      const mountPoints = new Set(r.stdout.split('\n'));
      expect(hostOnlyMounts().filter((m) => mountPoints.has(m))).toEqual([]);
    },
  },

  // ------------------------------------------------------------ everything else keeps working
  {
    klass: 'still works',
    name: 'passwd, resolv.conf, CA certificates, locales, /dev/null, git, python and node work',
    fallback: 'no-target',
    control: () => expect(host(STILL_WORKS).stdout).toBe(STILL_WORKS_OUTPUT),
    attack: async (inside) => {
      const r = await inside(STILL_WORKS);
      expect(r.stdout).toBe(STILL_WORKS_OUTPUT);
    },
  },
  {
    klass: 'still works',
    name: 'a terminal the command makes (/dev/ptmx, /dev/tty)',
    fallback: { lost: /no pseudo-terminals/ },
    control: () => expect(host(`${PY} -c '${OWN_PTY}'`).stdout).toContain('TTY-OK'),
    attack: async (inside) => {
      const r = await inside(`${PY} -c '${OWN_PTY}'`);
      expect(r.stdout).toContain('TTY-OK');
    },
  },
  {
    klass: 'still works',
    name: 'mktemp works in the TMPDIR the command gets, and nothing of it is left on the host',
    fallback: 'no-target',
    control: () =>
      expect(
        host('mkdir -p "$TMPDIR" && mktemp >/dev/null && echo MADE', { env: { TMPDIR: CALL_TMPDIR } }).stdout,
      ).toBe('MADE\n'),
    attack: async (inside) => {
      const r = await inside('mktemp >/dev/null && echo MADE; echo "$TMPDIR"', {
        env: { TMPDIR: CALL_TMPDIR },
      });
      const [made, tmp] = r.stdout.split('\n');
      expect(made).toBe('MADE');
      // In the view it is the private /tmp's; without one, a folder of the call's own, gone now.
      expect(existsSync(tmp as string) && tmp !== CALL_TMPDIR).toBe(false);
    },
  },
  {
    klass: 'still works',
    name: "a private /tmp, and grants under the host's /tmp readable and writable as granted",
    fallback: 'no-target',
    control: () =>
      expect(host(`cat README.md && echo ok > ${work}/w.txt && cat ${work}/w.txt`).stdout).toBe(
        'project readme\nok\n',
      ),
    attack: async (inside, mode) => {
      const r = await inside(`cat README.md && echo ok > ${work}/w.txt && cat ${work}/w.txt`);
      expect(r.stdout).toBe('project readme\nok\n');
      if (mode === 'host') {
        const t = await inside(`echo x > /tmp/rune-view-private && ls /tmp`);
        expect(t.stdout).toContain('rune-view-private');
        expect(existsSync('/tmp/rune-view-private')).toBe(false);
      }
    },
  },
];

/** What `ls /` may list in the view when every grant lives under /tmp. */
const VIEW_ROOT = [
  'bin',
  'dev',
  'etc',
  'lib',
  'lib32',
  'lib64',
  'libx32',
  'opt',
  'proc',
  'sbin',
  'sys',
  'tmp',
  'usr',
];

/** A TMPDIR under /tmp that exists nowhere on the host until a control makes it. */
const CALL_TMPDIR = `/tmp/rune-view-tmpdir-${process.pid}/sub`;

const PTY_FLOOD = `import os
fds = []
try:
    for i in range(100):
        fds.append(os.open("/dev/ptmx", os.O_RDWR | os.O_NOCTTY))
except OSError:
    pass
print(len(fds))`;

const OWN_PTY = `import pty, sys
pty.spawn(["/bin/sh", "-c", "echo TTY-OK > /dev/tty"])`;

const PROC_SYS_OPEN = `import os
for path in ("/proc/sys/vm/drop_caches", "/proc/sys/kernel/core_pattern", "/proc/sysrq-trigger"):
    try:
        os.close(os.open(path, os.O_WRONLY)); print("OPENED", path)
    except OSError:
        pass`;

const STILL_WORKS = [
  'getent passwd root | cut -d: -f1',
  'test -r /etc/resolv.conf && echo resolv',
  'test -r /etc/ssl/certs/ca-certificates.crt && echo ca',
  'echo x > /dev/null && echo null',
  `${PY} -c 'print("é")'`,
  'git --version >/dev/null && echo git',
  `node -e 'console.log(require("os").cpus().length > 0)'`,
].join('; ');
const STILL_WORKS_OUTPUT = 'root\nresolv\nca\nnull\né\ngit\ntrue\n';

function closedEtcFiles(): string[] {
  const r = spawnSync('find', ['/etc', '-xdev', '-type', 'f', '!', '-perm', '-o+r'], { encoding: 'utf8' });
  return r.stdout.split('\n').filter(Boolean);
}

/** Mount points of the host outside every folder the view holds. */
function hostOnlyMounts(): string[] {
  const inView = [
    '/',
    '/usr',
    '/etc',
    '/opt',
    '/proc',
    '/sys',
    '/dev',
    '/tmp',
    '/bin',
    '/sbin',
    '/lib',
    '/lib64',
  ];
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[4] ?? '')
    .filter(
      (m) =>
        m &&
        !inView.includes(m) &&
        !m.startsWith('/proc/') &&
        !m.startsWith('/dev/') &&
        !m.startsWith('/tmp/'),
    );
}

/** The helper rune wrote into its cache on the first call (the battery's HOME is rune's). */
function helperBinary(): string {
  const dir = join(home, '.rune', 'cache', 'native');
  const name = readdirSync(dir).find((n) => n.startsWith('rune-sandbox-') && !n.endsWith('.tmp'));
  if (!name) throw new Error(`no sandbox helper in ${dir}`);
  return join(dir, name);
}

/** The view's arguments as the executor passes them (system folders, the working directory). */
const HELPER_VIEW_ARGS = [
  ...['/usr', '/bin', '/sbin', '/lib', '/lib64', '/etc', '/opt'].flatMap((p) => ['--sys', p]),
  '--ro',
  project,
  '--cwd',
  project,
];

/** Writes into every fd of the namespace's init and of the command, then says it is done. */
const INJECT_EVERY_FD =
  'for f in /proc/1/fd/* /proc/self/fd/*; do (echo INJECT-sandbox > "$f") 2>/dev/null; done; (echo INJECT-sandbox >&5) 2>/dev/null; echo end >&2';

/** A command as it runs in `mode` (under the container profile, or as is). */
function wrapped(mode: Mode, file: string, args: string[]): [string, string[]] {
  return mode === 'container' ? [PY, [CONTAINER_SECCOMP, '--', file, ...args]] : [file, args];
}

/**
 * Runs a command with a host pipe as its fd 5 (a pipe, not a FIFO or socket: /proc/PID/fd opens
 * a pipe, and Landlock does not mediate it); what reaches the pipe comes back as `piped`.
 */
function withHostPipe(file: string, args: string[]): { piped: string; stderr: string } {
  const r = spawnSync('/bin/sh', ['-c', '"$@" 5>&1 >/dev/null | cat', 'sh', file, ...args], {
    cwd: project,
    env,
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { piped: r.stdout, stderr: r.stderr };
}

describe('the sandbox view', () => {
  beforeAll(async () => {
    mkdirSync(join(home, '.ssh'), { recursive: true });
    writeFileSync(join(home, '.ssh', 'id_rsa'), FAKE_KEY, { mode: 0o600 });
    mkdirSync(join(home, '.aws'), { recursive: true });
    writeFileSync(join(home, '.aws', 'credentials'), '[default]\nkey = AWS-SECRET-rune-view\n');
    writeFileSync(join(home, 'notes.txt'), 'home notes\n');
    mkdirSync(join(home, '.local', 'run'), { recursive: true });
    mkdirSync(join(home, '.docker', 'desktop'), { recursive: true });
    mkdirSync(project, { recursive: true });
    writeFileSync(join(project, 'README.md'), 'project readme\n');
    symlinkSync(home, join(project, 'docs'));
    symlinkSync(root, join(project, 'up'));
    mkdirSync(join(work, 'ro'), { recursive: true });
    writeFileSync(join(work, 'ro', 'file.txt'), 'read-only under a writable grant\n');
    mkdirSync(secret, { recursive: true });
    writeFileSync(join(secret, 'file.txt'), 'never granted\n');
    mkdirSync(rotmp, { recursive: true });
    writeFileSync(join(rotmp, 'file.txt'), 'read-only under /tmp\n');
    mkdirSync(shmDir, { recursive: true });
    writeFileSync(join(shmDir, 'file.txt'), 'read-only under /dev/shm\n');
    for (const path of Object.values(sockets)) {
      const server = createServer((socket) => socket.end('HOSTSOCK\n'));
      await new Promise<void>((r) => server.listen(path, r));
      servers.push(server);
    }
    expect(host(SHM(SHM_KEY, true, 'HOSTSHM')).stdout).toMatch(/^shmget [0-9]/);
    expect(host(MQ(true)).stdout).toMatch(/^mq [0-9]/);
  });

  afterAll(() => {
    for (const server of servers) server.close();
    host(IPC_REMOVE(SHM_KEY));
    host(IPC_REMOVE(LEFT_KEY));
    host(`${PY} -c 'import ctypes; ctypes.CDLL(None).mq_unlink(b"${MQ_NAME}")'`);
    rmSync(shmDir, { recursive: true, force: true });
    rmSync(`/tmp/rune-view-tmpdir-${process.pid}`, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
    rmSync(root, { recursive: true, force: true });
    // A broken sandbox must not leave a setuid system binary behind.
    if ((statSync('/usr/bin/true').mode & 0o7777) !== trueMode)
      spawnSync('chmod', [trueMode.toString(8), '/usr/bin/true']);
  });

  it('has at least two cases per class, each with a control', () => {
    const perClass = new Map<string, number>();
    for (const c of cases) perClass.set(c.klass, (perClass.get(c.klass) ?? 0) + 1);
    for (const [klass, count] of perClass) expect(count, klass).toBeGreaterThanOrEqual(2);
  });

  describe('control: each command works on the host', () => {
    for (const c of cases) {
      it(`[${c.klass}] ${c.name}`, async (context) => {
        if (c.rootOnly && !isRoot) context.skip(c.rootOnly);
        await c.control();
      });
    }
  });

  for (const mode of ['host', 'container'] as const) {
    describe(`inside the sandbox (${mode === 'host' ? 'as the host runs it' : "under a container runtime's seccomp profile"})`, () => {
      let layers = new Map<string, LayerState>();
      let unavailable: string | undefined;
      const inside = (script: string, options: InsideOptions = {}) =>
        runSandbox({
          mode,
          args: [
            'sandbox',
            '--layers',
            '--allow-write',
            work,
            ...(options.flags ?? []),
            '--',
            '/bin/sh',
            '-c',
            script,
          ],
          cwd: project,
          env: { ...env, ...options.env },
        });

      beforeAll(async () => {
        unavailable = mode === 'container' ? containerModeProblem() : undefined;
        if (unavailable) return;
        const probe = await inside('true');
        expect(probe.code).toBe(0);
        layers = parseLayers(probe.stderr);
        if (mode === 'host' && !/view built from the grants/.test(layers.get('namespaces')?.detail ?? ''))
          unavailable = `the view is not built on this machine: ${layers.get('namespaces')?.detail}`;
        if (mode === 'container') expect(layers.get('namespaces')?.applied).toBe(false);
      });

      for (const c of cases) {
        it(`[${c.klass}] ${c.name}`, async (context) => {
          if (unavailable) {
            console.warn(`view battery (${mode}): skipping, ${unavailable}`);
            context.skip(unavailable);
          }
          if (c.rootOnly && !isRoot) context.skip(c.rootOnly);
          const fallback = mode === 'container' ? c.fallback : undefined;
          if (fallback && typeof fallback === 'object') {
            // Lost without namespaces: the report must say so; run it only to check what still holds.
            expect(layers.get('namespaces')?.detail).toMatch(fallback.lost);
            if (!fallback.still) return;
            const r = await runStill(c, inside, mode);
            for (const marker of fallback.still) expect(r.stdout).not.toContain(marker);
            return;
          }
          await c.attack(inside, mode);
        });
      }
    });
  }
});

/** Runs a lost case's attack and returns its output, without the case's own (host-mode) checks. */
async function runStill(
  c: Case,
  inside: (script: string, options?: InsideOptions) => Promise<RunResult>,
  mode: Mode,
): Promise<RunResult> {
  let last: RunResult | undefined;
  const capture = async (script: string, options?: InsideOptions) => {
    last = await inside(script, options);
    return last;
  };
  try {
    await c.attack(capture, mode);
  } catch {
    // The case's own expectations cover the view; only the markers in `still` matter here.
  }
  if (!last) throw new Error(`${c.name}: the attack ran nothing`);
  return last;
}
