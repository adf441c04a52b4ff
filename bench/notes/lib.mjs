// Helpers shared by the rune notes benchmarks (bench/notes.mjs, bench/notes/collab.mjs; waitForLine
// by bench/editor.mjs too): start a server and wait for its address, talk to it over keep-alive
// HTTP, read a process's CPU time.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';

export function waitForLine(child, pattern) {
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`no match for ${pattern}: ${text}`)), 30_000);
    child.stderr.setEncoding('utf8').on('data', (chunk) => {
      text += chunk;
      const match = pattern.exec(text);
      if (match) {
        clearTimeout(timer);
        resolve(match);
      }
    });
    child.on('close', (code) => reject(new Error(`exited ${code}: ${text}`)));
  });
}

/** Servers still running: a bench that fails half-way must not leave them behind. */
const running = new Set();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** `rune notes` on a free port with RUNE_HOME = home (its rune.toml is the server's config). */
export async function startRune(home, bin) {
  const child = spawn(bin, ['notes', '--port', '0'], {
    env: { PATH: '/usr/bin:/bin', HOME: home, RUNE_HOME: home },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  running.add(child);
  child.once('close', () => running.delete(child));
  const [, url] = await waitForLine(child, /listening on (http:\/\/[\d.]+:\d+)/);
  return { child, url, stop: () => new Promise((r) => child.once('close', r) && child.kill('SIGTERM')) };
}

/** An HTTP client over `connections` keep-alive sockets; `request(url, {method, headers, body})`. */
export function httpClient(connections) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const request = (url, { method = 'GET', headers = {}, body } = {}) =>
    new Promise((resolve, reject) => {
      const req = http.request(url, { method, headers, agent }, (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString() }),
        );
      });
      req.on('error', reject);
      if (body !== undefined) req.end(typeof body === 'string' ? body : JSON.stringify(body));
      else req.end();
    });
  return { request, close: () => agent.destroy() };
}

/**
 * Requests of `url` over `connections` keep-alive connections for `seconds`: the rate, and the
 * server's CPU µs per request (`pid`'s, every thread: independent of how fast the client is).
 */
export async function load({ request, url, pid, seconds, connections, headers = {}, status = 200 }) {
  const cpuBefore = cpuMicros(pid);
  let done = 0;
  const until = Date.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (Date.now() < until) {
        const res = await request(url, { headers });
        if (res.status !== status) throw new Error(`${url}: ${res.status} ${res.body}`);
        done++;
      }
    }),
  );
  return { rate: done / seconds, cpu: (cpuMicros(pid) - cpuBefore) / done };
}

/**
 * CPU time a process has used, in µs, every thread: from the scheduler's nanosecond count of each
 * thread (/proc/PID/task/TID/schedstat), where /proc/PID/stat counts in ticks of 10 ms, too coarse
 * for a second of a server that is half idle. (A thread that ends between two readings takes its
 * time with it; the servers measured keep theirs.)
 */
export function cpuMicros(pid) {
  let ns = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // The thread ended while the list was read.
    }
  }
  return ns / 1000;
}

/**
 * Signs in as the bench admin (rune.toml: admins = ["bench:benchpass"]) and returns
 * `call(path, method, body)`, authenticated with an admin API token (`call.token`).
 */
export async function adminApi(request, url) {
  const login = await request(`${url}/auth/local`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: { username: 'bench', password: 'benchpass' },
  });
  const cookie = String(login.headers['set-cookie']).split(';')[0];
  const csrf = JSON.parse(login.body).csrf_token;
  const token = JSON.parse(
    (
      await request(`${url}/api/tokens`, {
        method: 'POST',
        headers: { cookie, 'x-csrf-token': csrf, 'content-type': 'application/json' },
        body: { name: 'bench', role: 'admin' },
      })
    ).body,
  ).token;
  const call = (path, method = 'GET', body) =>
    request(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body }),
    });
  call.token = token;
  return call;
}
