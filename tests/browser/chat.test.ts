// The agent chat in Chromium against the scripted mock model: tokens stream into the note's chat
// for everyone watching, a tool call in confirm mode becomes an approval an admin answers in the
// browser, and the run finishes; chat text with XSS payloads stays inert.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MockLlm, startMockLlm } from '../helpers/mock-llm.ts';
import { tempDir } from '../helpers/rune.ts';
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

let mock: MockLlm;
let server: NotesServer;
let browser: Browser;
let admin: Api;
/** The chat's workspace: note N works in note-N under it. */
const workspace = tempDir('rune-chat-workspace-');
let roomId: number;

beforeAll(async () => {
  mock = await startMockLlm();
  server = await startNotes(
    `model = "mock-model"\nbase_url = "${mock.baseUrl}"\napi_key = "sk-test-browser"\n\n[policy]\nmode = "confirm"\n\n[notes]\nworkspace = "${workspace}"\n`,
  );
  browser = await launchChromium();
  admin = await Api.login(server.url, 'admin');
  roomId = ((await admin.call('POST', '/api/notes', { name: 'agent-room' })) as { id: number }).id;
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await mock?.close();
});

describe('agent chat', () => {
  it('streams the answer to everyone and asks an admin to approve a tool call', async () => {
    // write_file outside every allowed path: confirm mode asks instead of blocking.
    const target = join(tempDir('rune-approval-'), 'approved-run.txt');
    mock.script([
      { toolCalls: [{ name: 'write_file', arguments: { path: target, content: 'written after approval' } }] },
      { text: 'The tool wrote **approved-run**. All done.', chunkSize: 3, delay: 50 },
    ]);
    const adminContext = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const a = await watchedPage(adminContext);
    await loginPage(a.page, server.url, 'admin');
    await a.page.goto(`${server.url}/#/n/agent-room`);
    await a.page.waitForSelector('.chat-form');
    const userContext = await browser.newContext();
    const u = await watchedPage(userContext);
    await loginPage(u.page, server.url, 'alice');
    await u.page.goto(`${server.url}/#/n/agent-room`);
    await u.page.waitForSelector('.chat-form');

    await u.page.fill('.chat-input', 'Please write the file');
    await u.page.click('.chat-form button[type="submit"]');
    // Everyone in the note sees the question; only the admin gets the approval prompt.
    await a.page.waitForSelector('.msg.user:has-text("Please write the file")');
    await a.page.waitForSelector('.approval', { timeout: 30_000 });
    expect(await a.page.textContent('.approval')).toContain('write_file');
    expect(await a.page.textContent('.approval-args')).toContain(target);
    expect(await u.page.locator('.approval').count()).toBe(0);
    await u.page.waitForSelector('.msg.progress:has-text("write_file")');
    expect(existsSync(target)).toBe(false);
    await screenshot(a.page, 'chat-approval');
    await a.page.click('.approval button:text("Approve")');
    await a.page.waitForSelector('.approval', { state: 'detached' });
    // The final answer arrives in both browsers, rendered as Markdown.
    for (const page of [a.page, u.page]) {
      await page.waitForSelector('.msg.assistant strong:text("approved-run")', { timeout: 30_000 });
    }
    await u.page.waitForSelector('.chat-form button[type="submit"]:not([disabled])');
    await screenshot(u.page, 'chat-done');
    // The tool ran only after the approval, and the model saw its result.
    expect(readFileSync(target, 'utf8')).toBe('written after approval');
    // The outcome is shown once: the answer's reply and the approval.resolved event both carry it.
    expect(await a.page.locator('.approval-result').allTextContents()).toEqual([
      'write_file: approved once by admin',
    ]);
    expect(JSON.stringify(mock.requests.at(-1)?.body)).toContain('approved-run.txt');
    expect([...a.errors, ...u.errors]).toEqual([]);
    await adminContext.close();
    await userContext.close();
  });

  it('a denied tool call is reported and the run still ends', async () => {
    const target = join(tempDir('rune-denied-'), 'denied.txt');
    mock.script([
      { toolCalls: [{ name: 'write_file', arguments: { path: target, content: 'must not exist' } }] },
      { text: 'I was not allowed to write it.' },
    ]);
    const context = await browser.newContext();
    const { page } = await watchedPage(context);
    await loginPage(page, server.url, 'admin');
    await page.goto(`${server.url}/#/n/agent-room`);
    await page.fill('.chat-input', 'write something');
    await page.click('.chat-form button[type="submit"]');
    await page.waitForSelector('.approval', { timeout: 30_000 });
    await page.click('.approval button:text("Deny")');
    await page.waitForSelector('.msg.assistant:has-text("not allowed")', { timeout: 30_000 });
    expect(existsSync(target)).toBe(false);
    await page.waitForSelector('.msg.progress:has-text("denied")');
    await context.close();
  });

  // The approval grants what the question named: the redirect target outside the writable paths
  // joins the sandbox of that call (it ran with the folder read-only before), and each outcome is
  // shown once in the chat (the answer's reply and the event both carried it).
  it('an approved redirect write succeeds, a denied one does not, each outcome shown once', async () => {
    const folder = join(workspace, `note-${roomId}`);
    mock.script([
      { toolCalls: [{ name: 'execute_cmd', arguments: { cmd: 'echo approved > proof.txt' } }] },
      (request) => ({ text: `Result: ${JSON.stringify(request.body.messages.at(-1).content)}` }),
      { toolCalls: [{ name: 'execute_cmd', arguments: { cmd: 'echo denied > refused.txt' } }] },
      (request) => ({ text: `Refused: ${JSON.stringify(request.body.messages.at(-1).content)}` }),
    ]);
    const context = await browser.newContext();
    const { page, errors } = await watchedPage(context);
    await loginPage(page, server.url, 'admin');
    await page.goto(`${server.url}/#/n/agent-room`);
    await page.fill('.chat-input', 'write the proof');
    await page.click('.chat-form button[type="submit"]');
    await page.waitForSelector('.approval', { timeout: 30_000 });
    expect(await page.textContent('.approval-question')).toContain('Execute: echo approved > proof.txt');
    const grants = await page.locator('.approval-grants').allTextContents();
    const always = await page.locator('.approval button:text("Always allow")').count();
    await page.click('.approval button:text("Approve")');
    await page.waitForSelector('.msg.assistant:has-text("Result:")', { timeout: 30_000 });
    expect(await page.textContent('.msg.assistant:has-text("Result:")')).toContain('exit code: 0');
    expect(readFileSync(join(folder, 'proof.txt'), 'utf8')).toBe('approved\n');
    // The card said what approving allows, and that the command and its file can be allowed for good.
    expect(grants).toEqual([expect.stringContaining(`write ${join(folder, 'proof.txt')}`)]);
    expect(always).toBe(1);
    await page.waitForSelector('.chat-form button[type="submit"]:not([disabled])');

    await page.fill('.chat-input', 'and now the other one');
    await page.click('.chat-form button[type="submit"]');
    await page.waitForSelector('.approval', { timeout: 30_000 });
    await page.click('.approval button:text("Deny")');
    await page.waitForSelector('.msg.assistant:has-text("Refused:")', { timeout: 30_000 });
    expect(existsSync(join(folder, 'refused.txt'))).toBe(false);
    expect(await page.textContent('.msg.assistant:has-text("Refused:")')).toContain('the user declined');
    await page.waitForSelector('.chat-form button[type="submit"]:not([disabled])');
    const outcomes = await page.locator('.approval-result').allTextContents();
    expect(outcomes.filter((text) => text.includes('approved once'))).toHaveLength(1);
    expect(outcomes.filter((text) => text.includes('denied'))).toHaveLength(1);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('keeps XSS payloads in chat messages and streamed answers inert', async () => {
    mock.script([{ text: `Here you go:\n\n${PAYLOADS}\n\nEND-OF-CHAT`, chunkSize: 40 }]);
    const context = await browser.newContext();
    const { page, dialogs } = await watchedPage(context);
    await loginPage(page, server.url, 'alice');
    await page.goto(`${server.url}/#/n/agent-room`);
    await page.fill('.chat-input', `repeat these:\n${PAYLOADS}`);
    await page.click('.chat-form button[type="submit"]');
    await page.waitForSelector('.msg.assistant:has-text("END-OF-CHAT")', { timeout: 30_000 });
    await page.waitForTimeout(500);
    await screenshot(page, 'chat-xss');
    expect(await inertProblems(page, '.chat-log')).toEqual([]);
    expect(dialogs).toEqual([]);
    // After a reload the stored messages render the same way.
    await page.reload();
    await page.waitForSelector('.msg.assistant:has-text("END-OF-CHAT")');
    expect(await inertProblems(page, '.chat-log')).toEqual([]);
    expect(dialogs).toEqual([]);
    await context.close();
  });
});
