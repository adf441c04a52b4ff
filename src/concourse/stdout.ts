// Keeps Concourse's stdout for the one protocol JSON value. fd 1 is moved aside and replaced by a
// copy of stderr, so whatever else writes to fd 1 (process.stdout, a library, a child process
// inheriting it, native code) lands in the build log instead of corrupting the protocol.
import { type ChildProcess, spawn } from 'node:child_process';
// biome-ignore lint/style/noRestrictedImports: opens /proc/self/fd/1, /proc/self/fd/2 and /dev/null: rune's own standard streams
import { closeSync, constants, openSync, writeSync } from 'node:fs';
import { RuneError } from '../core/errors.ts';

export interface ProtocolStdout {
  /** Writes the value as one JSON line to the real stdout, exactly once; resolves once it is out. */
  emit(value: unknown): Promise<void>;
  /** How fd 1 was isolated: moved aside (`fd`), handed to a relay process (`relay`), or only
   * process.stdout redirected (`stream`). */
  readonly isolation: 'fd' | 'relay' | 'stream';
}

const WRITE_APPEND = constants.O_WRONLY | constants.O_APPEND;

/**
 * Must run before anything touches process.stdout: Node's stdout stream owns fd 1 once created.
 * Linux has no dup2 in Node, but re-opening /proc/self/fd/N gives a new description of the same
 * pipe, FIFO or file, and closing fd 1 first makes the kernel hand out 1 for the next open. A
 * socket cannot be re-opened that way (Node's own child_process gives children sockets), so then a
 * `cat` child keeps the real stdout and gets the answer through its stdin at the end.
 */
export async function claimStdout(): Promise<ProtocolStdout> {
  let saved: number | undefined;
  try {
    saved = openSync('/proc/self/fd/1', WRITE_APPEND);
  } catch {
    saved = undefined;
  }
  if (saved !== undefined) {
    const fd = saved;
    replaceFd1();
    return once('fd', async (text) => {
      try {
        writeFully(fd, text);
      } finally {
        closeSync(fd);
      }
    });
  }
  const relay = await startRelay();
  if (relay) {
    replaceFd1();
    return once('relay', (text) => finishRelay(relay, text));
  }
  process.stdout.write = process.stderr.write.bind(process.stderr) as typeof process.stdout.write;
  return once('stream', async (text) => writeFully(1, text));
}

function once(
  isolation: ProtocolStdout['isolation'],
  write: (text: string) => Promise<void>,
): ProtocolStdout {
  let emitted = false;
  return {
    isolation,
    async emit(value) {
      if (emitted) throw new RuneError('INTERNAL', 'the protocol answer was already written');
      emitted = true;
      await write(`${JSON.stringify(value)}\n`);
    },
  };
}

/**
 * Points fd 1 at the build log (stderr). When stderr is a socket it cannot be re-opened: fd 1
 * becomes /dev/null, so stray writes of children and native code are lost but never reach stdout.
 */
function replaceFd1(): void {
  closeSync(1);
  let replacement: number;
  try {
    replacement = openSync('/proc/self/fd/2', WRITE_APPEND);
  } catch {
    replacement = openSync('/dev/null', constants.O_WRONLY);
  }
  if (replacement !== 1) {
    throw new RuneError('INTERNAL', `could not isolate stdout (fd 1 was taken by fd ${replacement})`);
  }
  // Node's own writes reach the build log even when fd 1 had to become /dev/null.
  process.stdout.write = process.stderr.write.bind(process.stderr) as typeof process.stdout.write;
}

function startRelay(): Promise<ChildProcess | undefined> {
  return new Promise((resolve) => {
    let child: ChildProcess;
    try {
      child = spawn('cat', [], { stdio: ['pipe', 1, 'ignore'] });
    } catch {
      resolve(undefined);
      return;
    }
    child.once('spawn', () => resolve(child));
    child.once('error', () => resolve(undefined));
  });
}

function finishRelay(child: ChildProcess, text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    child.once('close', (code) => {
      if (code === 0) resolve();
      else reject(new RuneError('IO', `cannot write the answer to stdout (relay exited with ${code})`));
    });
    child.stdin?.end(text);
  });
}

function writeFully(fd: number, text: string): void {
  const buffer = Buffer.from(text, 'utf8');
  let offset = 0;
  while (offset < buffer.length) {
    try {
      offset += writeSync(fd, buffer, offset, buffer.length - offset);
    } catch (error) {
      // fd 1 may be non-blocking when Node's stdout stream already opened it as a pipe.
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') {
        throw new RuneError('IO', `cannot write the answer to stdout: ${(error as Error).message}`, {
          cause: error,
        });
      }
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
    }
  }
}
