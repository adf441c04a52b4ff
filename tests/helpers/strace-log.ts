// Reads an `strace -f -qq -v -xx -y -s 4096` log into what each traced shell run did: the programs
// it executed (with argv) and the files it wrote, created, removed or opened. Runs are told apart
// by marker programs (`/bin/true mark-N`) the driver executes between them; every process whose
// ancestor executed the shell after marker N belongs to run N. Relative paths are resolved with
// each process's working directory, followed through chdir and inherited by clones.
import { resolve } from 'node:path';

export interface TracedExec {
  path: string;
  argv: string[];
  /** The process that executed it is the shell of the run itself (not one of its children). */
  pid: number;
}

export interface TracedRun {
  execs: TracedExec[];
  /** Absolute paths written, created, truncated, removed or renamed. */
  writes: string[];
  /** Absolute paths opened for reading. */
  reads: string[];
  shellPid?: number;
}

const LINE = /^(\d+) +(.*)$/;
const WRITE_FLAGS = /O_WRONLY|O_RDWR|O_CREAT|O_TRUNC|O_APPEND/;

/** Decodes strace's `-xx` strings ("\x2f\x74…") and plain ones. */
function decode(text: string): string {
  return text.replace(/\\x([0-9a-f]{2})|\\(.)/g, (_, hex: string | undefined, ch: string | undefined) =>
    hex
      ? String.fromCharCode(Number.parseInt(hex, 16))
      : (({ n: '\n', t: '\t', '"': '"', '\\': '\\' } as Record<string, string>)[ch!] ?? ch!),
  );
}

/** The quoted strings of a syscall's argument text, decoded, in order. */
function strings(args: string): string[] {
  return [...args.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((match) =>
    Buffer.from(decode(match[1]!), 'latin1').toString('utf8'),
  );
}

/** `AT_FDCWD<dir>` or `3</some/dir>` (strace -y) as the folder a relative path starts from. */
function dirArgument(args: string, cwd: string): string {
  const fd = /^(\d+|AT_FDCWD)<((?:[^>\\]|\\.)*)>/.exec(args);
  return fd ? Buffer.from(decode(fd[2]!), 'latin1').toString('utf8') : cwd;
}

export function readStraceLog(
  log: string,
  rootCwd: string,
  isShell: (path: string) => boolean,
  marker = 'mark-',
): Map<number, TracedRun> {
  const runs = new Map<number, TracedRun>();
  // strace may print a child's first calls before its parent's clone returns: parents come first.
  const parent = new Map<number, number>();
  for (const match of log.matchAll(
    /^(\d+) +(?:<\.\.\. (?:clone3?|fork|vfork) resumed>|(?:clone3?|fork|vfork)\().*= (\d+)/gm,
  )) {
    parent.set(Number(match[2]), Number(match[1]));
  }
  const shellRun = new Map<number, number>();
  const ownerOf = (pid: number): number | undefined => {
    for (let at: number | undefined = pid; at !== undefined; at = parent.get(at)) {
      if (shellRun.has(at)) return shellRun.get(at);
    }
    return undefined;
  };
  const cwd = new Map<number, string>();
  const pending = new Map<number, string>();
  let current = -1;
  for (const raw of log.split('\n')) {
    const match = LINE.exec(raw);
    if (!match) continue;
    const pid = Number(match[1]);
    let body = match[2]!;
    if (body.endsWith('<unfinished ...>')) {
      pending.set(pid, body.slice(0, -'<unfinished ...>'.length));
      continue;
    }
    const resumed = /^<\.\.\. \S+ resumed>(.*)$/.exec(body);
    if (resumed) {
      body = (pending.get(pid) ?? '') + resumed[1]!;
      pending.delete(pid);
    }
    const call = /^(\w+)\((.*)\) += (-?\d+|\?)/.exec(body);
    if (!call) continue;
    const [, name, args, ret] = call as unknown as [string, string, string, string];
    const here = cwd.get(pid) ?? rootCwd;
    const ok = ret !== '?' && Number(ret) >= 0;
    if (/^(clone3?|fork|vfork)$/.test(name) && ok) {
      if (!cwd.has(Number(ret))) cwd.set(Number(ret), here);
      continue;
    }
    if (name === 'execve' && ok) {
      const [path = '', ...argv] = strings(`${args.split('], ')[0]!}]`);
      if (argv[0]?.startsWith(marker) || argv[1]?.startsWith(marker)) {
        current = Number((argv[1] ?? argv[0])!.slice(marker.length));
        continue;
      }
      const owner = ownerOf(pid);
      if (owner === undefined && isShell(path) && current >= 0) {
        shellRun.set(pid, current);
        runs.set(current, { execs: [], writes: [], reads: [], shellPid: pid });
        continue;
      }
      if (owner !== undefined) runs.get(owner)?.execs.push({ path, argv, pid });
      continue;
    }
    const owner = ownerOf(pid);
    const run = owner === undefined ? undefined : runs.get(owner);
    if (name === 'chdir' && ok) {
      cwd.set(pid, resolve(here, strings(args)[0] ?? '.'));
      continue;
    }
    if (!run || !ok) continue;
    recordFileCall(run, name, args, here);
  }
  return runs;
}

function recordFileCall(run: TracedRun, name: string, args: string, here: string): void {
  const paths = strings(args);
  const at = (index: number) =>
    resolve(name.endsWith('at') || name.endsWith('at2') ? dirArgument(args, here) : here, paths[index] ?? '');
  switch (name) {
    case 'open':
    case 'openat':
      (WRITE_FLAGS.test(args) ? run.writes : run.reads).push(
        name === 'open' ? resolve(here, paths[0] ?? '') : at(0),
      );
      break;
    case 'creat':
    case 'truncate':
    case 'mkdir':
    case 'unlink':
    case 'rmdir':
      run.writes.push(resolve(here, paths[0] ?? ''));
      break;
    case 'mkdirat':
    case 'unlinkat':
      run.writes.push(at(0));
      break;
    case 'rename':
    case 'link':
    case 'symlink':
      run.writes.push(
        ...(name === 'symlink' ? [] : [resolve(here, paths[0] ?? '')]),
        resolve(here, paths[1] ?? ''),
      );
      break;
    case 'renameat':
    case 'renameat2':
    case 'linkat':
    case 'symlinkat': {
      // The second path is relative to the second folder argument; both are given as `N<dir>`.
      const dirs = [...args.matchAll(/(?:^|, )(?:AT_FDCWD|\d+)(?:<((?:[^>\\]|\\.)*)>)?/g)].map((m) =>
        m[1] ? Buffer.from(decode(m[1]), 'latin1').toString('utf8') : here,
      );
      if (name !== 'symlinkat') run.writes.push(resolve(dirs[0] ?? here, paths[0] ?? ''));
      run.writes.push(resolve(dirs.at(-1) ?? here, paths.at(-1) ?? ''));
      break;
    }
    default:
  }
}
