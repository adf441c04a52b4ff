// Open connections, bounded per client address and in all, where they are accepted. At a bound the
// connection that gives way is the longest-idle one that is not serving a request (a half-open
// socket, a slowloris still sending its headers, an idle keep-alive), so holding sockets open
// cannot lock others out; only when every connection of the address is busy is the new one refused.
// A connection whose response waits on a client that does not read is cut after the send timeout.
import { readFileSync } from 'node:fs';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export interface ConnectionLimits {
  /** Open connections of one client address (trusted proxies are not counted). */
  perAddress: number;
  /** Open connections in all: below the process's file descriptor limit, which SQLite and uploads need too. */
  total: number;
  /** Addresses whose connections are not counted per address (a reverse proxy carries many clients). */
  trusted: readonly string[];
  /**
   * How long bytes of a response may wait without the client taking `MIN_PROGRESS_BYTES` of them
   * before the connection is cut (nginx's `send_timeout`, with a floor on what counts as progress).
   */
  sendTimeoutMs: number;
}

/**
 * What a client must take of a waiting response in each send timeout: a slow network delivers far
 * more (64 KiB a minute is 9 kbit/s), a reader that takes a segment now and then to stay
 * connected does not.
 */
export const MIN_PROGRESS_BYTES = 64 * 1024;

/** Requests in progress on each socket; a socket at 0 may be closed to make room. */
type Busy = Map<Socket, number>;

/**
 * Descriptors kept for everything that is not a client connection: SQLite (database, WAL, shm),
 * uploads being written, worker threads, the sandbox's processes of chat runs.
 */
const RESERVED_FDS = 256;

/** The soft limit of open files of this process, from /proc (Linux); null where it cannot be read. */
export function openFileLimit(limits = '/proc/self/limits'): number | null {
  try {
    const line = readFileSync(limits, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    const soft = line ? /^Max open files\s+(\d+|unlimited)/.exec(line)?.[1] : undefined;
    if (soft === undefined) return null;
    return soft === 'unlimited' ? Number.MAX_SAFE_INTEGER : Number(soft);
  } catch {
    return null;
  }
}

/**
 * Bytes of a socket's output the kernel has taken: what Node handed to libuv less what libuv still
 * queues. libuv's queue shrinks as the client reads, also in the middle of one large write; where
 * Node's internals are missing, the bytes of completed writes (a whole write at a time).
 */
export function bytesSent(socket: Socket): number {
  const internal = socket as unknown as {
    _bytesDispatched?: unknown;
    _handle?: { writeQueueSize?: unknown } | null;
  };
  const dispatched = internal._bytesDispatched;
  const queued = internal._handle?.writeQueueSize;
  if (typeof dispatched === 'number' && typeof queued === 'number') return dispatched - queued;
  return socket.bytesWritten - socket.writableLength;
}

/** The bound of open connections in all: the descriptor limit less what the rest of the server needs. */
export function totalConnections(fdLimit: number | null): number {
  if (fdLimit === null) return 4096;
  return Math.max(64, Math.min(fdLimit - RESERVED_FDS, 65_536));
}

/**
 * Applies the limits to `server`. A socket past a bound is closed before any byte of it is parsed,
 * so a flood of connections costs next to nothing; what gives way is chosen so that a client that
 * only holds sockets open (never finishing a request) loses them to clients that use theirs.
 */
export function limitConnections(server: Server, limits: ConnectionLimits): void {
  // Insertion order is the order of last use: a socket moves to the end when its request ends.
  const all: Busy = new Map();
  const byAddress = new Map<string, Busy>();
  const addressOf = new WeakMap<Socket, string | null>();

  const forget = (socket: Socket) => {
    all.delete(socket);
    const address = addressOf.get(socket);
    if (!address) return;
    const mine = byAddress.get(address);
    mine?.delete(socket);
    if (mine?.size === 0) byAddress.delete(address);
  };
  /** Closes the longest-idle socket of `sockets` that serves no request; false when all are busy. */
  const evictIdle = (sockets: Busy): boolean => {
    for (const [socket, busy] of sockets) {
      if (busy > 0) continue;
      forget(socket);
      socket.destroy();
      return true;
    }
    return false;
  };

  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? 'unknown';
    const counted = !limits.trusted.includes(address);
    let mine = counted ? byAddress.get(address) : undefined;
    if (mine && mine.size >= limits.perAddress && !evictIdle(mine)) {
      socket.destroy();
      return;
    }
    if (all.size >= limits.total && !evictIdle(all)) {
      socket.destroy();
      return;
    }
    all.set(socket, 0);
    addressOf.set(socket, counted ? address : null);
    if (counted) {
      if (!mine) {
        mine = new Map();
        byAddress.set(address, mine);
      }
      mine.set(socket, 0);
    }
    socket.once('close', () => forget(socket));
  });
  cutStalledSends(server, all.keys.bind(all), limits.sendTimeoutMs);

  // A request begins: the socket is in use. Its place in the order does not matter while it is.
  const begin = (socket: Socket) => {
    const busy = all.get(socket);
    if (busy === undefined) return;
    all.set(socket, busy + 1);
    const address = addressOf.get(socket);
    if (address) byAddress.get(address)?.set(socket, busy + 1);
  };
  // A response is done: re-inserted, so the order of the maps is the order of last use.
  function finished(this: ServerResponse) {
    const socket = this.req.socket;
    const busy = all.get(socket);
    if (busy === undefined) return;
    const next = Math.max(0, busy - 1);
    all.delete(socket);
    all.set(socket, next);
    const address = addressOf.get(socket);
    const mine = address ? byAddress.get(address) : undefined;
    mine?.delete(socket);
    mine?.set(socket, next);
  }
  // 'request' comes once a request's headers are complete: from then on the socket is in use
  // (an event stream stays in use while it is open) until its response is done.
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    begin(req.socket);
    res.once('close', finished);
  });
}

/**
 * Every quarter of the send timeout: a socket with response bytes waiting (a large body, an event
 * stream's backlog) that has not sent `MIN_PROGRESS_BYTES` since it was last seen doing so, or
 * since its bytes began to wait, for the whole timeout is destroyed, and with it what it held (the
 * queued bytes, its place under the bounds, an event stream's subscription). Progress, not total
 * time: a long download on a slow network goes on as long as it moves.
 */
function cutStalledSends(server: Server, sockets: () => Iterable<Socket>, timeoutMs: number): void {
  const marks = new WeakMap<Socket, { sent: number; at: number }>();
  const check = () => {
    const now = Date.now();
    for (const socket of [...sockets()]) {
      if (socket.writableLength === 0) {
        marks.delete(socket);
        continue;
      }
      const sent = bytesSent(socket);
      const mark = marks.get(socket);
      if (!mark || sent - mark.sent >= MIN_PROGRESS_BYTES) marks.set(socket, { sent, at: now });
      else if (now - mark.at >= timeoutMs) socket.destroy();
    }
  };
  // Only while listening: a server built for inject() alone leaves no timer behind.
  let timer: NodeJS.Timeout | undefined;
  server.on('listening', () => {
    clearInterval(timer);
    timer = setInterval(check, Math.max(50, Math.floor(timeoutMs / 4)));
    timer.unref();
  });
  server.on('close', () => clearInterval(timer));
}
