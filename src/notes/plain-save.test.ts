// A script's save against the live document, on a real store and the server's merge runner.
import { afterEach, describe, expect, it } from 'vitest';
import { type PlainSaveContext, plainSave } from './plain-save.ts';
import { type Kit, makeServer } from './test-kit.ts';

let kit: Kit;
afterEach(async () => {
  await kit?.server.close();
});

/** A file saved as revision 1 (`base`) and then as revision 2 (`now`). */
async function fileAt(base: string, now: string) {
  kit = await makeServer();
  const { store, collab, tasks } = kit.server;
  const note = store.createNote('lab', false);
  const created = store.createFile(note.id, 'a.md', base, false, 'ada');
  const file = base === now ? created : collab.replace(created, now, 'ada');
  const context: PlainSaveContext = { collab, store, runner: tasks };
  return { context, file };
}

describe('plainSave', () => {
  // base: revision 1; now: the text at the latest revision; the save's text and the revision it was based on.
  it.each<[string, string, string, string, number, { merged: boolean; text: string } | 'conflict']>([
    ['based on the current text: applied as it is', 'a\n', 'a\n', 'b\n', 1, { merged: false, text: 'b\n' }],
    ['based on the current revision', 'a\n', 'b\n', 'c\n', 2, { merged: false, text: 'c\n' }],
    [
      'based on an older revision, other lines: merged',
      'a\nb\nc\n',
      'A\nb\nc\n',
      'a\nb\nC\n',
      1,
      { merged: true, text: 'A\nb\nC\n' },
    ],
    ['based on an older revision, the same line: refused', 'a\n', 'x\n', 'y\n', 1, 'conflict'],
    ['based on a revision the file never had: refused', 'a\n', 'b\n', 'c\n', 7, 'conflict'],
  ])('%s', async (_name, base, now, content, baseRevision, expected) => {
    const { context, file } = await fileAt(base, now);
    const result = await plainSave(context, file, content, baseRevision, 'uma');
    if (expected === 'conflict') {
      expect(result).toMatchObject({ ok: false, current: { content: now, revision: file.revision } });
      expect(result.ok === false && result.tooLarge).toBeFalsy();
      expect(kit.server.collab.text(file)).toBe(now);
      return;
    }
    expect(result).toMatchObject({
      ok: true,
      merged: expected.merged,
      file: { revision: file.revision + 1 },
    });
    expect(kit.server.store.fileById(file.id)?.content).toBe(expected.text);
  });

  it('refuses a text larger than a file may be, before anything else', async () => {
    const { context, file } = await fileAt('a\n', 'a\n');
    await expect(plainSave(context, file, 'x'.repeat(2 * 1024 * 1024), 1, 'uma')).rejects.toMatchObject({
      status: 413,
    });
  });
});
