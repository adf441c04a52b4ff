// What the prompt completes: slash commands (with what each does) as soon as a line starts with
// "/", and `@` mentions — skills by name and files or folders under the working directory.
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Completion, MenuItem } from './tui/editor.ts';

export interface CompletionSources {
  /** `/name [args]` → what it does. */
  commands: Readonly<Record<string, string>>;
  cwd: string;
  /** Skill names for `@name`, with their descriptions (read once, when first asked). */
  skills: () => readonly { name: string; description: string }[];
}

/** Entries listed per folder: a huge folder is not read whole on each key. */
const MAX_ENTRIES = 200;

function folderEntries(folder: string): { name: string; dir: boolean }[] {
  try {
    return readdirSync(folder, { withFileTypes: true })
      .slice(0, 5000)
      .map((entry) => ({ name: entry.name, dir: entry.isDirectory() }))
      .sort((a, b) => a.name.localeCompare(b.name));
  } catch {
    return [];
  }
}

/** The completer the line editor calls after every change. */
export function sessionCompleter(
  sources: CompletionSources,
): (text: string, cursor: number) => Completion | undefined {
  return (text, cursor) => {
    if (text.startsWith('/') && !/\s/.test(text) && cursor === text.length) {
      const items: MenuItem[] = Object.entries(sources.commands)
        .map(([usage, detail]) => ({ name: usage.split(' ')[0]!, usage, detail }))
        .filter(({ name }) => name.startsWith(text))
        // What was typed in full comes first: Enter on "/mode" runs /mode, not /model.
        .sort((a, b) => Number(b.name === text) - Number(a.name === text))
        .map(({ name, usage, detail }) => ({ value: name, label: usage, detail }));
      return items.length > 0 && !(items.length === 1 && items[0]!.value === text)
        ? { start: 0, end: text.length, items, enterSubmits: true }
        : undefined;
    }
    const before = text.slice(0, cursor);
    const mention = /(^|\s)@([^\s@]*)$/.exec(before);
    if (!mention) return undefined;
    const partial = mention[2]!;
    const start = cursor - partial.length - 1;
    const items: MenuItem[] = [];
    if (!partial.includes('/')) {
      for (const skill of sources.skills())
        if (skill.name.startsWith(partial))
          items.push({
            value: `@${skill.name}`,
            label: `@${skill.name}`,
            detail: `skill: ${skill.description}`,
          });
    }
    const slash = partial.lastIndexOf('/');
    const folderPart = slash === -1 ? '' : partial.slice(0, slash + 1);
    const namePart = partial.slice(slash + 1);
    const folder = resolve(sources.cwd, folderPart || '.');
    for (const entry of folderEntries(folder)) {
      if (items.length >= MAX_ENTRIES) break;
      if (!entry.name.startsWith(namePart)) continue;
      if (entry.name.startsWith('.') && !namePart.startsWith('.')) continue;
      const path = `${folderPart}${entry.name}${entry.dir ? '/' : ''}`;
      items.push({ value: `@${path}`, label: `@${path}`, ...(entry.dir ? { detail: 'folder' } : {}) });
    }
    if (items.length === 0 || (items.length === 1 && items[0]!.value === `@${partial}`)) return undefined;
    return { start, end: cursor, items, enterSubmits: false };
  };
}

/** Where a mention points (relative to cwd), for the attachment step. */
export function mentionPath(cwd: string, mention: string): string {
  return join(cwd, mention);
}
