// Starts the built binary as `rune notes` on a port the kernel picks (--port 0) and reads the
// address back from its "listening on" line: no probe-then-reuse port race between parallel files.
import { type ChildProcess, spawn } from 'node:child_process';
import { cleanEnv, requireBinary } from './rune.ts';

export interface NotesProcess {
  child: ChildProcess;
  /** http://127.0.0.1:PORT */
  url: string;
  /** Everything the server wrote to stderr so far. */
  stderr(): string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGTERM, then SIGKILL if it has not exited within 10 s. */
  stop(): Promise<void>;
}

export async function startNotesProcess(options: {
  home: string;
  args?: readonly string[];
  env?: NodeJS.ProcessEnv;
}): Promise<NotesProcess> {
  const child = spawn(requireBinary(), ['notes', '--port', '0', ...(options.args ?? [])], {
    env: { ...(options.env ?? cleanEnv()), RUNE_HOME: options.home },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  child.stdout!.resume();
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal })),
  );
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`rune notes printed no "listening on" line within 30 s; stderr: ${stderr}`));
    }, 30_000);
    child.stderr!.on('data', () => {
      const match = /listening on (http:\/\/[\d.]+:\d+)/.exec(stderr);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      reject(new Error(`rune notes exited ${code} before listening: ${stderr}`));
    });
  });
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.kill('SIGTERM');
    await exit;
    clearTimeout(timer);
  };
  return { child, url, stderr: () => stderr, exit, stop };
}

export interface NotesSession {
  cookie: string;
  csrf: string;
}

/**
 * One try of the login form, its answer as the server gave it (for tests of logging in itself).
 * `cookie`: what the browser sends along (its device cookie).
 */
export function tryLogIn(
  url: string,
  username: string,
  password?: string,
  cookie?: string,
): Promise<Response> {
  return fetch(`${url}/auth/local`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json',
      ...(cookie ? { cookie } : {}),
    },
    body: JSON.stringify({ username, password }),
  });
}

/** Logs in with a local account's password, as the login form does: its session cookie and CSRF token. */
export async function logIn(url: string, username: string, password: string): Promise<NotesSession> {
  const login = await tryLogIn(url, username, password);
  if (login.status !== 200) throw new Error(`login as ${username}: ${login.status} ${await login.text()}`);
  const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
  const { csrf_token } = (await login.json()) as { csrf_token: string };
  return { cookie, csrf: csrf_token };
}

/** Issues a bearer token through a person's session, as the tokens page does. */
export async function mintToken(
  url: string,
  session: NotesSession,
  name: string,
  role: string,
): Promise<string> {
  const minted = await fetch(`${url}/api/tokens`, {
    method: 'POST',
    headers: { cookie: session.cookie, 'x-csrf-token': session.csrf, 'content-type': 'application/json' },
    body: JSON.stringify({ name, role }),
  });
  if (minted.status !== 200 && minted.status !== 201)
    throw new Error(`token ${name}: ${minted.status} ${await minted.text()}`);
  return ((await minted.json()) as { token: string }).token;
}
