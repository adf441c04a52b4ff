import { afterEach, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { silentLogger } from '../core/logger.ts';
import { Collab, setText } from './collab.ts';
import { mergeText } from './merge.ts';
import { type Kit, makeServer } from './test-kit.ts';

let kit: Kit;
afterEach(async () => {
  await kit?.server.close();
});

describe('mergeText', () => {
  it('merges changes to different lines and refuses overlapping ones', () => {
    expect(mergeText('a\nb\nc\n', 'A\nb\nc\n', 'a\nb\nC\n')).toBe('A\nb\nC\n');
    expect(mergeText('a\n', 'x\n', 'y\n')).toBeNull();
    expect(mergeText('a\n', 'same\n', 'same\n')).toBe('same\n');
  });
});

describe('setText', () => {
  it('turns the text into the target with small edits', () => {
    const doc = new Y.Doc();
    const text = doc.getText('content');
    text.insert(0, 'hello world');
    setText(text, 'hello brave new world!');
    expect(text.toString()).toBe('hello brave new world!');
    const big = `start ${'x'.repeat(30_000)} end`;
    setText(text, big);
    expect(text.toString()).toBe(big);
    setText(text, '');
    expect(text.toString()).toBe('');
  });
});

describe('Collab documents', () => {
  it('keeps one history across unloads, so a client holding the old state does not double the text', async () => {
    kit = await makeServer();
    const { store, hub } = kit.server;
    const note = store.createNote('n', false);
    const file = store.createFile(note.id, 'f.md', 'base\n', true, 'uma');
    const collab = new Collab(store, hub, { logger: silentLogger, idleMs: 5, unloadMs: 10 });
    const client = new Y.Doc();
    Y.applyUpdate(client, Buffer.from(collab.state(file).state, 'base64'));
    const send = (fn: () => void) => {
      const updates: Uint8Array[] = [];
      const listener = (u: Uint8Array) => updates.push(u);
      client.on('update', listener);
      fn();
      client.off('update', listener);
      for (const u of updates)
        collab.apply(store.fileById(file.id)!, u, { subject: 'local:uma', name: 'uma' }, 'c1');
    };
    send(() => client.getText('content').insert(5, 'one\n'));
    await new Promise((r) => setTimeout(r, 60));
    // Saved and unloaded by now; the next update loads the stored document again.
    expect(store.fileById(file.id)!.content).toBe('base\none\n');
    expect(collab.loaded).toBe(0);
    send(() => client.getText('content').insert(0, 'zero\n'));
    expect(collab.text(store.fileById(file.id)!)).toBe('zero\nbase\none\n');
    collab.flushAll();
  });
});
