// The notes app in Chromium against the real binary: log in, notes and files through the UI,
// the editor's live preview and saving, revisions, search, guests' view, public pages.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Api,
  editorText,
  launchChromium,
  loginPage,
  type NotesServer,
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
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe('log in', () => {
  it('refuses a wrong password with a message, then logs in and out', async () => {
    const context = await browser.newContext();
    const { page, errors } = await watchedPage(context);
    await page.goto(`${server.url}/#/login`);
    await page.fill('input[name="username"]', 'alice');
    await page.fill('input[name="password"]', 'not-her-password');
    await page.click('form.login button[type="submit"]');
    await expect.poll(() => page.textContent('form.login .error')).toContain('Wrong name or password');
    await screenshot(page, 'login-error');
    await loginPage(page, server.url, 'alice');
    expect(await page.textContent('.badge.role-user')).toBe('user');
    await page.click('.me button:text("Log out")');
    await page.waitForSelector('form.login');
    expect(await page.locator('.me-name').count()).toBe(0);
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe('notes and files through the UI', () => {
  it('an admin creates a note and a file, writes Markdown, sees the preview, and it is saved', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const { page, errors, violations } = await watchedPage(context, true);
    await loginPage(page, server.url, 'admin');
    await page.fill('.inline-form input[name="name"]', 'Project Notes');
    await page.click('.inline-form button[type="submit"]');
    await page.waitForSelector('.note-title:text-is("Project Notes")');
    await page.fill('.new-file input[name="file"]', 'plan');
    await page.click('.new-file button[type="submit"]');
    await page.waitForSelector('.file-list li.active a:text-is("plan.md")');
    await page.waitForSelector('.editor-host[data-ready="1"] .cm-content');
    await page.click('.cm-content');
    await page.keyboard.type(
      '# The plan\n\nShip **rune** with `code`.\n\n```ts\nconst answer: number = 42;\n```\n',
    );
    await page.waitForSelector('.preview h1:text-is("The plan")');
    expect(await page.locator('.preview strong').textContent()).toBe('rune');
    expect(await page.locator('.preview code.hljs .hljs-keyword').count()).toBeGreaterThan(0);
    // The server saves after a quiet moment and announces the revision.
    await page.waitForSelector('.save-state:has-text("saved")', { timeout: 15_000 });
    const file = await admin.call('GET', `/api/notes/${encodeURIComponent('Project Notes')}/files/plan.md`);
    expect(file.content).toContain('Ship **rune** with `code`.');
    await screenshot(page, 'editor-split');
    // Reloading shows the stored text.
    await page.reload();
    await page.waitForSelector('.editor-host[data-ready="1"] .cm-content');
    expect(await editorText(page)).toContain('# The plan');
    expect(errors).toEqual([]);
    expect(violations).toEqual([]);
    await context.close();
  });

  it('renames and deletes a file, and restores it from the deleted files', async () => {
    await admin.call('POST', '/api/notes/Project Notes/files', { name: 'scratch.md', content: 'temporary' });
    const context = await browser.newContext();
    const watched = await watchedPage(context, true);
    const { page } = watched;
    await loginPage(page, server.url, 'alice');
    await page.goto(`${server.url}/#/n/Project%20Notes/scratch.md`);
    await page.waitForSelector('.editor-host[data-ready="1"] .cm-content');
    watched.promptAnswer = 'draft.md';
    await page.click('.file-list li[data-file="scratch.md"] button[aria-label^="Rename"]');
    await page.waitForSelector('.file-list li[data-file="draft.md"]');
    expect(page.url()).toContain('/draft.md');
    await page.click('.file-list li[data-file="draft.md"] button[aria-label^="Delete"]');
    await expect.poll(() => page.locator('.file-list li[data-file="draft.md"]').count()).toBe(0);
    await page.click('details.trash summary');
    await page.click('.trash li:has-text("draft.md") button:text("Restore")');
    await page.waitForSelector('.file-list li[data-file="draft.md"]');
    expect(watched.dialogs.map((d) => d.split(':')[0])).toEqual(['prompt', 'confirm']);
    await context.close();
  });

  it('lists revisions, shows a diff and restores an older revision', async () => {
    const note = 'Project Notes';
    const created = await admin.call('POST', `/api/notes/${note}/files`, {
      name: 'history.md',
      content: 'one\n',
    });
    const saved = await admin.call('PUT', `/api/notes/${note}/files/${created.id}`, {
      content: 'one\ntwo\n',
      base_revision: created.revision,
    });
    expect(saved.revision).toBe(created.revision + 1);
    const context = await browser.newContext();
    const { page } = await watchedPage(context, true);
    await loginPage(page, server.url, 'admin');
    await page.goto(`${server.url}/#/n/Project%20Notes/history.md`);
    await page.waitForSelector('.editor-host[data-ready="1"] .cm-content');
    await page.click('button:text("History")');
    await page.waitForSelector('.revisions li');
    expect(await page.locator('.revisions li').count()).toBe(2);
    await page.click('.revision-detail button:text("Diff")');
    await page.waitForSelector('pre.diff .diff-add:text("+two")');
    await screenshot(page, 'history-diff');
    await page.click(`.revisions li[data-rev="${created.revision}"] button`);
    await page.click('.revision-detail button:text("Restore this revision")');
    await expect
      .poll(async () => (await admin.call('GET', `/api/notes/${note}/files/history.md`)).content)
      .toBe('one\n');
    await expect.poll(() => editorText(page)).toBe('one\n');
    await context.close();
  });

  it('finds text with search and highlights the match as text', async () => {
    await admin.call('POST', '/api/notes/Project Notes/files', {
      name: 'search-me.md',
      content: 'The quokka <b>jumps</b> over the fence.',
    });
    const context = await browser.newContext();
    const { page, dialogs } = await watchedPage(context);
    await loginPage(page, server.url, 'alice');
    await page.fill('input.search-box', 'quokka');
    await page.press('input.search-box', 'Enter');
    await page.waitForSelector('.search-panel .snippet mark');
    expect(await page.locator('.search-panel .snippet mark').first().textContent()).toMatch(/quokka/i);
    // The snippet is text: the <b> in the file stays literal characters, never an element.
    expect(await page.locator('.search-panel .snippet b').count()).toBe(0);
    await page.click('.search-panel .results a');
    await page.waitForSelector('.file-list li.active[data-file="search-me.md"]');
    expect(dialogs).toEqual([]);
    await context.close();
  });
});

describe('guests', () => {
  beforeAll(async () => {
    await admin.call('POST', '/api/notes', { name: 'open-book', public: true });
    await admin.call('POST', '/api/notes/open-book/files', {
      name: 'welcome.md',
      content: '# Welcome guests',
    });
    await admin.call('POST', '/api/notes/open-book/files', {
      name: 'secret.md',
      content: 'internal only',
      public: false,
    });
    await admin.call('POST', '/api/notes', { name: 'vault', public: false });
    await admin.call('POST', '/api/notes/vault/files', { name: 'keys.md', content: 'private stuff' });
  });

  for (const who of ['anonymous', 'gus'] as const) {
    it(`${who} sees only public notes and public files`, async () => {
      const context = await browser.newContext();
      const { page, errors } = await watchedPage(context);
      if (who === 'gus') await loginPage(page, server.url, 'gus');
      else await page.goto(`${server.url}/`);
      await page.waitForSelector('.note-list li[data-note="open-book"]');
      expect(await page.locator('.note-list li[data-note="vault"]').count()).toBe(0);
      expect(await page.locator('.note-list li[data-note="Project Notes"]').count()).toBe(0);
      await page.click('.note-list a:text-is("open-book")');
      await page.waitForSelector('.file-list li[data-file="welcome.md"]');
      expect(await page.locator('.file-list li[data-file="secret.md"]').count()).toBe(0);
      await page.waitForSelector('.preview h1:text-is("Welcome guests")');
      // Read-only: no editing, no new files, no chat box.
      expect(await page.locator('.new-file').count()).toBe(0);
      expect(await page.locator('.chat-form').count()).toBe(0);
      await screenshot(page, `guest-${who}`);
      await page.goto(`${server.url}/#/n/vault`);
      await page.waitForSelector('h1:text-is("Not found")');
      expect(await page.textContent('#view')).not.toContain('private stuff');
      // The public pages hold the same line.
      const index = await page.goto(`${server.url}/notes/`);
      expect(index?.status()).toBe(200);
      await page.waitForSelector('body[data-ready="1"]');
      expect(await page.locator('a:text-is("open-book")').count()).toBe(1);
      expect(await page.locator('a:text-is("vault")').count()).toBe(0);
      expect((await page.goto(`${server.url}/notes/vault/`))?.status()).toBe(404);
      expect((await page.goto(`${server.url}/notes/open-book/secret.md`))?.status()).toBe(404);
      expect(errors).toEqual([]);
      await context.close();
    });
  }
});

describe('public pages', () => {
  it('render highlighted code, a Mermaid diagram and math with the sanitising renderer', async () => {
    await admin.call('POST', '/api/notes', { name: 'showcase', public: true });
    await admin.call('POST', '/api/notes/showcase/files', {
      name: 'diagram.md',
      content: [
        '# Showcase',
        '',
        '```python',
        'def greet(name):',
        '    return f"hi {name}"',
        '```',
        '',
        '```mermaid',
        'graph TD',
        '  A[Write] --> B{Review}',
        '  B -->|ok| C[Ship]',
        '```',
        '',
        'Energy: $E = mc^2$',
        '',
        '$$\\int_0^1 x^2\\,dx = \\frac{1}{3}$$',
        '',
        '[next](other.md)',
      ].join('\n'),
    });
    const context = await browser.newContext();
    const { page, errors, violations, dialogs } = await watchedPage(context);
    const response = await page.goto(`${server.url}/notes/showcase/diagram.md`);
    expect(response?.headers()['content-security-policy']).toContain("script-src 'self'");
    await page.waitForSelector('article.markdown h1:text-is("Showcase")');
    await page.waitForSelector('figure.mermaid svg', { timeout: 30_000 });
    expect(await page.locator('figure.mermaid svg').textContent()).toContain('Review');
    expect(await page.locator('code.hljs.language-python .hljs-keyword').first().textContent()).toBe('def');
    await page.waitForSelector('.math-inline .katex');
    expect(await page.locator('.math-display .katex-display').count()).toBe(1);
    expect(await page.getAttribute('article a:text("next")', 'href')).toBe('other.md');
    await screenshot(page, 'public-showcase');
    expect(errors).toEqual([]);
    expect(dialogs).toEqual([]);
    expect(violations.filter((v) => v.startsWith('script'))).toEqual([]);
    await context.close();
  });
});

describe('phone-sized screen', () => {
  it('shows one pane at a time with a tab bar', async () => {
    const context = await browser.newContext({
      viewport: { width: 390, height: 844 },
      isMobile: true,
      hasTouch: true,
    });
    const { page } = await watchedPage(context);
    await loginPage(page, server.url, 'alice');
    await page.goto(`${server.url}/#/n/Project%20Notes/plan.md`);
    await page.waitForSelector('.editor-host[data-ready="1"] .cm-content');
    expect(await page.isVisible('.mobile-tabs')).toBe(true);
    expect(await page.isVisible('.chat')).toBe(false);
    await screenshot(page, 'phone-editor');
    await page.click('.mobile-tabs button[data-pane="chat"]');
    expect(await page.isVisible('.chat')).toBe(true);
    expect(await page.isVisible('.editor')).toBe(false);
    await page.click('.mobile-tabs button[data-pane="files"]');
    expect(await page.isVisible('.file-list')).toBe(true);
    await screenshot(page, 'phone-files');
    const width = await page.evaluate('document.documentElement.scrollWidth');
    expect(width).toBeLessThanOrEqual(390);
    await context.close();
  });
});
