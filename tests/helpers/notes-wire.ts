// Talking to `rune notes` below fetch: requests whose body is sent only in part (to see whether the
// server answers before reading it), from a chosen loopback address, and event streams read event
// by event.
import http from 'node:http';
import net from 'node:net';

export interface PartialAnswer {
  /** The status of the answer, or null when none came while the body was still unsent. */
  status: number | null;
  /** What the server sent (head and body). */
  text: string;
  /** The server closed the connection after answering. */
  closed: boolean;
}

/**
 * Sends a request's headers and the first `sent` bytes of a body that says it has `declared` bytes,
 * then waits up to `waitMs` for an answer without sending the rest.
 */
export function partialRequest(
  url: string,
  options: {
    method?: string;
    path: string;
    headers?: Record<string, string>;
    declared: number;
    sent: number;
    waitMs?: number;
    localAddress?: string;
  },
): Promise<PartialAnswer & { socket: net.Socket }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect({
      host: hostname,
      port: Number(port),
      ...(options.localAddress ? { localAddress: options.localAddress } : {}),
    });
    let text = '';
    let settled = false;
    const finish = (closed: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      const status = /^HTTP\/1\.1 (\d{3})/.exec(text)?.[1];
      resolve({ status: status ? Number(status) : null, text, closed, socket });
    };
    const timer = setTimeout(() => finish(false), options.waitMs ?? 8000);
    socket.on('error', (error) => (text ? finish(true) : reject(error)));
    socket.setEncoding('utf8').on('data', (chunk: string) => {
      text += chunk;
      // Wait a moment for the close that follows an answer to a refused body.
      if (/\r\n\r\n/.test(text)) setTimeout(() => finish(socket.destroyed || socket.readableEnded), 300);
    });
    socket.on('end', () => finish(true));
    socket.on('close', () => finish(true));
    const head = [
      `${options.method ?? 'POST'} ${options.path} HTTP/1.1`,
      `Host: ${hostname}:${port}`,
      `Content-Length: ${options.declared}`,
      ...Object.entries(options.headers ?? {}).map(([k, v]) => `${k}: ${v}`),
      '',
      '',
    ].join('\r\n');
    socket.write(head);
    if (options.sent > 0) socket.write(Buffer.alloc(options.sent, 0x61));
  });
}

export interface EventStream {
  events: Array<{ name: string; data: Record<string, unknown> }>;
  status: number;
  /** Resolves with the first event named `name` (already received or coming) that passes `test`. */
  next(name: string, test?: (data: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
  close(): void;
}

/** Opens an event stream (`/api/events?…`); resolves once the status is known. */
export function openEvents(
  url: string,
  query: string,
  options: { cookie?: string; localAddress?: string } = {},
): Promise<EventStream> {
  return new Promise((resolve, reject) => {
    const waiters: Array<{
      name: string;
      test: (d: Record<string, unknown>) => boolean;
      done: (d: Record<string, unknown>) => void;
    }> = [];
    const events: EventStream['events'] = [];
    const req = http.get(
      `${url}/api/events?${query}`,
      {
        agent: false,
        headers: options.cookie ? { cookie: options.cookie } : {},
        ...(options.localAddress ? { localAddress: options.localAddress } : {}),
      },
      (res) => {
        let buffer = '';
        res.setEncoding('utf8').on('data', (chunk: string) => {
          buffer += chunk;
          for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const name = /^event: (.+)$/m.exec(block)?.[1];
            const data = /^data: (.+)$/m.exec(block)?.[1];
            if (!name || !data) continue;
            const event = { name, data: JSON.parse(data) as Record<string, unknown> };
            events.push(event);
            for (const w of [...waiters]) {
              if (w.name === name && w.test(event.data)) {
                waiters.splice(waiters.indexOf(w), 1);
                w.done(event.data);
              }
            }
          }
        });
        res.on('error', () => {});
        resolve({
          events,
          status: res.statusCode ?? 0,
          next(name, test = () => true) {
            const seen = events.find((e) => e.name === name && test(e.data));
            if (seen) return Promise.resolve(seen.data);
            return new Promise((done) => waiters.push({ name, test, done }));
          },
          close: () => req.destroy(),
        });
      },
    );
    req.on('error', reject);
  });
}
