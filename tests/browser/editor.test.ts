// The notes editor (CodeMirror 6 bound to the file's Yjs text) in Chromium against the real server:
// other people's cursors with their names and colours, undo of one's own edits only, the Markdown
// keys, search and replace, uploads by paste and drop, a save state that tells the truth, keyboard-
// only use, and screenshots in light, dark and on a phone for a person to look at.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Api,
  artefact,
  editorText,
  launchChromium,
  loginPage,
  type NotesServer,
  openEditor,
  startNotes,
  watchedPage,
} from './harness.ts';

let server: NotesServer;
let browser: Browser;
let admin: Api;

beforeAll(async () => {
  server = await startNotes();
  browser = await launchChromium();
  admin = await Api.login(server.url, 'admin');
  await admin.call('POST', '/api/notes', { name: 'desk' });
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

interface Editor {
  context: BrowserContext;
  page: Page;
  errors: string[];
}

async function editor(
  name: 'alice' | 'bob',
  file: string,
  options: { dark?: boolean; phone?: boolean; mode?: 'edit' | 'split' } = {},
): Promise<Editor> {
  const context = await browser.newContext(
    options.phone
      ? { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true }
      : { viewport: { width: 1280, height: 800 }, colorScheme: options.dark ? 'dark' : 'light' },
  );
  const { page, errors } = await watchedPage(context);
  await loginPage(page, server.url, name);
  await page.evaluate(`localStorage.setItem('rune-editor-mode', '${options.mode ?? 'split'}')`);
  await openEditor(page, server.url, 'desk', file);
  return { context, page, errors };
}

const serverText = async (file: string): Promise<string> =>
  (await admin.call('GET', `/api/notes/desk/files/${encodeURIComponent(file)}`)).content;

async function newFile(name: string, content: string): Promise<void> {
  await admin.call('POST', '/api/notes/desk/files', { name, content });
}

/** A computed style of the first element matching `selector`. */
function style(page: Page, selector: string, property: string): Promise<string> {
  return page.evaluate(
    `getComputedStyle(document.querySelector(${JSON.stringify(selector)}))[${JSON.stringify(property)}]`,
  ) as Promise<string>;
}

/** Puts the cursor at the end of line `n` (1-based) with the keyboard. */
async function endOfLine(page: Page, n: number): Promise<void> {
  await page.click('.cm-content');
  await page.keyboard.press('Control+Home');
  for (let i = 1; i < n; i++) await page.keyboard.press('ArrowDown');
  await page.keyboard.press('End');
}

describe('two people in one file', () => {
  it('each sees the other’s cursor with the right name, typing converges, Ctrl-Z undoes only one’s own edit', async () => {
    await newFile('cursors.md', 'first line\nsecond line\n');
    const a = await editor('alice', 'cursors.md');
    const b = await editor('bob', 'cursors.md', { dark: true });
    await endOfLine(a.page, 1);
    await a.page.keyboard.type(' (alice)', { delay: 15 });
    await endOfLine(b.page, 3);
    await b.page.keyboard.type('bob writes here', { delay: 15 });
    const expected = 'first line (alice)\nsecond line\nbob writes here';
    await expect.poll(() => editorText(a.page), { timeout: 10_000 }).toBe(expected);
    await expect.poll(() => editorText(b.page), { timeout: 10_000 }).toBe(expected);

    // Each sees the other's caret, labelled with the other's name, on the line they type in.
    const caretLine = (page: Page, name: string) =>
      page.locator('.cm-line', { has: page.locator(`.cm-ySelectionInfo:text-is("${name}")`) }).textContent();
    await expect.poll(() => caretLine(a.page, 'bob'), { timeout: 10_000 }).toContain('bob writes here');
    await expect.poll(() => caretLine(b.page, 'alice'), { timeout: 10_000 }).toContain('(alice)');
    expect(await a.page.locator('.cm-ySelectionInfo').allInnerTexts()).toEqual(['bob']);
    // In the person's colour: the label and their chip in the presence bar match.
    const label = await style(a.page, '.cm-ySelectionInfo', 'backgroundColor');
    expect(label).toMatch(/^rgb\(/);
    expect(label).toBe(await style(a.page, '.presence .who[title^="bob"]', 'backgroundColor'));
    expect(label).not.toBe(await style(a.page, '.presence .who[title^="alice"]', 'backgroundColor'));
    // A selection shows as a highlight over the selected text.
    await b.page.keyboard.press('Shift+Home');
    await expect
      .poll(() => a.page.locator('.cm-ySelection').allInnerTexts(), { timeout: 10_000 })
      .toEqual(['bob writes here']);
    await artefact(a.page, 'editor-cursors-light');
    await artefact(b.page, 'editor-cursors-dark');

    // Undo is per person: alice's Ctrl-Z takes back her typing, never bob's.
    await a.page.keyboard.press('Control+z');
    const afterUndo = 'first line\nsecond line\nbob writes here';
    await expect.poll(() => editorText(a.page), { timeout: 10_000 }).toBe(afterUndo);
    await expect.poll(() => editorText(b.page), { timeout: 10_000 }).toBe(afterUndo);
    await expect.poll(() => serverText('cursors.md'), { timeout: 15_000 }).toBe(afterUndo);
    // Undo again has nothing of hers left to undo; bob's line stays.
    await a.page.keyboard.press('Control+z');
    await a.page.waitForTimeout(300);
    expect(await editorText(a.page)).toBe(afterUndo);
    // Redo brings hers back (a real keyboard sends "Z" with Shift); bob undoes his own.
    await a.page.keyboard.press('Control+Shift+Z');
    await b.page.keyboard.press('End');
    await b.page.keyboard.press('Control+z');
    await expect
      .poll(() => editorText(b.page), { timeout: 10_000 })
      .toBe('first line (alice)\nsecond line\n');
    await expect
      .poll(() => editorText(a.page), { timeout: 10_000 })
      .toBe('first line (alice)\nsecond line\n');
    expect([...a.errors, ...b.errors]).toEqual([]);
    await a.context.close();
    await b.context.close();
  });

  it('a cursor leaves with its person', async () => {
    await newFile('leave.md', 'text\n');
    const a = await editor('alice', 'leave.md');
    const b = await editor('bob', 'leave.md');
    await endOfLine(b.page, 1);
    await b.page.keyboard.type('!');
    await a.page.waitForSelector('.cm-ySelectionInfo:text-is("bob")');
    await b.context.close();
    await expect.poll(() => a.page.locator('.cm-ySelectionInfo').count(), { timeout: 10_000 }).toBe(0);
    await a.context.close();
  });
});

describe('Markdown keys', () => {
  it('lists continue on Enter and nest with Tab; bold, italic, link and heading keys', async () => {
    await newFile('keys.md', '');
    const a = await editor('alice', 'keys.md', { mode: 'edit' });
    await a.page.click('.cm-content');
    await a.page.keyboard.type('- one');
    await a.page.keyboard.press('Enter');
    await a.page.keyboard.type('two');
    await a.page.keyboard.press('Tab');
    await a.page.keyboard.press('Enter');
    await a.page.keyboard.type('three');
    await a.page.keyboard.press('Shift+Tab');
    // Enter on an empty item ends the list; one more for a blank line.
    await a.page.keyboard.press('Enter');
    await a.page.keyboard.press('Enter');
    await a.page.keyboard.press('Enter');
    await a.page.keyboard.type('Title');
    await a.page.keyboard.press('Control+Alt+2');
    await a.page.keyboard.press('Enter');
    await a.page.keyboard.press('Control+b');
    await a.page.keyboard.type('strong');
    await a.page.keyboard.press('End');
    await a.page.keyboard.type(' and ');
    await a.page.keyboard.press('Control+i');
    await a.page.keyboard.type('leaning');
    await a.page.keyboard.press('End');
    await a.page.keyboard.type(' and ');
    await a.page.keyboard.press('Control+k');
    await a.page.keyboard.type('https://example.com');
    await expect
      .poll(() => editorText(a.page))
      .toBe('- one\n  - two\n- three\n\n## Title\n**strong** and *leaning* and [](https://example.com)');
    await expect.poll(() => serverText('keys.md'), { timeout: 15_000 }).toContain('## Title');
    await a.context.close();
  });

  it('finds and replaces in the file (Ctrl-F), and wraps long lines', async () => {
    await newFile('find.md', `cat and cat and dog\n${'a long line that wraps '.repeat(20)}\n`);
    const a = await editor('alice', 'find.md', { mode: 'edit' });
    expect(await a.page.locator('.cm-editor .cm-lineWrapping').count()).toBe(1);
    const heights = (await a.page.evaluate(
      `[...document.querySelectorAll('.cm-line')].map((line) => line.offsetHeight)`,
    )) as number[];
    expect(heights[1]).toBeGreaterThan(heights[0]! * 2);
    await a.page.click('.cm-content');
    await a.page.keyboard.press('Control+f');
    await a.page.fill('.cm-search input[name="search"]', 'cat');
    await a.page.fill('.cm-search input[name="replace"]', 'bird');
    await a.page.click('.cm-search button[name="replaceAll"]');
    await expect.poll(() => serverText('find.md'), { timeout: 15_000 }).toMatch(/^bird and bird and dog\n/);
    await a.context.close();
  });

  it('pasting or dropping an image uploads it and puts its link where it went', async () => {
    await newFile('images.md', 'before\n\nafter\n');
    const a = await editor('alice', 'images.md', { mode: 'edit' });
    await endOfLine(a.page, 2);
    // A 1×1 PNG on the clipboard, as a screenshot tool puts it there.
    await a.page.evaluate(`(() => {
      const bytes = Uint8Array.from(atob('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='), (c) => c.charCodeAt(0));
      const data = new DataTransfer();
      data.items.add(new File([bytes], 'pasted dot.png', { type: 'image/png' }));
      document.querySelector('.cm-content').dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
    })()`);
    // On the empty line it was pasted into, as a line of its own.
    await expect
      .poll(() => editorText(a.page), { timeout: 10_000 })
      .toMatch(/^before\n!\[pasted dot\.png\]\(\/[^)]+\)\nafter\n$/);
    // Dropped on the last line: the link goes where it was dropped.
    const last = a.page.locator('.cm-line', { hasText: 'after' });
    const box = (await last.boundingBox())!;
    await a.page.evaluate(`(() => {
      const data = new DataTransfer();
      data.items.add(new File(['hello'], 'notes.txt', { type: 'text/plain' }));
      document.querySelector('.cm-content').dispatchEvent(new DragEvent('drop', {
        dataTransfer: data, bubbles: true, cancelable: true,
        clientX: ${box.x + box.width - 2}, clientY: ${box.y + box.height / 2},
      }));
    })()`);
    await expect
      .poll(() => editorText(a.page), { timeout: 10_000 })
      .toMatch(/\nafter\n\[notes\.txt\]\(\/[^)]+\)\n$/);
    // The links point at the uploads, which the server serves.
    await expect.poll(() => serverText('images.md'), { timeout: 15_000 }).toContain('[notes.txt](');
    const url = /\[notes\.txt\]\((\/[^)]+)\)/.exec(await serverText('images.md'))![1]!;
    const download = await admin.raw('GET', url);
    expect(download.status).toBe(200);
    expect(await download.text()).toBe('hello');
    expect(a.errors).toEqual([]);
    await a.context.close();
  });
});

describe('save state', () => {
  it('says offline with the changes queued while the server is unreachable, and saved only once it has them', async () => {
    await newFile('state.md', 'start\n');
    const a = await editor('alice', 'state.md');
    await a.page.waitForSelector('.save-state[data-state="saved"]');
    await a.context.setOffline(true);
    await endOfLine(a.page, 1);
    await a.page.keyboard.type('abc', { delay: 30 });
    await a.page.waitForSelector('.save-state:text-is("offline · 3 changes queued")', { timeout: 15_000 });
    expect(await serverText('state.md')).toBe('start\n');
    await a.context.setOffline(false);
    await a.page.waitForSelector('.save-state[data-state="saved"]', { timeout: 20_000 });
    expect(await serverText('state.md')).toBe('startabc\n');
    await a.context.close();
  });
});

describe('a long offline session', () => {
  it('goes out in requests the server accepts (one update may not pass 256 KB)', async () => {
    await newFile('bulk.md', 'start\n');
    const a = await editor('alice', 'bulk.md', { mode: 'edit' });
    await a.page.waitForSelector('.save-state[data-state="saved"]');
    await a.context.setOffline(true);
    await endOfLine(a.page, 1);
    // Three pastes of 100 KB each: 300 KB in all, more than one update may carry.
    for (const char of ['a', 'b', 'c']) {
      await a.page.evaluate(`(() => {
        const data = new DataTransfer();
        data.setData('text/plain', '\\n' + '${char}'.repeat(100000));
        document.querySelector('.cm-content').dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
      })()`);
    }
    await a.page.waitForSelector('.save-state[data-state="offline"]', { timeout: 15_000 });
    await a.context.setOffline(false);
    await a.page.waitForSelector('.save-state[data-state="saved"]', { timeout: 60_000 });
    const text = await serverText('bulk.md');
    expect(text).toBe(`start\n${'a'.repeat(100000)}\n${'b'.repeat(100000)}\n${'c'.repeat(100000)}\n`);
    expect(a.errors).toEqual([]);
    await a.context.close();
  });
});

describe('keyboard only', () => {
  it('Tab reaches the editor (a skip link first), Tab there indents, and Escape then Tab leaves it', async () => {
    await newFile('keyboard.md', '- item\n');
    const a = await editor('alice', 'keyboard.md', { mode: 'edit' });
    await a.page.evaluate('document.activeElement.blur()');
    const inEditor = () => a.page.evaluate('!!document.activeElement?.closest(".cm-editor")');
    // Past the top bar, the first stop is "Skip to the editor".
    let presses = 0;
    while ((await a.page.evaluate('document.activeElement?.textContent')) !== 'Skip to the editor') {
      await a.page.keyboard.press('Tab');
      expect(++presses, 'the skip link comes right after the top bar').toBeLessThan(15);
    }
    await a.page.keyboard.press('Enter');
    expect(await inEditor()).toBe(true);
    await a.page.keyboard.press('Control+End');
    await a.page.keyboard.type('- second');
    await a.page.keyboard.press('Tab');
    expect(await inEditor()).toBe(true);
    await a.page.keyboard.press('Escape');
    await a.page.keyboard.press('Tab');
    expect(await inEditor()).toBe(false);
    await expect.poll(() => serverText('keyboard.md'), { timeout: 15_000 }).toBe('- item\n  - second');
    // The editor names itself and points to the keyboard hint.
    const described = await a.page.getAttribute('.cm-content', 'aria-describedby');
    expect(await a.page.textContent(`#${described}`)).toContain('Escape');
    // The Keys button lists the editor's keys.
    await a.page.click('.keys-help summary');
    await a.page.waitForSelector('.keys-list dt');
    const keys = await a.page.textContent('.keys-list');
    for (const entry of ['Ctrl+B', 'bold', 'Ctrl+Alt+2', 'heading 2', 'Ctrl+F', 'find and replace']) {
      expect(keys).toContain(entry);
    }
    await a.context.close();
  });
});

describe('looks', () => {
  it('light, dark and phone screenshots of the note page (saved for a person to look at)', async () => {
    await newFile(
      'showcase.md',
      '# Release notes\n\nThe **editor** now shows *who* is typing where.\n\n- cursors with names\n- undo of your own edits\n\n```ts\nconst answer: number = 42;\n```\n\n> Quotes, [links](https://example.com) and `code`.\n',
    );
    const light = await editor('alice', 'showcase.md');
    const dark = await editor('bob', 'showcase.md', { dark: true });
    await endOfLine(dark.page, 3);
    await dark.page.keyboard.type(' Really.');
    await light.page.waitForSelector('.cm-ySelectionInfo:text-is("bob")');
    await light.page.waitForSelector('.preview h1:text-is("Release notes")');
    const darkBg = await style(dark.page, '.cm-editor', 'backgroundColor');
    expect(darkBg, 'the dark editor matches the dark page').toBe(
      await style(dark.page, 'body', 'backgroundColor'),
    );
    expect(darkBg).not.toBe(await style(light.page, '.cm-editor', 'backgroundColor'));
    await artefact(light.page, 'note-page-light');
    await artefact(dark.page, 'note-page-dark');
    const phone = await editor('alice', 'showcase.md', { phone: true, mode: 'edit' });
    expect(await phone.page.isVisible('.cm-gutters')).toBe(false);
    await phone.page.tap('.cm-content');
    await phone.page.keyboard.press('Control+End');
    await phone.page.keyboard.type('typed on a phone');
    await expect.poll(() => serverText('showcase.md'), { timeout: 15_000 }).toContain('typed on a phone');
    expect(await phone.page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await artefact(phone.page, 'note-page-phone');
    for (const each of [light, dark, phone]) {
      expect(each.errors).toEqual([]);
      await each.context.close();
    }
  });
});
