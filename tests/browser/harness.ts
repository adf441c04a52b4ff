// Browser-test harness: the real built binary as `rune notes` in a temp RUNE_HOME, Debian's
// Chromium through playwright-core (never a downloaded browser), and a small API client for setup.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { logIn, startNotesProcess } from '../helpers/notes.ts';
import { cleanEnv, tempDir } from '../helpers/rune.ts';

export const CHROMIUM = '/usr/bin/chromium';

/** A fresh headless Chromium; playwright gives every launch its own new --user-data-dir. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

export const PASSWORDS = {
  admin: 'admin-pass-1',
  alice: 'alice-pass-1',
  bob: 'bob-pass-1',
  gus: 'gus-pass-1',
};

export interface NotesServer {
  url: string;
  home: string;
  stderr(): string;
  stop(): Promise<void>;
}

/** Starts `rune notes` with admin/alice/bob/gus accounts; `extraToml` is appended to rune.toml. */
export async function startNotes(extraToml = ''): Promise<NotesServer> {
  const home = tempDir('rune-notes-web-');
  mkdirSync(join(home, 'home'), { recursive: true });
  writeFileSync(
    join(home, 'rune.toml'),
    `${extraToml}\n[notes.local]\nadmins = ["admin:${PASSWORDS.admin}"]\nusers = ["alice:${PASSWORDS.alice}", "bob:${PASSWORDS.bob}"]\nguests = ["gus:${PASSWORDS.gus}"]\n`,
  );
  const notes = await startNotesProcess({
    home,
    args: ['--bind', '127.0.0.1'],
    env: cleanEnv(join(home, 'home')),
  });
  return { url: notes.url, home, stderr: notes.stderr, stop: notes.stop };
}

/** A logged-in API client for setting up data (cookie + CSRF token, same-origin headers). */
export class Api {
  private cookie = '';
  private csrf = '';
  constructor(private readonly base: string) {}

  static async login(base: string, name: keyof typeof PASSWORDS): Promise<Api> {
    const client = new Api(base);
    ({ cookie: client.cookie, csrf: client.csrf } = await logIn(base, name, PASSWORDS[name]));
    return client;
  }

  async raw(
    method: string,
    path: string,
    body?: string | Uint8Array,
    contentType = 'application/json',
  ): Promise<Response> {
    return fetch(`${this.base}${path}`, {
      method,
      headers: {
        Cookie: this.cookie,
        'X-CSRF-Token': this.csrf,
        Origin: this.base,
        Accept: 'application/json',
        ...(body === undefined ? {} : { 'Content-Type': contentType }),
      },
      ...(body === undefined ? {} : { body }),
    });
  }

  // biome-ignore lint/suspicious/noExplicitAny: test setup reads loosely typed JSON
  async call(method: string, path: string, body?: unknown): Promise<any> {
    const response = await this.raw(method, path, body === undefined ? undefined : JSON.stringify(body));
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return text ? JSON.parse(text) : {};
  }
}

export interface Watched {
  page: Page;
  dialogs: string[];
  errors: string[];
  violations: string[];
  /** The answer the next prompt() gets (then cleared); confirm() is accepted when acceptDialogs. */
  promptAnswer?: string;
}

/**
 * A page that records every dialog (then dismisses it), every uncaught error, and every CSP
 * violation: an XSS that got past the sanitiser shows up in one of them even when it fails.
 */
export async function watchedPage(context: BrowserContext, acceptDialogs = false): Promise<Watched> {
  const page = await context.newPage();
  const watched: Watched = { page, dialogs: [], errors: [], violations: [] };
  page.on('dialog', (dialog) => {
    watched.dialogs.push(`${dialog.type()}: ${dialog.message()}`);
    if (dialog.type() === 'prompt' && watched.promptAnswer !== undefined) {
      void dialog.accept(watched.promptAnswer);
      watched.promptAnswer = undefined;
    } else {
      void (acceptDialogs ? dialog.accept() : dialog.dismiss());
    }
  });
  page.on('pageerror', (error) => watched.errors.push(error.message));
  await page.exposeFunction('__cspViolation', (text: string) => watched.violations.push(text));
  // A string, not a function: the test tsconfig has no DOM types.
  await page.addInitScript({
    content: `document.addEventListener('securitypolicyviolation', (e) =>
      window.__cspViolation(e.violatedDirective + ' ' + e.blockedURI + ' ' + (e.sample || '')));`,
  });
  return watched;
}

export async function loginPage(page: Page, base: string, name: keyof typeof PASSWORDS): Promise<void> {
  await page.goto(`${base}/#/login`);
  await page.fill('input[name="username"]', name);
  await page.fill('input[name="password"]', PASSWORDS[name]);
  await page.click('form.login button[type="submit"]');
  await page.waitForSelector(`.me-name:text-is("${name}")`);
}

export const shots = process.env.RUNE_SCREENSHOTS ?? '';

/** Saves a screenshot when RUNE_SCREENSHOTS names a folder (for looking at the UI). */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (!shots) return;
  mkdirSync(shots, { recursive: true });
  await page.screenshot({ path: join(shots, `${name}.png`), fullPage: false });
}

/**
 * Screenshots meant for a person to look at (not compared pixel by pixel): always saved, in
 * RUNE_SCREENSHOTS or else test-artifacts/screenshots/ (gitignored); the path is printed.
 */
export const artefacts =
  process.env.RUNE_SCREENSHOTS ||
  join(dirname(fileURLToPath(import.meta.url)), '../../test-artifacts/screenshots');

export async function artefact(page: Page, name: string): Promise<string> {
  mkdirSync(artefacts, { recursive: true });
  const path = join(artefacts, `${name}.png`);
  await page.screenshot({ path, fullPage: false });
  console.log(`screenshot: ${path}`);
  return path;
}

/** Opens a file of a note in the editor and waits until it is bound to the live document. */
export async function openEditor(page: Page, base: string, note: string, file: string): Promise<void> {
  await page.goto(`${base}/#/n/${encodeURIComponent(note)}/${encodeURIComponent(file)}`);
  await page.waitForSelector('.editor-host[data-ready="1"] .cm-content');
}

/**
 * The text the editor shows (all of it, for files short enough to be on screen): its lines
 * without the other people's carets and name labels drawn between the characters.
 */
export function editorText(page: Page): Promise<string> {
  // A string, not a function: the test tsconfig has no DOM types.
  return page.evaluate(`[...document.querySelectorAll('.editor-host .cm-content > .cm-line')]
    .map((line) => {
      const copy = line.cloneNode(true);
      for (const drawn of copy.querySelectorAll('.cm-ySelectionCaret, .cm-widgetBuffer, .cm-placeholder')) drawn.remove();
      return copy.textContent.replace(/\u2060/g, '');
    })
    .join('\\n')`) as Promise<string>;
}
