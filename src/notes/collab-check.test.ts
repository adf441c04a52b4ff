import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { checkUpdate, isPlainTextDoc } from './collab-check.ts';

/** A server document holding `text`, and a client that has synced it. */
function pair(text = 'alpha\n') {
  const server = new Y.Doc();
  server.getText('content').insert(0, text);
  const client = new Y.Doc();
  Y.applyUpdate(client, Y.encodeStateAsUpdate(server));
  return { server, client };
}

/** The update a change on `doc` produces. */
function updateOf(doc: Y.Doc, change: (doc: Y.Doc) => void): Uint8Array {
  const updates: Uint8Array[] = [];
  const listener = (u: Uint8Array) => updates.push(u);
  doc.on('update', listener);
  change(doc);
  doc.off('update', listener);
  return Y.mergeUpdates(updates);
}

const check = (server: Y.Doc, update: Uint8Array) => checkUpdate(server, update, { measureDeletes: true });

describe('checkUpdate', () => {
  it('accepts text inserts and deletes in "content", and says what they insert and delete', () => {
    const { server, client } = pair('alpha\n');
    const update = updateOf(client, (d) => {
      d.getText('content').insert(5, 'BETA');
      d.getText('content').delete(0, 2);
    });
    const verdict = check(server, update);
    expect(verdict).toMatchObject({ ok: true, insertedBytes: 4, deletedBytes: 2 });
    expect(verdict.ok && verdict.writers).toEqual([client.clientID]);
  });

  const refused: Array<[string, (d: Y.Doc) => void, RegExp]> = [
    ['an embed', (d) => d.getText('content').insertEmbed(2, { image: 'x' }), /not an embed/],
    ['a format', (d) => d.getText('content').format(0, 3, { bold: true }), /not a format/],
    ['formatted text', (d) => d.getText('content').insert(1, 'b', { bold: true }), /not a format/],
    ['a map', (d) => d.getMap('meta').set('k', 'v'), /not a JSON value|"meta"/],
    ['an array', (d) => d.getArray('list').push(['x']), /not a JSON value/],
    ['another text', (d) => d.getText('other').insert(0, 'x'), /"other"/],
    ['a nested type', (d) => d.getMap('m').set('t', new Y.Text('x')), /nested shared type|"m"/],
    ['an XML fragment', (d) => d.getXmlFragment('xml').insert(0, [new Y.XmlText('x')]), /"xml"|nested/],
    ['a sub-document', (d) => d.getMap('docs').set('d', new Y.Doc()), /sub-document|"docs"/],
  ];
  for (const [what, change, message] of refused) {
    it(`refuses ${what} with a 400 that says why`, () => {
      const { server, client } = pair();
      const verdict = check(server, updateOf(client, change));
      expect(verdict).toMatchObject({ ok: false, code: 'BAD_REQUEST' });
      expect(!verdict.ok && verdict.message).toMatch(message);
    });
  }

  it('refuses updates that depend on changes the server lacks (409), instead of keeping them pending', () => {
    const { server, client } = pair();
    updateOf(client, (d) => d.getText('content').insert(0, 'first '));
    const second = updateOf(client, (d) => d.getText('content').insert(0, 'second '));
    expect(check(server, second)).toMatchObject({ ok: false, code: 'CONFLICT' });
    // A delete of text the server never saw is the same.
    const other = new Y.Doc();
    Y.applyUpdate(other, Y.encodeStateAsUpdate(client));
    const deletion = updateOf(other, (d) => d.getText('content').delete(0, 3));
    expect(check(server, deletion)).toMatchObject({ ok: false, code: 'CONFLICT' });
  });

  it('refuses bytes that are not an update by throwing', () => {
    const { server } = pair();
    expect(() => check(server, new Uint8Array([255, 255, 255, 255, 255, 255]))).toThrow();
  });

  it('knows a document stored with an embed is not plain text', () => {
    const { client } = pair();
    expect(isPlainTextDoc(client)).toBe(true);
    client.getText('content').insertEmbed(1, { x: 1 });
    const loaded = new Y.Doc();
    Y.applyUpdate(loaded, Y.encodeStateAsUpdate(client));
    expect(isPlainTextDoc(loaded)).toBe(false);
    const mapped = new Y.Doc();
    mapped.getMap('content').set('a', 1);
    const reloaded = new Y.Doc();
    Y.applyUpdate(reloaded, Y.encodeStateAsUpdate(mapped));
    expect(isPlainTextDoc(reloaded)).toBe(false);
  });
});
