// Remote MCP servers for tests: server-everything from npm in its Streamable HTTP or SSE mode, the
// OAuth-protected test server (oauth-mcp-server.mjs), a TCP proxy that can cut a connection on
// demand, and a "browser" that follows an authorization URL to rune's loopback redirect.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer, type Server, Socket } from 'node:net';
import { dirname, join } from 'node:path';
import { createServer as createTlsServer } from 'node:tls';

const require = createRequire(import.meta.url);
export const EVERYTHING = join(
  dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')),
  'dist/index.js',
);
const OAUTH_SERVER = join(import.meta.dirname, 'oauth-mcp-server.mjs');

export interface RunningServer {
  port: number;
  /** The MCP endpoint: /mcp (Streamable HTTP) or /sse (SSE). */
  url: string;
  process: ChildProcess;
  /** SIGKILL, then waits for the exit. */
  kill(): Promise<void>;
}

/** A free TCP port on 127.0.0.1 (the caller binds it right after, so a clash is unlikely). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function started(child: ChildProcess, pattern: RegExp, what: string): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = pattern.exec(output);
      if (match) {
        child.stdout?.off('data', onData);
        child.stderr?.off('data', onData);
        resolve(match);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) =>
      reject(new Error(`${what} exited (${code}) before it was ready:\n${output}`)),
    );
  });
}

function handle(child: ChildProcess, port: number, path: string): RunningServer {
  // Keep reading so a chatty server never blocks on a full pipe.
  child.stdout?.resume();
  child.stderr?.resume();
  return {
    port,
    url: `http://127.0.0.1:${port}${path}`,
    process: child,
    kill: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      }),
  };
}

/** server-everything in `streamableHttp` (endpoint /mcp) or `sse` (endpoint /sse) mode. */
export async function startEverything(mode: 'streamableHttp' | 'sse', port?: number): Promise<RunningServer> {
  const chosen = port ?? (await freePort());
  const child = spawn(process.execPath, [EVERYTHING, mode], {
    env: { PATH: process.env.PATH, PORT: String(chosen) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await started(child, /listening on port|running on port/i, `server-everything ${mode}`);
  return handle(child, chosen, mode === 'sse' ? '/sse' : '/mcp');
}

export interface OAuthStats {
  registrations: number;
  grants: string[];
  revoked: string[];
  toolCalls: number;
  issued: string[];
  authorizations: number;
}

export interface OAuthServer extends RunningServer {
  base: string;
  stats(): Promise<OAuthStats>;
  /** Ends every access token issued so far. */
  expire(): Promise<void>;
}

export async function startOAuthServer(): Promise<OAuthServer> {
  const child = spawn(process.execPath, [OAUTH_SERVER, '0'], {
    env: { PATH: process.env.PATH },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const match = await started(child, /LISTENING (\d+)/, 'the OAuth test server');
  const port = Number(match[1]);
  const base = `http://127.0.0.1:${port}`;
  return {
    ...handle(child, port, '/mcp'),
    base,
    stats: async () => (await (await fetch(`${base}/test/stats`)).json()) as OAuthStats,
    expire: async () => {
      await fetch(`${base}/test/expire`, { method: 'POST' });
    },
  };
}

/**
 * Plays the user's browser: opens the authorization URL and follows its redirects (the test
 * server approves at once) to rune's loopback listener. Returns the status of the last page.
 */
export async function playBrowser(authorizationUrl: string): Promise<number> {
  const response = await fetch(authorizationUrl, { redirect: 'follow' });
  await response.text();
  return response.status;
}

/** The first authorization URL in `text` (what rune prints for the user). */
export function authorizationUrlIn(text: string): string | undefined {
  return /(https?:\/\/\S+\/authorize\?\S+)/.exec(text)?.[1];
}

export interface CuttableProxy {
  port: number;
  /** Ends every connection and refuses new ones until restore(). */
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

/** A TCP proxy to 127.0.0.1:`target` whose connections the test can break and mend. */
export async function startProxy(target: number): Promise<CuttableProxy> {
  const sockets = new Set<Socket>();
  let open = true;
  const server: Server = createServer((client) => {
    if (!open) {
      client.destroy();
      return;
    }
    const upstream = new Socket();
    upstream.connect(target, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    cut() {
      open = false;
      for (const socket of sockets) socket.destroy();
    },
    restore() {
      open = true;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

export interface TestCertificate {
  /** PEM files: the self-signed certificate (for NODE_EXTRA_CA_CERTS) and its key. */
  certFile: string;
  keyFile: string;
}

/** A self-signed certificate for 127.0.0.1 and localhost, made with Debian's openssl. */
export function makeCertificate(dir: string): TestCertificate {
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
    ],
    { stdio: 'ignore' },
  );
  return { certFile, keyFile };
}

/** Terminates TLS on a port of its own and passes the bytes on to 127.0.0.1:`target`. */
export async function startTlsProxy(
  target: number,
  cert: TestCertificate,
): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createTlsServer(
    { cert: readFileSync(cert.certFile), key: readFileSync(cert.keyFile) },
    (client) => {
      const upstream = new Socket();
      upstream.connect(target, '127.0.0.1');
      for (const socket of [client, upstream]) {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
        socket.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream);
      upstream.pipe(client);
    },
  );
  server.on('tlsClientError', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
