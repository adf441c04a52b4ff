// Standard output and error as file descriptors. `process.stdout` on a pipe is a net.Socket: its
// first use loads net and the stream machinery (bench/pipe.mjs shows a start's share), which a pipe
// run would spend only to write one answer. On Linux Node writes pipes, files and terminals
// synchronously anyway, so a blocking write(2) loop keeps the order and what a reader sees, and
// output written here and through process.stdout interleaves as it was written.
import { fstatSync, writeSync } from 'node:fs';
import { processSlot } from './process-slot.ts';

export type StdFd = 1 | 2;

// What to do when the reader of a stream went away (EPIPE): main.ts exits quietly with 141. Kept
// in a process slot: main.ts and each mode bundle hold their own copy of this module.
const brokenPipe = processSlot('rune.stdio.brokenPipe', () => ({ handler: (_fd: StdFd): void => {} }));

export function onBrokenPipe(handler: (fd: StdFd) => void): void {
  brokenPipe.handler = handler;
}

// A descriptor a parent left non-blocking answers EAGAIN when the pipe is full: wait a little.
const pause = new Int32Array(new SharedArrayBuffer(4));

/** Writes all of `text` to `fd`, waiting while a full non-blocking pipe drains. */
export function writeStd(fd: StdFd, text: string): void {
  const bytes = Buffer.from(text, 'utf8');
  let offset = 0;
  while (offset < bytes.length) {
    try {
      offset += writeSync(fd, bytes, offset, bytes.length - offset);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EAGAIN' || code === 'EWOULDBLOCK') Atomics.wait(pause, 0, 0, 2);
      else if (code === 'EINTR') continue;
      else if (code === 'EPIPE') {
        brokenPipe.handler(fd);
        return;
      } else throw error;
    }
  }
}

const terminals = new Map<StdFd, boolean>();

/**
 * Whether `fd` is a terminal, asked without creating the Node stream: node:tty is consulted only
 * for a character device, since a pipe or a file never is one.
 */
export function isTerminalFd(fd: StdFd | 0): boolean {
  const known = fd === 0 ? undefined : terminals.get(fd);
  if (known !== undefined) return known;
  let answer = false;
  try {
    answer =
      fstatSync(fd).isCharacterDevice() &&
      (process.getBuiltinModule('node:tty') as typeof import('node:tty')).isatty(fd);
  } catch {
    answer = false;
  }
  if (fd !== 0) terminals.set(fd, answer);
  return answer;
}

/** A stand-in for process.stdout/stderr where only `write` and `isTTY` are used. */
export interface StdWriter {
  write(text: string): void;
  readonly isTTY: boolean;
}

function writer(fd: StdFd): StdWriter {
  return {
    write: (text) => writeStd(fd, text),
    get isTTY() {
      return isTerminalFd(fd);
    },
  };
}

export const stdout: StdWriter = writer(1);
export const stderr: StdWriter = writer(2);
