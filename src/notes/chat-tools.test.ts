// The notes tools of a chat run, called as the agent calls them, on a real store.
import { afterEach, describe, expect, it } from 'vitest';
import { clip, notesTools } from './chat-tools.ts';
import type { Principal } from './roles.ts';
import { type Kit, makeServer } from './test-kit.ts';

let kit: Kit;
afterEach(async () => {
  await kit?.server.close();
});

const uma: Principal = { subject: 'local:uma', name: 'uma', provider: 'local', role: 'user' };

async function toolsOfANote() {
  kit = await makeServer();
  const note = kit.server.store.createNote('lab', false);
  const tools = notesTools(kit.server, note.id, uma);
  const call = (name: string, args: Record<string, unknown> = {}) => {
    const tool = tools.find((t) => t.definition.name === name);
    if (!tool) throw new Error(`no tool ${name}`);
    return tool.execute(args, new AbortController().signal);
  };
  return { note, tools, call };
}

describe('notesTools', () => {
  it('offers four tools, the readers marked read-only', async () => {
    const { tools } = await toolsOfANote();
    expect(tools.map((t) => [t.definition.name, t.readOnly ?? false])).toEqual([
      ['list_markdown', true],
      ['read_markdown', true],
      ['write_markdown', false],
      ['search_chat', true],
    ]);
  });

  it('writes a file (created, then a new revision), lists it and reads it back', async () => {
    const { note, call } = await toolsOfANote();
    expect(await call('list_markdown')).toEqual({ content: 'This note has no files yet.' });
    expect(await call('write_markdown', { name: 'plan.md', content: '# Plan\n' })).toEqual({
      content: 'Created plan.md (revision 1).',
    });
    expect(await call('write_markdown', { name: 'plan.md', content: '# Plan\n- one\n' })).toEqual({
      content: 'Saved plan.md as revision 2.',
    });
    expect(await call('read_markdown', { name: 'plan.md' })).toEqual({ content: '# Plan\n- one\n' });
    expect(await call('list_markdown')).toEqual({ content: 'plan.md\trevision 2\t13 bytes' });
    expect(kit.server.store.findFile(note.id, 'plan.md')?.revision).toBe(2);
  });

  // Each refusal is the tool's result, for the model to read, never a thrown error.
  it.each([
    ['read_markdown', { name: 'missing.md' }, /no file named missing\.md/],
    ['read_markdown', { name: '1' }, /no file named 1/],
    ['read_markdown', {}, /name: expected a string/],
    ['write_markdown', { name: 'a.md' }, /content: expected a string/],
    ['write_markdown', { name: '../a.md', content: 'x' }, /./],
    ['search_chat', { query: '' }, /./],
  ])('%s %j is an error result', async (name, args, message) => {
    const { call } = await toolsOfANote();
    const result = await call(name, args);
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(message);
  });

  it('searches the earlier chat of the note', async () => {
    const { note, call } = await toolsOfANote();
    expect(await call('search_chat', { query: 'zebra' })).toEqual({ content: 'No chat message matches.' });
    kit.server.store.addChat(note.id, 'user', 'uma', 'a zebra crossed', null);
    const found = await call('search_chat', { query: 'zebra' });
    expect(found.content).toMatch(/^\[.+\] uma: a zebra crossed$/);
  });
});

describe('clip', () => {
  it.each([
    ['short', 10, 'short'],
    ['exactly10!', 10, 'exactly10!'],
    ['a longer text', 4, 'a lo… [9 more characters]'],
  ])('clip(%j, %d)', (text, max, expected) => {
    expect(clip(text, max)).toBe(expected);
  });
});
