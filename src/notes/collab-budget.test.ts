// A flood of tiny collaborative updates from one person is bounded by count too: every update
// counts at least UPDATE_FLOOR_BYTES of the person's byte budget, so one-byte updates cannot
// come hundreds a second, while typing (batched per 50 ms) stays far below it.
import { afterEach, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { UPDATE_FLOOR_BYTES } from './routes/collab.ts';
import { type Kit, loginAs, makeServer } from './test-kit.ts';

let kit: Kit;
afterEach(async () => {
  await kit.server.close();
});

describe('tiny collaborative updates', () => {
  it('are limited by count: a burst of one-key updates meets 429 within the budget’s worth', async () => {
    // The clock stands still: the burst meets the budget as if it all arrived at once.
    const at = new Date();
    kit = await makeServer(undefined, { now: () => at });
    const ada = await loginAs(kit.server, 'ada', 'adapass1');
    const uma = await loginAs(kit.server, 'uma', 'umapass1');
    await ada.request('POST', '/api/notes', { name: 'n' });
    await uma.request('POST', '/api/notes/n/files', { name: 'c.md', content: 'x\n' });
    const { state } = (await uma.request('GET', '/api/notes/n/files/c.md/collab')).json();
    const doc = new Y.Doc();
    Y.applyUpdate(doc, Buffer.from(state, 'base64'));
    const burst = Math.ceil((128 * 1024 * 2) / UPDATE_FLOOR_BYTES) + 20;
    const updates: string[] = [];
    for (let i = 0; i < burst; i++) {
      let update: Uint8Array | undefined;
      const grab = (u: Uint8Array) => {
        update = u;
      };
      doc.on('update', grab);
      doc.getText('content').insert(0, 'k');
      doc.off('update', grab);
      updates.push(Buffer.from(update!).toString('base64'));
    }
    // All at once, as a flooding client sends them: the budget is taken before any body is read.
    const answers = await Promise.all(
      updates.map((update) =>
        uma.request('POST', '/api/notes/n/files/c.md/collab', { update, client_id: 'tab' }),
      ),
    );
    const statuses = answers.map((a) => a.statusCode);
    const limited = answers.find((a) => a.statusCode === 429)!;
    expect(limited.json().code).toBe('RATE_LIMITED');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    // Each update is ~30 bytes: by bytes alone, thousands would pass before a 429.
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(15);
    expect(statuses.filter((s) => s === 200).length).toBeLessThanOrEqual(
      (128 * 1024 * 2) / UPDATE_FLOOR_BYTES + 5,
    );
  });
});
