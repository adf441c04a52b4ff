// The Concourse resource as an operator deploys it, without Docker: the root file system of the
// Dockerfile's last stage, built with mmdebstrap by running that stage's own instructions (so the
// image and this test cannot drift), cached by their text; then check/in/out run in it under
// bubblewrap as the image's user with root-owned /tmp/build volumes, no TTY and Concourse's
// variables — plainly, inside a user namespace, or under a container runtime's seccomp profile.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { RunResult } from './rune.ts';

const REPO = resolve(import.meta.dirname, '../..');
/** Gitignored; one folder per image key, the newest kept. */
export const IMAGE_CACHE = join(REPO, 'tests/e2e/.concourse-image');
/** Bump when the way the root is built changes (not the Dockerfile: its text is in the key). */
const BUILDER_VERSION = 2;

/** Docker's default PATH for a container whose image sets none. */
const DOCKER_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** Base images this test can reproduce, and the Debian suite each is built from. */
const BASE_IMAGES: Record<string, string> = {
  'debian:12-slim': 'bookworm',
  'debian:bookworm-slim': 'bookworm',
  'debian:12': 'bookworm',
  'debian:bookworm': 'bookworm',
};

export interface Instruction {
  keyword: string;
  /** `--from=build`, `--chmod=0755` … */
  flags: Record<string, string>;
  args: string;
}

export interface Stage {
  from: string;
  instructions: Instruction[];
}

/** Dockerfile instructions by stage: continuation lines joined, comment lines dropped (as Docker does). */
export function parseDockerfile(text: string): Stage[] {
  const logical: string[] = [];
  let current = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('#') || (line === '' && current === '')) continue;
    if (line.endsWith('\\')) {
      current += `${line.slice(0, -1)} `;
      continue;
    }
    logical.push(`${current}${line}`.trim());
    current = '';
  }
  if (current.trim()) logical.push(current.trim());
  const stages: Stage[] = [];
  for (const line of logical.filter(Boolean)) {
    const match = /^(\S+)\s*(.*)$/s.exec(line)!;
    const keyword = match[1]!.toUpperCase();
    let rest = match[2]!;
    const flags: Record<string, string> = {};
    for (let flag = /^--([a-z-]+)=(\S+)\s+/.exec(rest); flag; flag = /^--([a-z-]+)=(\S+)\s+/.exec(rest)) {
      flags[flag[1]!] = flag[2]!;
      rest = rest.slice(flag[0].length);
    }
    if (keyword === 'FROM') stages.push({ from: rest.split(/\s+/)[0]!, instructions: [] });
    else if (stages.length === 0) throw new Error(`Dockerfile: ${keyword} before FROM`);
    else stages.at(-1)!.instructions.push({ keyword, flags, args: rest });
  }
  return stages;
}

export interface Image {
  root: string;
  /** The Dockerfile's COPY of the built binary: where it lands and with which mode. */
  binary: { dest: string; mode: string };
  uid: number;
  gid: number;
  user: string;
  /** The image's accounts by name (its /etc/passwd). */
  accounts: Record<string, { uid: number; gid: number }>;
  env: Record<string, string>;
  workdir: string;
  /** What `apt-get install` installs in the Dockerfile, for the test to show it read them. */
  packages: string[];
}

interface Plan {
  suite: string;
  hooks: string[];
  scripts: string[];
  binary: Image['binary'];
  user: string;
  env: Record<string, string>;
  workdir: string;
  packages: string[];
}

/** The last stage as mmdebstrap hooks: RUN lines verbatim in the chroot, COPY of the build's binary as a placeholder. */
function planImage(stage: Stage): Plan {
  const suite = BASE_IMAGES[stage.from];
  if (!suite)
    throw new Error(`Dockerfile: the runtime stage's base ${stage.from} is not one this test can build`);
  const hooks: string[] = [];
  const scripts: string[] = [];
  let binary: Image['binary'] | undefined;
  let user = 'root';
  let workdir = '/';
  const env: Record<string, string> = { PATH: DOCKER_PATH };
  const packages: string[] = [];
  for (const { keyword, flags, args } of stage.instructions) {
    switch (keyword) {
      case 'RUN': {
        // Each RUN exactly as Docker runs it: /bin/sh -c with the image's environment so far.
        const file = `run-${scripts.length}.sh`;
        scripts.push(args);
        const vars = Object.entries({ HOME: '/root', ...env }).map(([k, v]) => `${k}=${v}`);
        hooks.push(
          `chroot "$1" /usr/bin/env -i ${vars.join(' ')} /bin/sh -c "$(cat "$RUNE_IMAGE_SCRIPTS/${file}")"`,
        );
        for (const command of args.split(/&&|\|\||;/).map((part) => part.trim().split(/\s+/))) {
          if (command[0] === 'apt-get' && command[1] === 'install') {
            if (!command.includes('--no-install-recommends')) {
              throw new Error('Dockerfile: apt-get install without --no-install-recommends; teach this test');
            }
            packages.push(...command.slice(2).filter((word) => !word.startsWith('-')));
          }
        }
        break;
      }
      case 'COPY': {
        const [src, dest, ...more] = args.split(/\s+/);
        if (flags.from !== 'build' || src !== '/src/dist/rune' || !dest || more.length > 0) {
          throw new Error(`Dockerfile: COPY ${args} is not the build's binary; teach this test what it is`);
        }
        binary = { dest, mode: flags.chmod ?? '0755' };
        hooks.push(`mkdir -p "$1$(dirname ${dest})" && install -m ${binary.mode} /dev/null "$1${dest}"`);
        break;
      }
      case 'USER':
        user = args.trim();
        break;
      case 'ENV':
        for (const pair of args.matchAll(/(\w+)=(\S+)/g)) env[pair[1]!] = pair[2]!;
        break;
      case 'WORKDIR':
        workdir = args.trim();
        hooks.push(`mkdir -p "$1${workdir}"`);
        break;
      default:
        throw new Error(`Dockerfile: ${keyword} in the runtime stage is not one this test reproduces`);
    }
  }
  if (!binary) throw new Error('Dockerfile: the runtime stage does not COPY the built binary');
  return { suite, hooks, scripts, binary, user, env, workdir, packages };
}

export interface Prerequisites {
  ok: boolean;
  reason?: string;
}

export function imagePrerequisites(): Prerequisites {
  if (process.getuid?.() !== 0)
    return { ok: false, reason: 'needs root (mmdebstrap --mode=root, bwrap as root)' };
  for (const tool of ['mmdebstrap', 'bwrap']) {
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0)
      return { ok: false, reason: `${tool} is not installed` };
  }
  if (spawnSync('/usr/bin/python3', ['-c', 'import seccomp']).status !== 0) {
    return { ok: false, reason: "Debian's python3-seccomp is not installed" };
  }
  return { ok: true };
}

/** Builds (or finds in the cache) the root file system of the Dockerfile's runtime stage. */
export function buildImage(log: (line: string) => void = () => {}): Image {
  const stages = parseDockerfile(readFileSync(join(REPO, 'Dockerfile'), 'utf8'));
  const stage = stages.at(-1)!;
  const plan = planImage(stage);
  const mmdebstrap = spawnSync('mmdebstrap', ['--version'], { encoding: 'utf8' }).stdout.trim();
  const key = createHash('sha256')
    .update(JSON.stringify({ BUILDER_VERSION, stage, mmdebstrap }))
    .digest('hex')
    .slice(0, 16);
  const dir = join(IMAGE_CACHE, key);
  const root = join(dir, 'root');
  if (!existsSync(join(dir, 'complete'))) {
    mkdirSync(IMAGE_CACHE, { recursive: true });
    for (const old of readdirSync(IMAGE_CACHE))
      rmSync(join(IMAGE_CACHE, old), { recursive: true, force: true });
    const building = `${dir}.building-${process.pid}`;
    const scripts = join(building, 'scripts');
    mkdirSync(scripts, { recursive: true });
    for (const [index, text] of plan.scripts.entries()) writeFileSync(join(scripts, `run-${index}.sh`), text);
    log(
      `building the image root with mmdebstrap (${plan.suite}, ${plan.hooks.length} steps of the Dockerfile)…`,
    );
    // The RUN lines' packages go into mmdebstrap's own dpkg pass (their apt-get install then finds
    // them installed), and dpkg skips fsync: the result is the same, built in a fraction of the time.
    const args = [
      '--mode=root',
      '--variant=minbase',
      '--quiet',
      '--dpkgopt=force-unsafe-io',
      '--aptopt=APT::Install-Recommends "false"',
      '--aptopt=Acquire::Languages "none"',
      ...(plan.packages.length > 0 ? [`--include=${plan.packages.join(',')}`] : []),
      ...plan.hooks.map((hook) => `--customize-hook=${hook}`),
      plan.suite,
      join(building, 'root'),
    ];
    const result = spawnSync('mmdebstrap', args, {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, RUNE_IMAGE_SCRIPTS: scripts },
      timeout: 15 * 60_000,
    });
    if (result.status !== 0) {
      rmSync(building, { recursive: true, force: true });
      throw new Error(`mmdebstrap failed (${result.status}):\n${result.stderr.slice(-4000)}`);
    }
    writeFileSync(join(building, 'complete'), `${new Date().toISOString()}\n`);
    renameSync(building, dir);
  }
  const accounts: Image['accounts'] = {};
  for (const line of readFileSync(join(root, 'etc/passwd'), 'utf8').split('\n')) {
    const [name, , uid, gid] = line.split(':');
    if (name && uid && gid) accounts[name] = { uid: Number(uid), gid: Number(gid) };
  }
  const account =
    accounts[plan.user] ?? Object.values(accounts).find((entry) => String(entry.uid) === plan.user);
  if (!account) throw new Error(`the image has no user ${plan.user}`);
  return {
    root,
    binary: plan.binary,
    uid: account.uid,
    gid: account.gid,
    user: plan.user,
    accounts,
    env: plan.env,
    workdir: plan.workdir,
    packages: plan.packages,
  };
}

export type Confinement = 'plain' | 'userns' | 'seccomp';

export interface ContainerRun {
  confinement: Confinement;
  /** The command inside the container, e.g. ['/opt/resource/out', '/tmp/build/a1/put']. */
  argv: string[];
  input: string;
  /** Host folder mounted at /tmp/build (its contents owned as the test made them: root). */
  build: string;
  /** Host folder mounted at the image's HOME (owned by the image's user unless the test says). */
  home: string;
  cwd: string;
  env?: Record<string, string>;
  homeReadOnly?: boolean;
  /** /tmp as root's 0755 instead of 1777. */
  tmpNotWritable?: boolean;
  /** Host files bound read-only into the container's /tmp (a preload, say). */
  files?: { host: string; inside: string }[];
  timeoutMs?: number;
}

/** Maps a range of ids in a new user namespace (what unshare does only through newuidmap). */
const USERNS_MAP = join(REPO, 'tests/helpers/userns-map.pl');
const USERNS_MAP_INSIDE = '/tmp/.userns-map.pl';

/** The capabilities Docker and containerd give a container's root by default. */
const CONTAINER_CAPS = [
  'chown',
  'dac_override',
  'fowner',
  'fsetid',
  'kill',
  'setgid',
  'setuid',
  'setpcap',
  'net_bind_service',
  'net_raw',
  'sys_chroot',
  'mknod',
  'audit_write',
  'setfcap',
];

let bpfFile: string | undefined;

/** The container runtime's default seccomp profile as a BPF program for bwrap --seccomp. */
function containerSeccomp(): string {
  if (bpfFile) return bpfFile;
  const file = join(mkdtempSync(join(tmpdir(), 'rune-seccomp-')), 'container.bpf');
  const result = spawnSync(
    '/usr/bin/python3',
    [join(REPO, 'tests/helpers/container-seccomp.py'), '--export-bpf', file],
    { encoding: 'utf8' },
  );
  if (result.status !== 0) throw new Error(`container-seccomp.py --export-bpf failed: ${result.stderr}`);
  bpfFile = file;
  return file;
}

/**
 * One step in the image. bwrap runs as root and lays the container out (the binary bound where
 * the Dockerfile copies it, a private /tmp with /tmp/build inside, HOME); then the step starts as
 * the image's user: directly, inside a new user namespace (files of root show as nobody, as in a
 * rootless or user-namespaced runtime), or under the runtime's seccomp filter.
 */
export function runInImage(image: Image, binary: string, run: ContainerRun): Promise<RunResult> {
  const home = image.env.HOME ?? `/home/${image.user}`;
  const env = { ...image.env, ...run.env };
  const args = [
    '--ro-bind',
    image.root,
    '/',
    '--ro-bind',
    binary,
    image.binary.dest,
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--perms',
    run.tmpNotWritable ? '0755' : '1777',
    '--tmpfs',
    '/tmp',
    '--perms',
    '1777',
    '--tmpfs',
    '/var/tmp',
    run.homeReadOnly ? '--ro-bind' : '--bind',
    run.home,
    home,
    '--bind',
    run.build,
    '/tmp/build',
    '--ro-bind',
    USERNS_MAP,
    USERNS_MAP_INSIDE,
    ...(run.files ?? []).flatMap((file) => ['--ro-bind', file.host, file.inside]),
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    '--new-session',
    '--die-with-parent',
    '--clearenv',
    ...Object.entries(env).flatMap(([name, value]) => ['--setenv', name, value]),
    '--chdir',
    run.cwd,
  ];
  const stdio: ('pipe' | 'ignore' | number)[] = ['pipe', 'pipe', 'pipe'];
  let fd: number | undefined;
  if (run.confinement === 'seccomp') {
    // fd 10 of bwrap: the filter, loaded right before the step's first program, as runc does.
    fd = openSync(containerSeccomp(), 'r');
    while (stdio.length < 10) stdio.push('ignore');
    stdio.push(fd);
    args.push('--seccomp', '10');
  }
  // A runtime gives a container's root only its default capabilities (Docker's list), not all.
  const bounding =
    image.uid === 0 ? [`--bounding-set=-all,${CONTAINER_CAPS.map((cap) => `+${cap}`).join(',')}`] : [];
  const drop = [
    '/usr/bin/setpriv',
    `--reuid=${image.uid}`,
    `--regid=${image.gid}`,
    '--clear-groups',
    '--inh-caps=-all',
    ...bounding,
    '--',
  ];
  // A user-namespaced runtime maps a range of ids (root, the image's users), not just one.
  const userns =
    run.confinement === 'userns'
      ? image.uid === 0
        ? ['/usr/bin/perl', USERNS_MAP_INSIDE]
        : ['/usr/bin/unshare', '--user', `--map-user=${image.uid}`, `--map-group=${image.gid}`, '--']
      : [];
  args.push('--', ...drop, ...userns, ...run.argv);
  return new Promise((resolvePromise, reject) => {
    const child = spawn('bwrap', args, { stdio });
    if (fd !== undefined) closeSync(fd);
    let stdout = '';
    let stderr = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), run.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code, signal, stdout, stderr });
    });
    child.stdin?.end(run.input);
  });
}
