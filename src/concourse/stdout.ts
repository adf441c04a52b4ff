// Keeps Concourse's stdout for the one protocol JSON value. fd 1 is moved aside and replaced by a
// copy of stderr, so whatever else writes to fd 1 (process.stdout, a library, a child process
// inheriting it, native code) lands in the build log instead of corrupting the protocol.
import { closeSync, constants, openSync, writeSync } from 'node:fs';
import { RuneError } from '../core/errors.ts';

export interface ProtocolStdout {
  /** Writes the value as one JSON line to the real stdout, synchronously, exactly once. */
  emit(value: unknown): void;
  /** How fd 1 was isolated: `fd` (moved aside) or `stream` (only process.stdout redirected). */
  readonly isolation: 'fd' | 'stream';
}

const WRITE_APPEND = constants.O_WRONLY | constants.O_APPEND;

/**
 * Must run before anything touches process.stdout: Node's stdout stream owns fd 1 once created.
 * Linux has no dup2 in Node, but re-opening /proc/self/fd/N gives a new description of the same
 * pipe or file, and closing fd 1 first makes the kernel hand out 1 for the next open.
 */
export function claimStdout(): ProtocolStdout {
  let saved: number;
  try {
    saved = openSync('/proc/self/fd/1', WRITE_APPEND);
  } catch {
    return streamFallback();
  }
  closeSync(1);
  let replacement: number;
  try {
    replacement = openSync('/proc/self/fd/2', WRITE_APPEND);
  } catch {
    // stderr cannot be re-opened (a socket): park /dev/null on fd 1 so nothing reaches stdout.
    replacement = openSync('/dev/null', constants.O_WRONLY);
  }
  if (replacement !== 1) {
    closeSync(saved);
    throw new RuneError('INTERNAL', `could not isolate stdout (fd 1 was taken by fd ${replacement})`);
  }
  let emitted = false;
  return {
    isolation: 'fd',
    emit(value) {
      if (emitted) throw new RuneError('INTERNAL', 'the protocol answer was already written');
      emitted = true;
      try {
        writeFully(saved, `${JSON.stringify(value)}\n`);
      } finally {
        closeSync(saved);
      }
    },
  };
}

/** When fd 1 cannot be re-opened (a socket, no /proc): at least Node's own writes go to stderr. */
function streamFallback(): ProtocolStdout {
  const toStderr = process.stderr.write.bind(process.stderr) as typeof process.stdout.write;
  process.stdout.write = toStderr;
  let emitted = false;
  return {
    isolation: 'stream',
    emit(value) {
      if (emitted) throw new RuneError('INTERNAL', 'the protocol answer was already written');
      emitted = true;
      writeFully(1, `${JSON.stringify(value)}\n`);
    },
  };
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
