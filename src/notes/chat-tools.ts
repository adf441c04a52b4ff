// The notes tools a note's chat gives the agent: list, read and write the note's Markdown files
// (through collab, so open editors see a write at once, saved as a revision) and search the note's
// earlier chat. Each tool's error is its result (isError), never a thrown one.
import type { ExtraTool } from '../agent/types.ts';
import type { Collab } from './collab.ts';
import { type ChatRow, type Store, toFile } from './db.ts';
import type { EventHub } from './events.ts';
import { checkFileName } from './http.ts';
import { resolveLimits } from './limits.ts';
import type { Principal } from './roles.ts';
import { parseQuery, runSearch } from './search.ts';

/** The agent's chat search has the same query shape as the search route. */
const CHAT_SEARCH_SHAPE = resolveLimits({});

/** Text cut to `max` characters, saying how many were left out (tool output shown in the chat). */
export function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}… [${text.length - max} more characters]` : text;
}

export interface NotesToolsContext {
  store: Store;
  hub: EventHub;
  collab: Collab;
}

function str(args: Record<string, unknown>, key: string): string {
  const value = args[key];
  if (typeof value !== 'string') throw new Error(`${key}: expected a string`);
  return value;
}

/** A tool body whose thrown error becomes its result. */
const wrap =
  (fn: (args: Record<string, unknown>) => string) =>
  async (args: Record<string, unknown>): Promise<{ content: string; isError?: boolean }> => {
    try {
      return { content: fn(args) };
    } catch (error) {
      return { content: (error as Error).message, isError: true };
    }
  };

/** The tools of one note's run, acting for `principal` (written files name them as the author). */
export function notesTools(
  { store, hub, collab }: NotesToolsContext,
  noteId: number,
  principal: Principal,
): ExtraTool[] {
  return [
    {
      source: 'builtin',
      access: { kind: 'own-files' },
      readOnly: true,
      definition: {
        name: 'list_markdown',
        description: 'List the Markdown files of this note (name, revision, size in bytes).',
        parameters: { type: 'object', properties: {}, additionalProperties: false },
      },
      execute: wrap(() => {
        const files = store.listFiles(noteId, { publicOnly: false, deleted: false });
        if (files.length === 0) return 'This note has no files yet.';
        return files
          .map((f) => `${f.name}\trevision ${f.revision}\t${Buffer.byteLength(f.content)} bytes`)
          .join('\n');
      }),
    },
    {
      source: 'builtin',
      access: { kind: 'own-files' },
      readOnly: true,
      definition: {
        name: 'read_markdown',
        description: 'Read one Markdown file of this note, as everyone sees it now.',
        parameters: {
          type: 'object',
          properties: { name: { type: 'string', description: 'File name, e.g. index.md' } },
          required: ['name'],
          additionalProperties: false,
        },
      },
      execute: wrap((args) => {
        const name = str(args, 'name');
        const file = store.findFile(noteId, name);
        if (!file || /^\d+$/.test(name)) throw new Error(`no file named ${name} in this note`);
        return collab.text(file);
      }),
    },
    {
      source: 'builtin',
      access: { kind: 'own-files' },
      definition: {
        name: 'write_markdown',
        description:
          'Create a Markdown file in this note, or replace the whole text of an existing one (saved as a new revision).',
        parameters: {
          type: 'object',
          properties: {
            name: { type: 'string', description: 'File name, e.g. plan.md' },
            content: { type: 'string', description: 'The complete new text' },
          },
          required: ['name', 'content'],
          additionalProperties: false,
        },
      },
      execute: wrap((args) => {
        const name = checkFileName(str(args, 'name'));
        const content = str(args, 'content');
        const author = `rune (for ${principal.name})`;
        collab.checkSize(content);
        const existing = store.findFile(noteId, name);
        if (existing) {
          const saved = collab.replace(existing, content, author);
          return `Saved ${name} as revision ${saved.revision}.`;
        }
        store.tx(() => {
          const created = store.createFile(noteId, name, content, true, author);
          hub.publish({
            name: 'file.created',
            noteId,
            fileId: created.id,
            data: { note_id: noteId, file: toFile(created) },
          });
        });
        return `Created ${name} (revision 1).`;
      }),
    },
    {
      source: 'builtin',
      access: { kind: 'own-files' },
      readOnly: true,
      definition: {
        name: 'search_chat',
        description: 'Full-text search in the earlier chat messages of this note.',
        parameters: {
          type: 'object',
          properties: { query: { type: 'string', description: 'Words to look for' } },
          required: ['query'],
          additionalProperties: false,
        },
      },
      execute: wrap((args) => {
        const parsed = parseQuery(str(args, 'query'), CHAT_SEARCH_SHAPE);
        if (!parsed.ok) throw new Error(parsed.message);
        const hits = runSearch(store.db, parsed.query, {
          publicOnly: false,
          noteId,
          limit: 20,
          budgetMs: 200,
          kinds: ['chat'],
        }).results;
        if (hits.length === 0) return 'No chat message matches.';
        return hits
          .map((hit) => {
            const row = store.db
              .prepare('select * from chat_messages where id = ?')
              .get(hit.message_id) as ChatRow;
            return `[${row.created_at}] ${row.author ?? row.role}: ${clip(row.content, 500)}`;
          })
          .join('\n');
      }),
    },
  ];
}
