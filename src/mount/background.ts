// `rune mount DIR` without --foreground: the same command started again with --foreground, in a
// session of its own, its stderr appended to $RUNE_HOME/mount.log; this process waits until the
// mount serves (or says why it cannot), reports, and exits. The child tells on descriptor 3.
import { spawn } from 'node:child_process';
import { closeSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { isSea } from '../core/assets.ts';
import { type ErrorCode, EXIT_CODES, RuneError } from '../core/errors.ts';
import { makeDir } from '../core/make-dir.ts';
import { runeHome } from '../core/paths.ts';
import type { MountIo } from './serve.ts';

/** Names the descriptor a background start waits on; set only for the child it starts. */
export const READY_FD_VARIABLE = 'RUNE_MOUNT_READY_FD';

export function mountLogFile(env: NodeJS.ProcessEnv): string {
  return join(runeHome(env), 'mount.log');
}

/** The child's side: `ready` writes one JSON line to the descriptor its parent waits on. */
export function readyReporter(env: NodeJS.ProcessEnv): MountIo['ready'] {
  const fd = Number(env[READY_FD_VARIABLE]);
  delete env[READY_FD_VARIABLE];
  if (!Number.isInteger(fd) || fd < 3) return undefined;
  return (outcome) => {
    try {
      writeSync(fd, `${JSON.stringify(outcome)}\n`);
      closeSync(fd);
    } catch {
      // The parent is gone: nobody waits.
    }
  };
}

type Ready = { ok: true; tools: number } | { ok: false; code: string; message: string };

/** Starts `rune <args> --foreground` detached and waits for its word; returns the exit code. */
export async function startInBackground(
  dir: string,
  env: NodeJS.ProcessEnv,
  stderr: (text: string) => void,
): Promise<number> {
  const log = mountLogFile(env);
  makeDir(runeHome(env));
  const out = openSync(log, 'a', 0o600);
  const self = isSea() ? [] : [process.argv[1]!];
  const child = spawn(process.execPath, [...self, ...process.argv.slice(2), '--foreground'], {
    detached: true,
    stdio: ['ignore', out, out, 'pipe'],
    env: { ...env, [READY_FD_VARIABLE]: '3' },
  });
  closeSync(out);
  const pipe = child.stdio[3] as NodeJS.ReadableStream;
  let text = '';
  pipe.setEncoding('utf8');
  pipe.on('data', (chunk: string) => {
    text += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await new Promise<void>((resolve) => pipe.once('close', () => resolve()));
  let ready: Ready | undefined;
  try {
    ready = JSON.parse(text) as Ready;
  } catch {
    ready = undefined;
  }
  if (ready?.ok) {
    child.unref();
    stderr(
      `rune mount: ${dir} serves ${ready.tools} tools (process ${child.pid}, log ${log}); unmount with rune mount --unmount ${dir}\n`,
    );
    return 0;
  }
  if (ready && ready.code in EXIT_CODES) throw new RuneError(ready.code as ErrorCode, ready.message);
  const code = await exited;
  throw new RuneError('INTERNAL', `the mount process ended (exit ${code}) before it was ready; see ${log}`);
}
