// Real-time collaboration in Chromium: two browser contexts (two users) typing into the same file
// at the same moment converge to one text that holds everything both typed; presence shows both;
// an editor that loses its connection keeps its edits and merges them when it comes back.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Api,
  editorText,
  launchChromium,
  loginPage,
  type NotesServer,
  openEditor,
  screenshot,
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
  await admin.call('POST', '/api/notes', { name: 'pad' });
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

async function editor(
  name: 'alice' | 'bob',
  file: string,
): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1200, height: 800 } });
  const { page, errors } = await watchedPage(context);
  await loginPage(page, server.url, name);
  await openEditor(page, server.url, 'pad', file);
  await page.click('.cm-content');
  return { context, page, errors };
}

const text = editorText;

describe('two editors at once', () => {
  it('typing at the same time in different places converges with no lost text', async () => {
    await admin.call('POST', '/api/notes/pad/files', { name: 'shared.md', content: 'middle line\n' });
    const a = await editor('alice', 'shared.md');
    const b = await editor('bob', 'shared.md');
    await a.page.keyboard.press('Control+End');
    await b.page.keyboard.press('Control+Home');
    const typedA = 'alice adds this sentence at the end. ';
    const typedB = 'bob writes this at the start. ';
    await Promise.all([
      a.page.keyboard.type(typedA, { delay: 12 }),
      b.page.keyboard.type(typedB, { delay: 12 }),
    ]);
    await expect
      .poll(async () => (await text(a.page)) === (await text(b.page)), { timeout: 10_000 })
      .toBe(true);
    const merged = await text(a.page);
    expect(merged).toBe(`${typedB}middle line\n${typedA}`);
    // Both see each other.
    await a.page.waitForSelector('.presence .who[title^="bob"]');
    await b.page.waitForSelector('.presence .who[title^="alice"]');
    await screenshot(a.page, 'collab-alice');
    // The server saves the merged text as a revision.
    await expect
      .poll(async () => (await admin.call('GET', '/api/notes/pad/files/shared.md')).content, {
        timeout: 15_000,
      })
      .toBe(merged);
    await a.page.waitForSelector('.save-state:has-text("saved")', { timeout: 15_000 });
    expect([...a.errors, ...b.errors]).toEqual([]);
    await a.context.close();
    await b.context.close();
  });

  it('typing at the same place at the same time keeps every character of both', async () => {
    await admin.call('POST', '/api/notes/pad/files', { name: 'race.md', content: '' });
    const a = await editor('alice', 'race.md');
    const b = await editor('bob', 'race.md');
    const typedA = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
    const typedB = 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';
    await Promise.all([
      a.page.keyboard.type(typedA, { delay: 8 }),
      b.page.keyboard.type(typedB, { delay: 8 }),
    ]);
    await expect
      .poll(async () => (await text(a.page)) === (await text(b.page)), { timeout: 10_000 })
      .toBe(true);
    const merged = await text(a.page);
    expect(merged.length).toBe(typedA.length + typedB.length);
    expect(merged.replace(/b/g, '')).toBe(typedA);
    expect(merged.replace(/a/g, '')).toBe(typedB);
    await a.context.close();
    await b.context.close();
  });

  it('shows who is typing', async () => {
    await admin.call('POST', '/api/notes/pad/files', { name: 'typing.md', content: '' });
    const a = await editor('alice', 'typing.md');
    const b = await editor('bob', 'typing.md');
    await b.page.keyboard.type('hello', { delay: 20 });
    await a.page.waitForSelector('.typing:has-text("bob is typing")');
    await a.context.close();
    await b.context.close();
  });

  it('edits made while offline are merged after the connection comes back', async () => {
    await admin.call('POST', '/api/notes/pad/files', { name: 'offline.md', content: 'base\n' });
    const a = await editor('alice', 'offline.md');
    const b = await editor('bob', 'offline.md');
    await a.context.setOffline(true);
    await a.page.keyboard.press('Control+End');
    await a.page.keyboard.type('written offline');
    await b.page.keyboard.press('Control+Home');
    await b.page.keyboard.type('online edit ');
    await expect.poll(() => text(b.page)).toBe('online edit base\n');
    await a.context.setOffline(false);
    const expected = 'online edit base\nwritten offline';
    await expect.poll(() => text(b.page), { timeout: 20_000 }).toBe(expected);
    await expect.poll(() => text(a.page), { timeout: 20_000 }).toBe(expected);
    await a.context.close();
    await b.context.close();
  });

  it("a tab is sent only its open file's typing, and keeps in step with the file it switches to", async () => {
    await admin.call('POST', '/api/notes/pad/files', { name: 'mine.md', content: 'mine\n' });
    await admin.call('POST', '/api/notes/pad/files', { name: 'theirs.md', content: 'theirs\n' });
    const theirs = (await admin.call('GET', '/api/notes/pad/files/theirs.md')).id as number;
    const context = await browser.newContext({ viewport: { width: 1200, height: 800 } });
    // What alice's stream delivers, and when her tab last fetched its file's state after the stream
    // joined the note (from then on the stream follows that file). A string: no DOM types here.
    await context.addInitScript(`
      window.__seen = { files: [], hello: 0, followed: 0 };
      const add = EventSource.prototype.addEventListener;
      EventSource.prototype.addEventListener = function (type, listener, options) {
        const wrapped = (event) => {
          if (type === 'hello') window.__seen.hello = performance.now();
          if (type === 'collab.update') window.__seen.files.push(JSON.parse(event.data).file_id);
          return listener.call(this, event);
        };
        return add.call(this, type, wrapped, options);
      };
      const fetch0 = window.fetch;
      window.fetch = async function (input, init) {
        const started = performance.now();
        const res = await fetch0.call(this, input, init);
        if (String(input).includes('/collab?client_id=') && window.__seen.hello && started > window.__seen.hello)
          window.__seen.followed++;
        return res;
      };`);
    const { page, errors } = await watchedPage(context);
    await loginPage(page, server.url, 'alice');
    await openEditor(page, server.url, 'pad', 'mine.md');
    const seen = () => page.evaluate('window.__seen') as Promise<{ files: number[]; followed: number }>;
    await expect.poll(async () => (await seen()).followed, { timeout: 10_000 }).toBeGreaterThan(0);
    const b = await editor('bob', 'theirs.md');
    await b.page.keyboard.press('Control+End');
    await b.page.keyboard.type('bob was here. ', { delay: 10 });
    await expect
      .poll(async () => (await admin.call('GET', '/api/notes/pad/files/theirs.md/collab')).text, {
        timeout: 10_000,
      })
      .toBe('theirs\nbob was here. ');
    expect((await seen()).files).not.toContain(theirs);
    // Alice opens bob's file: she sees what he typed, and what he types from now on, live.
    await page.evaluate(`location.hash = '#/n/pad/theirs.md'`);
    await expect.poll(() => text(page), { timeout: 10_000 }).toBe('theirs\nbob was here. ');
    await b.page.keyboard.type('and still is.', { delay: 10 });
    await expect.poll(() => text(page), { timeout: 10_000 }).toBe('theirs\nbob was here. and still is.');
    expect((await seen()).files).toContain(theirs);
    // And what she types there reaches him.
    await page.click('.cm-content');
    await page.keyboard.press('Control+Home');
    await page.keyboard.type('alice: ', { delay: 10 });
    await expect
      .poll(() => text(b.page), { timeout: 10_000 })
      .toBe('alice: theirs\nbob was here. and still is.');
    expect([...errors, ...b.errors]).toEqual([]);
    await context.close();
    await b.context.close();
  });
});
