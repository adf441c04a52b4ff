// XSS payloads stay inert wherever user text is shown: the editor preview, the public page, file
// titles and search snippets (the chat is covered in chat.test.ts with the same payloads).
// "Inert" is checked twice: nothing runs (no dialog, no marker set) and the rendered DOM holds no
// script, frame, form, inline handler, style attribute or dangerous URL. The preview and the public
// page run once with the server's CSP and once with it stripped, so the sanitiser alone must hold.
// (CSP violation reports are not a signal here: Chromium reports handler attributes that DOMPurify's
// inert DOMParser document sees before it removes them, though nothing runs.)
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Api,
  launchChromium,
  loginPage,
  type NotesServer,
  screenshot,
  startNotes,
  watchedPage,
} from './harness.ts';
import { inertProblems, PAYLOADS } from './payloads.ts';

let server: NotesServer;
let browser: Browser;
let admin: Api;
let svgUrl = '';

beforeAll(async () => {
  server = await startNotes();
  browser = await launchChromium();
  admin = await Api.login(server.url, 'admin');
  await admin.call('POST', '/api/notes', { name: 'xss', public: true });
  const upload = await admin.raw(
    'POST',
    '/api/notes/xss/uploads?name=evil.svg',
    '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(\'svg-upload\')"><script>alert("svg-upload-script")</script></svg>',
    'image/svg+xml',
  );
  expect(upload.status).toBe(201);
  svgUrl = ((await upload.json()) as { url: string }).url;
  const content = `# Payloads\n\n${PAYLOADS}\n\n![svg-upload](${svgUrl})\n\n[svg-upload-link](${svgUrl})\n\nEND-OF-PAYLOADS\n`;
  await admin.call('POST', '/api/notes/xss/files', { name: 'payloads.md', content });
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

/** Removes the Content-Security-Policy header from HTML pages, leaving the sanitiser as the only guard. */
async function withoutCsp(context: BrowserContext): Promise<void> {
  await context.route(
    (url) => !url.pathname.startsWith('/api/'),
    async (route) => {
      if (route.request().resourceType() !== 'document') return route.continue();
      const response = await route.fetch();
      const headers = { ...response.headers() };
      delete headers['content-security-policy'];
      await route.fulfill({ response, headers });
    },
  );
}

async function settle(page: Page): Promise<void> {
  // Lazy Mermaid/KaTeX have rendered (or failed) and any stray timer would have fired.
  const noPendingDiagram = () =>
    !(globalThis as unknown as { document: { querySelector(s: string): unknown } }).document.querySelector(
      'pre.mermaid-src',
    );
  await page.waitForFunction(noPendingDiagram, undefined, { timeout: 30_000 });
  await page.waitForTimeout(500);
}

describe('XSS payloads stay inert', () => {
  it.each(['with', 'without'])('in the editor preview, %s the CSP', async (csp) => {
    const context = await browser.newContext();
    if (csp === 'without') await withoutCsp(context);
    const { page, dialogs, errors } = await watchedPage(context);
    await loginPage(page, server.url, 'alice');
    await page.goto(`${server.url}/#/n/xss/payloads.md`);
    await page.waitForSelector('.preview p:text("END-OF-PAYLOADS")');
    await settle(page);
    await screenshot(page, `xss-preview-${csp}-csp`);
    expect(await inertProblems(page, '.preview')).toEqual([]);
    // Clicking what is left of the links does nothing dangerous either. The HTML anchors survive
    // without their href; Markdown links with a bad scheme may stay plain text.
    const anchors = ['a-js', 'case', 'entity', 'hex-entity', 'tab', 'vbscript', 'data-link'];
    for (const label of [...anchors, 'md-js', 'md-js-entity', 'md-data', 'katex-link']) {
      const link = page.locator(`.preview a:text-is("${label}")`);
      if ((await link.count()) === 0 && !anchors.includes(label)) continue;
      await link.first().click();
    }
    await page.waitForTimeout(300);
    expect(page.url()).toContain('#/n/xss/payloads.md');
    expect(await page.locator('.preview img[alt="svg-upload"]').count()).toBe(1);
    expect(dialogs).toEqual([]);
    expect(errors.filter((e) => !/mermaid|Diagram|Parse error/i.test(e))).toEqual([]);
    await context.close();
  });

  it.each(['with', 'without'])('on the public page, %s the CSP', async (csp) => {
    const context = await browser.newContext();
    if (csp === 'without') await withoutCsp(context);
    const { page, dialogs } = await watchedPage(context);
    await page.goto(`${server.url}/notes/xss/payloads.md`);
    await page.waitForSelector('article p:text("END-OF-PAYLOADS")');
    await settle(page);
    await screenshot(page, `xss-public-${csp}-csp`);
    expect(await inertProblems(page, 'article.markdown')).toEqual([]);
    expect(dialogs).toEqual([]);
    await context.close();
  });

  it('an uploaded SVG with onload is never rendered as a document', async () => {
    const response = await fetch(`${server.url}${svgUrl}`);
    expect(response.headers.get('content-disposition')).toMatch(/^attachment/);
    expect(response.headers.get('content-security-policy')).toContain('sandbox');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    const context = await browser.newContext();
    const { page, dialogs } = await watchedPage(context);
    await page.goto(`${server.url}${svgUrl}`).catch(() => {}); // a download, not a page
    await page.waitForTimeout(300);
    expect(dialogs).toEqual([]);
    await context.close();
  });

  it('in file titles, the file list and search snippets', async () => {
    const evilName = '<img src=x onerror=alert(1)>.md';
    await admin.call('POST', '/api/notes/xss/files', {
      name: evilName,
      content: 'findme <img src=x onerror=alert(2)>',
    });
    const context = await browser.newContext();
    const { page, dialogs } = await watchedPage(context);
    await loginPage(page, server.url, 'alice');
    await page.goto(`${server.url}/#/n/xss/${encodeURIComponent(evilName)}`);
    await page.waitForSelector('.editor-host[data-ready="1"] .cm-content');
    expect(await page.textContent('.file-title')).toBe(evilName);
    expect(await inertProblems(page, '#crumbs, .file-list, .file-title')).toEqual([]);
    expect(await page.locator('.files img, .topbar img, .pane-head img').count()).toBe(0);
    await page.fill('input.search-box', 'findme');
    await page.press('input.search-box', 'Enter');
    await page.waitForSelector('.search-panel .snippet');
    expect(await page.locator('.search-panel img').count()).toBe(0);
    expect(await page.textContent('.search-panel')).toContain('<img src=x');
    expect(await inertProblems(page, '.search-panel .results')).toEqual([]);
    expect(dialogs).toEqual([]);
    await context.close();
  });
});
