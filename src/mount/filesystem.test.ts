import { constants } from 'node:os';
import { describe, expect, it } from 'vitest';
import { IDLE_MS, MountFs } from './filesystem.ts';
import { MAX_INPUT_BYTES } from './input.ts';
import type { CallOutcome, CallRequest } from './invoke.ts';
import type { FuseEvent } from './native.ts';
import { buildTree, InodeTable } from './tree.ts';

const { EACCES, EBUSY, EFBIG, EINTR, ENODATA } = constants.errno;
const O_WRONLY = 1;
const O_TRUNC = 0o1000;

type Sent = { id: number; kind: number; value: number | string };

/** A mount without FUSE: events go in, replies are recorded; calls are answered by the test. */
function harness() {
  const sent: Sent[] = [];
  const calls: Array<{ request: CallRequest; finish: (outcome: CallOutcome) => void }> = [];
  let now = 1_000;
  const fs = new MountFs(
    {
      reply: (id, kind, value) => {
        sent.push({ id, kind, value: Buffer.isBuffer(value) ? value.toString() : value });
        return true;
      },
    },
    (request) => new Promise((finish) => calls.push({ request, finish })),
    () => now,
  );
  const tree = buildTree(
    [
      {
        definition: {
          name: 'execute_cmd',
          description: 'run',
          parameters: { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] },
        },
      },
    ],
    new InodeTable(),
  );
  fs.setTree(tree);
  const ino = (path: string) => [...tree.endpoints].find(([, endpoint]) => endpoint.path === path)![0];
  let nextId = 1;
  const reply = (id: number) => sent.find((s) => s.id === id);
  const send = (event: Record<string, unknown>): number => {
    const id = nextId++;
    fs.handle({ id, ...event } as FuseEvent);
    return id;
  };
  const open = (sid: number, flags: number, path = 'tools/execute_cmd') => {
    const id = send({ op: 'open', ino: ino(path), pid: sid + 1, sid, uid: 0, flags });
    return reply(id)!;
  };
  const read = (fh: number, offset = 0) => send({ op: 'read', ino: 0, fh, offset, size: 4096, pid: 1 });
  const write = (fh: number, text: string) =>
    reply(send({ op: 'write', ino: 0, fh, offset: 0, data: Buffer.from(text) }))!;
  const release = (fh: number) => fs.handle({ op: 'release', ino: 0, fh });
  /** echo TEXT > endpoint, as a shell of session `sid` does it. */
  const echo = (sid: number, text: string) => {
    const fh = open(sid, O_WRONLY | O_TRUNC).value as number;
    write(fh, text);
    release(fh);
  };
  const tick = () => new Promise((resolve) => setImmediate(resolve));
  return {
    fs,
    sent,
    calls,
    reply,
    open,
    read,
    write,
    release,
    echo,
    tick,
    advance: (ms: number) => (now += ms),
  };
}

const ok = (text: string): CallOutcome => ({ text, errno: 0, log: `log of ${text}` });

describe('MountFs: one call slot per (tool, session)', () => {
  it('starts the call at release with the caller, serves the result, and frees the slot after its end', async () => {
    const h = harness();
    h.echo(40, 'ls\n');
    expect(h.calls).toHaveLength(1);
    expect(h.calls[0]!.request).toEqual({
      tool: 'execute_cmd',
      path: 'tools/execute_cmd',
      input: 'ls\n',
      caller: { pid: 41, sid: 40 },
    });
    const fh = h.open(40, 0).value as number;
    const first = h.read(fh);
    expect(h.reply(first)).toBeUndefined(); // waits for the call
    h.calls[0]!.finish(ok('a.txt\n'));
    await h.tick();
    expect(h.reply(first)).toMatchObject({ value: 'a.txt\n' });
    expect(h.fs.slotCount).toBe(1);
    const end = h.read(fh, 6);
    expect(h.reply(end)).toMatchObject({ value: '' });
    expect(h.fs.slotCount).toBe(0);
  });

  it('a read that comes before the (asynchronous) release waits for the call', async () => {
    const h = harness();
    const writer = h.open(40, O_WRONLY).value as number;
    h.write(writer, 'ls');
    const reader = h.open(40, 0).value as number;
    const pending = h.read(reader);
    h.release(writer);
    h.calls[0]!.finish(ok('x\n'));
    await h.tick();
    expect(h.reply(pending)).toMatchObject({ value: 'x\n' });
  });

  it('sessions run in parallel and never see each other’s results', async () => {
    const h = harness();
    h.echo(10, 'echo A');
    h.echo(20, 'echo B');
    expect(h.calls.map((call) => call.request.caller.sid)).toEqual([10, 20]);
    const a = h.read(h.open(10, 0).value as number);
    const b = h.read(h.open(20, 0).value as number);
    h.calls[1]!.finish(ok('B\n'));
    await h.tick();
    expect(h.reply(b)).toMatchObject({ value: 'B\n' });
    expect(h.reply(a)).toBeUndefined();
    h.calls[0]!.finish(ok('A\n'));
    await h.tick();
    expect(h.reply(a)).toMatchObject({ value: 'A\n' });
  });

  it('a refused call reads back its text, then the read fails with EACCES', async () => {
    const h = harness();
    h.echo(40, 'cat ~/.ssh/id_rsa');
    h.calls[0]!.finish({ text: 'blocked by policy (floor): …\n', errno: EACCES, log: '' });
    await h.tick();
    const fh = h.open(40, 0).value as number;
    expect(h.reply(h.read(fh))).toMatchObject({ value: 'blocked by policy (floor): …\n' });
    expect(h.reply(h.read(fh, Buffer.byteLength('blocked by policy (floor): …\n')))).toMatchObject({
      kind: 3,
      value: EACCES,
    });
  });

  it('reading with no call of the session says what to do and fails with ENODATA', () => {
    const h = harness();
    const fh = h.open(40, 0).value as number;
    expect(h.reply(h.read(fh))?.value).toMatch(
      /^no call of this session \(id 40\) to read: write its arguments/,
    );
    expect(h.reply(h.read(fh, 500))).toMatchObject({ kind: 3, value: ENODATA });
  });

  it('refuses a second write while the session’s call runs (EBUSY), and input past the limit (EFBIG)', () => {
    const h = harness();
    h.echo(40, 'sleep 9');
    expect(h.open(40, O_WRONLY)).toMatchObject({ kind: 3, value: EBUSY });
    const fh = h.open(50, O_WRONLY).value as number;
    expect(h.write(fh, 'x'.repeat(MAX_INPUT_BYTES + 1))).toMatchObject({ kind: 3, value: EFBIG });
  });

  it('an interrupted read (Ctrl-C) fails with EINTR, and the result waits for the next read', async () => {
    const h = harness();
    h.echo(40, 'sleep 3');
    const fh = h.open(40, 0).value as number;
    const waiting = h.read(h.open(40, 0).value as number);
    h.fs.handle({ op: 'interrupt', id: waiting });
    expect(h.reply(waiting)).toMatchObject({ kind: 3, value: EINTR });
    h.calls[0]!.finish(ok('late\n'));
    await h.tick();
    expect(h.reply(h.read(fh))).toMatchObject({ value: 'late\n' });
  });

  it('the .log shows the session’s last call (running, then done) and cannot be written', async () => {
    const h = harness();
    expect(h.open(40, O_WRONLY, 'tools/execute_cmd.log')).toMatchObject({ kind: 3, value: EACCES });
    h.echo(40, 'ls');
    const running = h.open(40, 0, 'tools/execute_cmd.log').value as number;
    expect(h.reply(h.read(running))?.value).toMatch(/status: running/);
    h.calls[0]!.finish(ok('x'));
    await h.tick();
    const done = h.open(40, 0, 'tools/execute_cmd.log').value as number;
    expect(h.reply(h.read(done))?.value).toBe('log of x');
    const other = h.open(41, 0, 'tools/execute_cmd.log').value as number;
    expect(h.reply(h.read(other))?.value).toMatch(/^no call of this session \(id 41\)/);
  });

  it('reaps results and logs left idle, never a running call', async () => {
    const h = harness();
    h.echo(10, 'done soon');
    h.echo(20, 'runs long');
    h.calls[0]!.finish(ok('unread\n'));
    await h.tick();
    h.advance(IDLE_MS - 1);
    expect(h.fs.reap()).toBe(0);
    h.advance(2);
    expect(h.fs.reap()).toBe(2); // session 10's result and log; session 20's call still runs
    expect(h.fs.slotCount).toBe(1);
    const fh = h.open(10, 0).value as number;
    expect(h.reply(h.read(fh))?.value).toMatch(/^no call of this session/);
  });
});
