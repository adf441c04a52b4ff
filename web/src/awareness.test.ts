import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import type { Presence } from './api.ts';
import { type Cursor, colourFor, PresenceAwareness } from './awareness.ts';

function pair(): { a: Y.Doc; b: Y.Doc; text: Y.Text } {
  const a = new Y.Doc();
  const text = a.getText('content');
  text.insert(0, 'hello world');
  const b = new Y.Doc();
  Y.applyUpdate(b, Y.encodeStateAsUpdate(a));
  return { a, b, text };
}

const entry = (over: Partial<Presence>): Presence => ({
  client_id: 'tab-a',
  name: 'alice',
  role: 'user',
  file_id: 7,
  typing: false,
  ...over,
});

describe('PresenceAwareness', () => {
  it('carries a cursor from one document to the same place in another', () => {
    const { a, b, text } = pair();
    let sent: Cursor | null = null;
    const local = new PresenceAwareness(a, 'alice', (cursor) => {
      sent = cursor;
    });
    local.setLocalStateField('cursor', {
      anchor: Y.createRelativePositionFromTypeIndex(text, 6),
      head: Y.createRelativePositionFromTypeIndex(text, 11),
    });
    expect(sent).not.toBeNull();
    const remote = new PresenceAwareness(b, 'bob', () => {});
    const changes: unknown[] = [];
    remote.on('change', (change) => changes.push(change));
    remote.setRemote([entry({ state: { cursor: sent } })], 7, 'tab-b');
    const [id, state] = [...remote.getStates()].find(([key]) => key !== b.clientID)!;
    expect(changes).toEqual([{ added: [id], updated: [], removed: [] }]);
    expect(state['user']).toEqual({
      name: 'alice',
      color: colourFor('alice'),
      colorLight: `${colourFor('alice')}33`,
    });
    const cursor = state['cursor'] as { anchor: Y.RelativePosition; head: Y.RelativePosition };
    // Text typed before the cursor in b moves it along: it is relative, not an index.
    b.getText('content').insert(0, '>> ');
    expect(Y.createAbsolutePositionFromRelativePosition(cursor.anchor, b)?.index).toBe(9);
    expect(Y.createAbsolutePositionFromRelativePosition(cursor.head, b)?.index).toBe(14);
  });

  it('ignores its own tab, other files, readers, entries without a cursor and undecodable ones', () => {
    const { b } = pair();
    const remote = new PresenceAwareness(b, 'bob', () => {});
    const changes: unknown[] = [];
    remote.on('change', (change) => changes.push(change));
    const cursor = { anchor: 'AA==', head: 'AA==' };
    remote.setRemote(
      [
        entry({ client_id: 'tab-b', state: { cursor } }),
        entry({ file_id: 8, state: { cursor } }),
        entry({ client_id: 'tab-c' }),
        entry({ client_id: 'tab-g', role: 'guest', state: { cursor } }),
        entry({ client_id: 'tab-d', state: { cursor: { anchor: '////', head: '!!' } } }),
        entry({ client_id: 'tab-e', state: { cursor: { anchor: 7, head: 'AA==' } } }),
        entry({ client_id: 'tab-f', state: { cursor: 'AA==' } }),
      ],
      7,
      'tab-b',
    );
    expect(changes).toEqual([]);
    expect([...remote.getStates().keys()]).toEqual([b.clientID]);
  });

  it('reports only real changes, and removes people who left', () => {
    const { a, b, text } = pair();
    let sent: Cursor | null = null;
    new PresenceAwareness(a, 'alice', (cursor) => {
      sent = cursor;
    }).setLocalStateField('cursor', {
      anchor: Y.createRelativePositionFromTypeIndex(text, 1),
      head: Y.createRelativePositionFromTypeIndex(text, 1),
    });
    const remote = new PresenceAwareness(b, 'bob', () => {});
    const changes: Array<{ added: number[]; updated: number[]; removed: number[] }> = [];
    remote.on('change', (change) => changes.push(change));
    const present = [entry({ state: { cursor: sent } })];
    remote.setRemote(present, 7, 'tab-b');
    remote.setRemote(present, 7, 'tab-b');
    remote.setRemote([], 7, 'tab-b');
    expect(changes.map((c) => [c.added.length, c.updated.length, c.removed.length])).toEqual([
      [1, 0, 0],
      [0, 0, 1],
    ]);
    expect(remote.getStates().size).toBe(1);
  });

  it('gives each name one colour, the same everywhere', () => {
    expect(colourFor('alice')).toBe(colourFor('alice'));
    expect(colourFor('alice')).toMatch(/^#[0-9a-f]{6}$/);
    const colours = new Set(['alice', 'bob', 'carol', 'dave', 'erin', 'frank'].map(colourFor));
    expect(colours.size).toBeGreaterThan(3);
  });
});
