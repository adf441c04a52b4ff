// The endpoints' behaviour (the FUSE thread posts, this answers): a call slot per (tool, session id).
// Opening for writing captures the caller's session; writes are buffered in its slot; the release
// of the last writer starts the call and returns at once; a read waits for the result, serves it,
// and the read past its end frees the slot (failing with the call's errno when it was refused or
// failed). Pipelines of one shell share a slot; other sessions never see it. Slots and logs left
// idle are reaped. The call itself and the native replies are injected.
import { constants } from 'node:os';
import { MAX_INPUT_BYTES } from './input.ts';
import type { CallOutcome, CallRequest } from './invoke.ts';
import { type FuseEvent, Reply, type ReplyKind } from './native.ts';
import type { Endpoint, Tree } from './tree.ts';

const { EACCES, EBADF, EBUSY, EFBIG, EINTR, EIO, ENODATA, ENOENT } = constants.errno;
/** Linux's O_ACCMODE (Node's fs.constants does not name it) and O_RDONLY. */
const ACCMODE = 3;
const O_RDONLY = 0;

/** How long an unread result or a log of a session stays before it is dropped. */
export const IDLE_MS = 15 * 60 * 1000;

export interface Replier {
  reply(id: number, kind: ReplyKind, value: number | Buffer): boolean;
}

export type CallRunner = (request: CallRequest) => Promise<CallOutcome>;

interface Slot {
  state: 'writing' | 'running' | 'done';
  input: Buffer[];
  bytes: number;
  writers: number;
  /** The first writer: the process the policy's audit line names. */
  pid: number;
  outcome?: CallOutcome;
  /** Reads waiting for the result: request id → handle and range. */
  waiting: Map<number, { fh: number; offset: number; size: number }>;
  touched: number;
}

interface Handle {
  endpoint: Endpoint;
  key: string;
  sid: number;
  write: boolean;
  /** What this handle reads, bound at its first read (or at open, for a log). */
  served?: { bytes: Buffer; errno: number; slot?: Slot };
}

export class MountFs {
  #tree: Tree | undefined;
  readonly #slots = new Map<string, Slot>();
  readonly #logs = new Map<string, { text: string; touched: number }>();
  readonly #handles = new Map<number, Handle>();
  /** Waiting read id → its slot's key, for interrupts. */
  readonly #waits = new Map<number, string>();
  #nextFh = 1;

  constructor(
    private readonly replier: Replier,
    private readonly run: CallRunner,
    private readonly clock: () => number = Date.now,
  ) {}

  setTree(tree: Tree): void {
    this.#tree = tree;
  }

  /** One event of the FUSE thread; never throws (a failure answers the request with EIO). */
  handle(event: FuseEvent): void {
    try {
      switch (event.op) {
        case 'open':
          this.#open(event);
          return;
        case 'write':
          this.#write(event);
          return;
        case 'read':
          this.#read(event);
          return;
        case 'release':
          this.#release(event.fh);
          return;
        case 'interrupt':
          this.#interrupt(event.id);
          return;
        case 'ended':
          return;
      }
    } catch {
      if ('id' in event) this.replier.reply(event.id, Reply.Error, EIO);
    }
  }

  /** Drops results nobody read and logs nobody asked for within `idleMs`; returns how many. */
  reap(idleMs = IDLE_MS): number {
    const now = this.clock();
    let dropped = 0;
    const busy = (slot: Slot | undefined) =>
      slot !== undefined && (slot.state === 'running' || slot.writers > 0 || slot.waiting.size > 0);
    for (const [key, slot] of this.#slots) {
      if (!busy(slot) && now - slot.touched > idleMs && this.#slots.delete(key)) dropped += 1;
    }
    for (const [key, log] of this.#logs) {
      if (!busy(this.#slots.get(key)) && now - log.touched > idleMs && this.#logs.delete(key)) dropped += 1;
    }
    return dropped;
  }

  /** Slots held now (for tests and the reaper's report). */
  get slotCount(): number {
    return this.#slots.size;
  }

  #error(id: number, errno: number): void {
    this.replier.reply(id, Reply.Error, errno);
  }

  #open(event: Extract<FuseEvent, { op: 'open' }>): void {
    const endpoint = this.#tree?.endpoints.get(event.ino);
    if (!endpoint) {
      this.#error(event.id, ENOENT);
      return;
    }
    const key = `${endpoint.tool}\0${event.sid}`;
    const write = (event.flags & ACCMODE) !== O_RDONLY;
    const handle: Handle = { endpoint, key, sid: event.sid, write };
    if (endpoint.kind === 'log') {
      if (write) {
        this.#error(event.id, EACCES);
        return;
      }
      const log = this.#logs.get(key);
      if (log) log.touched = this.clock();
      const text =
        log?.text ?? `no call of this session (id ${event.sid}) to ${endpoint.path.slice(0, -4)} yet\n`;
      handle.served = { bytes: Buffer.from(text), errno: 0 };
    } else if (write) {
      let slot = this.#slots.get(key);
      if (slot?.state === 'running') {
        this.#error(event.id, EBUSY);
        return;
      }
      if (!slot || slot.state === 'done') {
        slot = {
          state: 'writing',
          input: [],
          bytes: 0,
          writers: 0,
          pid: event.pid,
          waiting: new Map(),
          touched: 0,
        };
        this.#slots.set(key, slot);
      }
      slot.writers += 1;
      slot.touched = this.clock();
    }
    const fh = this.#nextFh++;
    this.#handles.set(fh, handle);
    if (!this.replier.reply(event.id, Reply.Open, fh)) this.#release(fh);
  }

  #write(event: Extract<FuseEvent, { op: 'write' }>): void {
    const handle = this.#handles.get(event.fh);
    const slot = handle?.write ? this.#slots.get(handle.key) : undefined;
    if (slot?.state !== 'writing') {
      this.#error(event.id, EBADF);
      return;
    }
    if (slot.bytes + event.data.length > MAX_INPUT_BYTES) {
      this.#error(event.id, EFBIG);
      return;
    }
    slot.input.push(Buffer.from(event.data));
    slot.bytes += event.data.length;
    slot.touched = this.clock();
    this.replier.reply(event.id, Reply.Written, event.data.length);
  }

  #release(fh: number): void {
    const handle = this.#handles.get(fh);
    this.#handles.delete(fh);
    if (!handle?.write) return;
    const slot = this.#slots.get(handle.key);
    if (slot?.state !== 'writing') return;
    slot.writers -= 1;
    if (slot.writers === 0) this.#start(handle, slot);
  }

  /** Starts the call and returns: the FUSE thread is never held by a running call. */
  #start(handle: Handle, slot: Slot): void {
    slot.state = 'running';
    const input = Buffer.concat(slot.input).toString('utf8');
    slot.input = [];
    const path = handle.endpoint.path;
    this.#logs.set(handle.key, {
      text: `call: ${path} (tool ${handle.endpoint.tool})\ncaller: pid ${slot.pid}, session ${handle.sid}\nstatus: running\n`,
      touched: this.clock(),
    });
    const request: CallRequest = {
      tool: handle.endpoint.tool,
      path,
      input,
      caller: { pid: slot.pid, sid: handle.sid },
    };
    this.run(request)
      .then(
        (outcome) => this.#finish(handle.key, slot, outcome),
        (error: Error) =>
          this.#finish(handle.key, slot, {
            text: `error: ${handle.endpoint.tool} failed: ${error.message}\n`,
            errno: EIO,
            log: `call: ${path}\nstatus: error\n${error.message}\n`,
          }),
      )
      // A reply that cannot be sent has nobody left to tell; it must not end the process.
      .catch(() => undefined);
  }

  #finish(key: string, slot: Slot, outcome: CallOutcome): void {
    if (this.#slots.get(key) !== slot) return;
    slot.state = 'done';
    slot.outcome = outcome;
    slot.touched = this.clock();
    this.#logs.set(key, { text: outcome.log, touched: slot.touched });
    for (const [id, read] of slot.waiting) {
      this.#waits.delete(id);
      const handle = this.#handles.get(read.fh);
      if (!handle) {
        this.#error(id, EBADF);
        continue;
      }
      this.#bind(handle, slot);
      this.#serve(id, handle, read.offset, read.size);
    }
    slot.waiting.clear();
  }

  #bind(handle: Handle, slot: Slot): void {
    const outcome = slot.outcome!;
    handle.served = { bytes: Buffer.from(outcome.text), errno: outcome.errno, slot };
  }

  #read(event: Extract<FuseEvent, { op: 'read' }>): void {
    const handle = this.#handles.get(event.fh);
    if (!handle) {
      this.#error(event.id, EBADF);
      return;
    }
    if (!handle.served) {
      const slot = this.#slots.get(handle.key);
      if (!slot) {
        const hint = `no call of this session (id ${handle.sid}) to read: write its arguments to ${handle.endpoint.path} first (see README)\n`;
        handle.served = { bytes: Buffer.from(hint), errno: ENODATA };
      } else if (slot.state === 'done') {
        this.#bind(handle, slot);
      } else {
        slot.waiting.set(event.id, { fh: event.fh, offset: event.offset, size: event.size });
        this.#waits.set(event.id, handle.key);
        return;
      }
    }
    this.#serve(event.id, handle, event.offset, event.size);
  }

  /** A slice of the result; past its end the slot is freed, and a refused or failed call's read fails. */
  #serve(id: number, handle: Handle, offset: number, size: number): void {
    const served = handle.served!;
    if (offset < served.bytes.length) {
      this.replier.reply(id, Reply.Data, served.bytes.subarray(offset, offset + size));
      return;
    }
    if (served.slot && this.#slots.get(handle.key) === served.slot) this.#slots.delete(handle.key);
    if (served.errno) this.#error(id, served.errno);
    else this.replier.reply(id, Reply.Data, Buffer.alloc(0));
  }

  #interrupt(id: number): void {
    const key = this.#waits.get(id);
    if (key === undefined) return;
    this.#waits.delete(id);
    this.#slots.get(key)?.waiting.delete(id);
    this.#error(id, EINTR);
  }
}
