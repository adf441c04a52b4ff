// The deadline holds while the collector runs: against a server that accepts and never answers,
// through both HTTP clients rune uses (undici's fetch and node:http), the wait ends at its time.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectGarbage, whileCollecting } from '../../tests/helpers/gc.ts';
import { type SilentServer, startSilentServer } from '../../tests/helpers/silent-server.ts';
import { formatSeconds, startDeadline } from './deadline.ts';

let silent: SilentServer;
beforeAll(async () => {
  silent = await startSilentServer();
});
afterAll(() => silent.close());

function nodeGet(url: string, signal: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(url, { signal }, (res) => resolve(String(res.statusCode)));
    req.on('error', reject);
    req.end();
  });
}

describe('startDeadline', () => {
  it("Node 20's AbortSignal.any with a timeout loses it under GC (why this module exists)", async () => {
    const parent = new AbortController();
    // Made in a scope of its own and collected at once after a turn (no handle left to it), with a
    // timeout far longer than that takes, so a loaded machine cannot fire it before it is lost.
    const combined = () => AbortSignal.any([parent.signal, AbortSignal.timeout(1000)]);
    const lost = combined();
    await new Promise((resolve) => setImmediate(resolve));
    collectGarbage();
    collectGarbage();
    const outcome = await whileCollecting(
      Promise.race([
        fetch(silent.url, { signal: lost }).then(
          () => 'answered',
          (error: Error) => error.name,
        ),
        new Promise((resolve) => setTimeout(() => resolve('still waiting'), 2500)),
      ]),
    );
    parent.abort();
    // Fixed in later Node versions; on Node 20 the wait outlives its deadline.
    if (process.versions.node.startsWith('20.')) expect(outcome).toBe('still waiting');
  });

  it.each([
    ['fetch (undici)', (url: string, signal: AbortSignal) => fetch(url, { signal }).then(() => 'answered')],
    ['node:http', nodeGet],
  ])('ends a wait on a silent server at its time under forced GC: %s', async (_name, get) => {
    const parent = new AbortController();
    const deadline = startDeadline(200, parent.signal);
    const error = await whileCollecting(get(silent.url, deadline.signal).catch((thrown: Error) => thrown));
    deadline.clear();
    expect(deadline.expired).toBe(true);
    expect(deadline.signal.reason).toMatchObject({
      name: 'TimeoutError',
      message: 'no answer within 200 ms',
    });
    expect((error as Error).name === 'TimeoutError' || (error as Error).name === 'AbortError').toBe(true);
  });

  it("follows the parent's abort, with the parent's reason, and is not expired then", async () => {
    const parent = new AbortController();
    const deadline = startDeadline(60_000, parent.signal);
    const waiting = fetch(silent.url, { signal: deadline.signal }).catch((thrown: Error) => thrown);
    parent.abort(new Error('stopped by SIGTERM'));
    expect(await waiting).toMatchObject({ message: 'stopped by SIGTERM' });
    expect(deadline.expired).toBe(false);
    deadline.clear();
  });

  it('starts aborted under an aborted parent, and a cleared deadline never fires', async () => {
    const parent = new AbortController();
    parent.abort();
    expect(startDeadline(1000, parent.signal).signal.aborted).toBe(true);
    const cleared = startDeadline(10);
    cleared.clear();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(cleared.signal.aborted).toBe(false);
    expect(cleared.expired).toBe(false);
  });

  it('reads as seconds in messages', () => {
    expect([formatSeconds(250), formatSeconds(30_000), formatSeconds(1500)]).toEqual([
      '250 ms',
      '30 s',
      '1.5 s',
    ]);
  });
});
