// A file read while people type: its `size` is that of the text returned (live edits included),
// not of the last revision.
import { afterEach, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { type Kit, loginAs, makeServer } from './test-kit.ts';

let kit: Kit;
afterEach(async () => {
  await kit.server.close();
});

describe('a file with live edits not yet in a revision', () => {
  it('answers the size of the content it answers', async () => {
    kit = await makeServer(undefined, { idleMs: 60_000 });
    const ada = await loginAs(kit.server, 'ada', 'adapass1');
    await ada.request('POST', '/api/notes', { name: 'n' });
    await ada.request('POST', '/api/notes/n/files', { name: 'c.md', content: 'x\n' });
    const { state } = (await ada.request('GET', '/api/notes/n/files/c.md/collab')).json();
    const doc = new Y.Doc();
    Y.applyUpdate(doc, Buffer.from(state, 'base64'));
    let update: Uint8Array | undefined;
    doc.on('update', (u: Uint8Array) => {
      update = u;
    });
    doc.getText('content').insert(0, 'é live\n');
    const sent = await ada.request('POST', '/api/notes/n/files/c.md/collab', {
      update: Buffer.from(update!).toString('base64'),
      client_id: 'tab',
    });
    expect(sent.statusCode).toBe(200);
    const file = (await ada.request('GET', '/api/notes/n/files/c.md')).json();
    expect(file.content).toBe('é live\nx\n');
    expect(file.revision).toBe(1);
    expect(file.size).toBe(Buffer.byteLength('é live\nx\n'));
  });
});
