// The admin's Tokens view in Chromium against the real binary: a token created in the UI works as
// a bearer token, revoking it in the UI stops it (401), names are shown as text, and users never
// see the view.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  launchChromium,
  loginPage,
  type NotesServer,
  screenshot,
  startNotes,
  watchedPage,
} from './harness.ts';

let server: NotesServer;
let browser: Browser;

beforeAll(async () => {
  server = await startNotes();
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const me = (base: string, token: string) =>
  fetch(`${base}/api/me`, { headers: { Authorization: `Bearer ${token}`, Accept: 'application/json' } });

describe('tokens view', () => {
  it('an admin creates a token (secret shown once, copyable), it works as a bearer, revoking it gives 401', async () => {
    const context = await browser.newContext();
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
    const watched = await watchedPage(context, true);
    const { page, errors, violations } = watched;
    await loginPage(page, server.url, 'admin');
    await page.click('.home-head a:text-is("Tokens")');
    await page.waitForSelector('form.token-form');
    // A name that would be markup if it were ever put in as HTML.
    const name = 'ci <img src=x onerror="alert(1)">';
    await page.fill('input[name="token-name"]', name);
    await page.selectOption('select[name="token-role"]', 'user');
    await page.click('form.token-form button[type="submit"]');
    await page.waitForSelector('.token-created');
    expect(await page.textContent('.token-created')).toContain('you will not see it again');
    const secret = await page.inputValue('input.token-secret');
    expect(secret).toMatch(/^rune_\S{16,}$/);
    await page.click('button.copy-token');
    await page.waitForSelector('.token-created .copied:text-is("Copied.")');
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(secret);
    await screenshot(page, 'tokens-created');

    const ok = await me(server.url, secret);
    expect(ok.status).toBe(200);
    const body = (await ok.json()) as { role: string; user: { name: string; provider: string } | null };
    expect(body.role).toBe('user');
    expect(body.user?.provider).toBe('token');

    // The list shows the name as text, its role, and that it has now been used.
    await page.reload();
    await page.waitForSelector('.token-list li[data-token]');
    expect(await page.locator('.token-created').count()).toBe(0);
    expect(await page.locator('input.token-secret').count()).toBe(0);
    expect(await page.content()).not.toContain(secret);
    const item = page.locator('.token-list li[data-token]');
    expect(await item.locator('.token-name').textContent()).toBe(name);
    expect(await item.locator('img').count()).toBe(0);
    expect(await item.locator('.badge').textContent()).toBe('user');
    expect(await item.locator('.last-used').textContent()).toContain('last used');
    expect(await item.locator('.expires').textContent()).toBe('no expiry');

    await item.locator('button:text("Revoke")').click();
    await expect.poll(() => page.locator('.token-list li[data-token]').count()).toBe(0);
    expect((await me(server.url, secret)).status).toBe(401);
    expect(watched.dialogs).toHaveLength(1);
    expect(watched.dialogs[0]).toMatch(/^confirm: Revoke the token/);
    expect(errors).toEqual([]);
    expect(violations).toEqual([]);
    await context.close();
  });

  it('dismissing the revoke confirmation keeps the token working', async () => {
    const context = await browser.newContext();
    const watched = await watchedPage(context, false);
    const { page } = watched;
    await loginPage(page, server.url, 'admin');
    await page.goto(`${server.url}/#/tokens`);
    await page.fill('input[name="token-name"]', 'kept');
    await page.selectOption('select[name="token-role"]', 'guest');
    await page.fill('input[name="token-days"]', '30');
    await page.click('form.token-form button[type="submit"]');
    await page.waitForSelector('.token-created');
    const secret = await page.inputValue('input.token-secret');
    expect(await page.textContent('.token-list li:has-text("kept") .expires')).toMatch(/^expires /);
    await page.click('.token-list li:has-text("kept") button:text("Revoke")');
    await expect.poll(() => watched.dialogs.length).toBe(1);
    expect(await page.locator('.token-list li:has-text("kept")').count()).toBe(1);
    const response = await me(server.url, secret);
    expect(response.status).toBe(200);
    expect(((await response.json()) as { role: string }).role).toBe('guest');
    await context.close();
  });

  it('a user sees no Tokens link and no token view', async () => {
    const context = await browser.newContext();
    const { page, errors } = await watchedPage(context);
    await loginPage(page, server.url, 'alice');
    await page.waitForSelector('.home-head h1');
    expect(await page.locator('a[href="#/tokens"]').count()).toBe(0);
    await page.goto(`${server.url}/#/tokens`);
    await page.waitForSelector('h1:text-is("Not allowed")');
    expect(await page.locator('form.token-form').count()).toBe(0);
    expect(await page.locator('.token-list').count()).toBe(0);
    expect(errors).toEqual([]);
    await context.close();
  });
});
