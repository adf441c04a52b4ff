// A note's content cannot style the app: classes the app's own stylesheet uses (`overlay`, `panel`,
// `toast`…), an open <dialog> and popovers in a note's HTML would paint a full-screen fake "session
// expired" dialog over the page. Rendered in the editor preview and on the public page, the content
// keeps only the classes the renderer gives (code highlighting, math, diagrams), and nothing of it
// is drawn outside the content's own box.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api, launchChromium, loginPage, type NotesServer, startNotes, watchedPage } from './harness.ts';

let server: NotesServer;
let browser: Browser;

const FAKE = [
  '# Notes',
  '',
  '<div class="overlay"><div class="panel card login"><h1>Session expired</h1><p>Sign in again to continue.</p></div></div>',
  '',
  '<dialog open class="overlay">Your session expired</dialog>',
  '',
  '<div popover="manual" class="toast error">Session expired</div>',
  '',
  '<div class="topbar workspace mode-split">chrome</div>',
  '',
  '```js',
  'const kept = true;',
  '```',
  '',
  'END-OF-CONTENT',
].join('\n');

beforeAll(async () => {
  server = await startNotes();
  browser = await launchChromium();
  const admin = await Api.login(server.url, 'admin');
  await admin.call('POST', '/api/notes', { name: 'styles', public: true });
  await admin.call('POST', '/api/notes/styles/files', { name: 'fake.md', content: FAKE });
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

interface Styling {
  classes: string[];
  escaping: string[];
  dialogs: number;
  popovers: number;
}

/**
 * Classes of everything inside the elements `roots` selects, what of it is drawn fixed or absolute
 * (over the page), and dialogs and popovers, as the page has them (run in the page).
 */
async function styling(page: Page, roots: string): Promise<Styling> {
  return page.evaluate(`(() => {
    const containers = [...document.querySelectorAll(${JSON.stringify(roots)})];
    if (containers.length === 0) throw new Error('no ${roots}');
    const classes = new Set();
    const escaping = [];
    let dialogs = 0;
    let popovers = 0;
    for (const container of containers) {
      for (const el of container.querySelectorAll('*')) {
        for (const name of el.classList) classes.add(name);
        const position = getComputedStyle(el).position;
        if (position === 'fixed' || position === 'absolute') escaping.push(el.tagName + ' ' + position);
        if (el.tagName === 'DIALOG') dialogs++;
        if (el.hasAttribute('popover')) popovers++;
      }
    }
    return { classes: [...classes].sort(), escaping, dialogs, popovers };
  })()`) as Promise<Styling>;
}

function expectContained(found: Styling) {
  // Only what the renderer gives: highlight.js and its language class.
  expect(
    found.classes.every((c) => /^(hljs(-.+)?|language-.+|[a-z]+_)$/.test(c)),
    found.classes.join(' '),
  ).toBe(true);
  expect(found.classes).toContain('hljs');
  expect(found.escaping).toEqual([]);
  expect(found.dialogs).toBe(0);
  expect(found.popovers).toBe(0);
}

describe("a note's content cannot style the app", () => {
  it('on the public page', async () => {
    const context = await browser.newContext();
    const { page } = await watchedPage(context);
    await page.goto(`${server.url}/notes/styles/fake.md`);
    await page.waitForSelector('article p:text("END-OF-CONTENT")');
    expectContained(await styling(page, 'article.markdown'));
    await context.close();
  });

  it('in the editor preview', async () => {
    const context = await browser.newContext();
    const { page } = await watchedPage(context);
    await loginPage(page, server.url, 'alice');
    await page.goto(`${server.url}/#/n/styles/fake.md`);
    await page.waitForSelector('.preview p:text("END-OF-CONTENT")');
    // The preview's own blocks wrap the content: what is inside them is the note's.
    expectContained(await styling(page, '.preview .md-block'));
    // The app's own overlay (none is open) is not there either.
    expect(await page.locator('.overlay').count()).toBe(0);
    await context.close();
  });
});
