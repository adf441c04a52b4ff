// The loopback redirect of an OAuth login (RFC 8252): a one-shot HTTP listener on 127.0.0.1 that
// takes the authorization code from the browser's redirect, only with the state this login sent.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LoopbackResult {
  code: string;
}

export interface Loopback {
  /** http://127.0.0.1:PORT/callback */
  redirectUrl: string;
  port: number;
  /** Resolves with the code of the first redirect that carries `state`; rejects on an error redirect, the timeout or the signal. */
  waitForCode(state: () => string, timeoutMs: number, signal?: AbortSignal): Promise<LoopbackResult>;
  close(): Promise<void>;
}

const CALLBACK_PATH = '/callback';

function page(res: ServerResponse, status: number, title: string, text: string): void {
  const html = (value: string) => value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': "default-src 'none'",
    'cache-control': 'no-store',
    'referrer-policy': 'no-referrer',
  });
  res.end(
    `<!doctype html><meta charset="utf-8"><title>rune: ${html(title)}</title><h1>${html(title)}</h1><p>${html(text)}</p>`,
  );
}

function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error) => reject(error);
    server.once('error', onError);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', onError);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** Listens on `preferredPort` (the one the client was registered with) when free, else on any port. */
export async function startLoopback(serverName: string, preferredPort?: number): Promise<Loopback> {
  const http = process.getBuiltinModule('node:http');
  let deliver: ((query: URLSearchParams) => boolean) | undefined;
  const server = http.createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method !== 'GET' || url.pathname !== CALLBACK_PATH) {
      page(res, 404, 'Not found', 'This address only receives the OAuth redirect of rune.');
      return;
    }
    if (!deliver?.(url.searchParams)) {
      page(res, 400, 'Login not accepted', 'This redirect does not belong to the login rune is waiting for.');
      return;
    }
    if (url.searchParams.has('error')) {
      page(
        res,
        400,
        'Login failed',
        `The server refused the login of MCP server "${serverName}". You can close this tab.`,
      );
      return;
    }
    page(
      res,
      200,
      'Logged in',
      `rune is now logged in to MCP server "${serverName}". You can close this tab.`,
    );
  });
  let port: number;
  try {
    port = await listen(server, preferredPort ?? 0);
  } catch {
    port = await listen(server, 0);
  }
  const redirectUrl = `http://127.0.0.1:${port}${CALLBACK_PATH}`;
  return {
    redirectUrl,
    port,
    waitForCode(state, timeoutMs, signal) {
      return new Promise<LoopbackResult>((resolve, reject) => {
        const timer = setTimeout(() => {
          finish();
          reject(new Error(`no login within ${Math.round(timeoutMs / 1000)} s`));
        }, timeoutMs);
        const onAbort = () => {
          finish();
          reject(new Error('the login was cancelled'));
        };
        const finish = () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          deliver = undefined;
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        deliver = (query) => {
          // A redirect without this login's state is someone else's (or forged): ignored, still waiting.
          if (query.get('state') !== state()) return false;
          finish();
          const error = query.get('error');
          if (error) {
            const description = query.get('error_description');
            reject(
              new Error(`the authorization server answered ${error}${description ? `: ${description}` : ''}`),
            );
          } else {
            const code = query.get('code');
            if (code) resolve({ code });
            else reject(new Error('the redirect carried no authorization code'));
          }
          return true;
        };
      });
    },
    close() {
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
