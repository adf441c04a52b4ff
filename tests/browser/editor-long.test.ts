// A 10,000-line file in the editor, in Chromium against the real server: it opens, every keystroke
// (at the end, at the start, in the middle) costs at most 16 ms of main-thread time, measured in
// the page with the Event Timing API (the time the page's handlers ran for each key event), and
// the preview stays in step: what was typed shows up there, and it scrolls with the editor.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Api,
  artefact,
  launchChromium,
  loginPage,
  type NotesServer,
  openEditor,
  startNotes,
  watchedPage,
} from './harness.ts';

/** The bound the issue sets: main-thread time of one keystroke. */
const KEYSTROKE_MS = 16;
const LINES = 10_000;

let server: NotesServer;
let browser: Browser;
let admin: Api;

/** A long note of the usual kinds of blocks; every line carries the number of its group. */
function longNote(lines: number): string {
  const out: string[] = [];
  for (let i = 0; out.length < lines; i++) {
    const kind = i % 12;
    if (kind === 0) out.push(`## Section ${i}`, '');
    else if (kind < 4)
      out.push(
        `Paragraph ${i} with *emphasis*, **bold**, \`code\` and a [link](https://example.com/${i}).`,
        '',
      );
    else if (kind < 7) out.push(`- item ${i}`, `- item ${i} continued`, '');
    else if (kind === 7)
      out.push('```ts', `const value${i}: number = ${i};`, `console.log(value${i});`, '```', '');
    else out.push(`Line ${i} of plain prose, long enough to wrap when the editor pane is narrow.`);
  }
  return `${out.slice(0, lines).join('\n')}\n`;
}

beforeAll(async () => {
  server = await startNotes();
  browser = await launchChromium();
  admin = await Api.login(server.url, 'admin');
  await admin.call('POST', '/api/notes', { name: 'big' });
  await admin.call('POST', '/api/notes/big/files', { name: 'long.md', content: longNote(LINES) });
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

/**
 * Records, in the page, when each keystroke started (capture-phase keydown) and every Event Timing
 * entry of key and input events. The browser reports an event only when it took 16 ms or more
 * from its start to the next paint; an unreported event therefore ran its handlers in less.
 */
async function watchKeystrokes(page: Page): Promise<void> {
  await page.evaluate(`(() => {
    window.__keys = [];
    window.__events = [];
    addEventListener('keydown', (event) => window.__keys.push(event.timeStamp), true);
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        if (/^(key|beforeinput|input|textInput)/.test(e.name)) {
          window.__events.push({ name: e.name, start: e.startTime, handlers: e.processingEnd - e.processingStart });
        }
      }
    }).observe({ type: 'event', durationThreshold: 16 });
  })()`);
}

/** Main-thread time of each keystroke so far: its key and input events' handler time, summed. */
async function keystrokeTimes(page: Page): Promise<number[]> {
  // Event Timing entries arrive after the paint that follows the event.
  await page.evaluate('new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 100)))');
  const { keys, events } = (await page.evaluate('({ keys: window.__keys, events: window.__events })')) as {
    keys: number[];
    events: Array<{ name: string; start: number; handlers: number }>;
  };
  return keys.map((start, i) => {
    const end = keys[i + 1] ?? Number.POSITIVE_INFINITY;
    return events
      .filter((event) => event.start >= start - 0.5 && event.start < end - 0.5)
      .reduce((sum, event) => sum + event.handlers, 0);
  });
}

/**
 * Types `text` one key at a time and returns the slowest keystroke's main-thread time. A keystroke
 * over budget is taken back and typed again (up to three times): Chromium preempted by other
 * processes on a loaded machine shows as one slow keystroke, a slow editor as every one.
 */
async function typeMeasured(page: Page, text: string): Promise<{ slowest: number; all: number[] }> {
  const all: number[] = [];
  for (const char of text) {
    let best = Number.POSITIVE_INFINITY;
    for (let attempt = 0; attempt < 4 && best > KEYSTROKE_MS; attempt++) {
      if (attempt > 0) await page.keyboard.press('Backspace');
      const before = ((await page.evaluate('window.__keys.length')) as number) ?? 0;
      await page.keyboard.press(char === ' ' ? 'Space' : char);
      const times = await keystrokeTimes(page);
      best = Math.min(best, times[before] ?? 0);
    }
    all.push(best);
  }
  return { slowest: Math.max(...all), all };
}

/** The group number of the text a person sees at the top of the editor and of the preview. */
async function topNumbers(page: Page): Promise<{ editor: number; preview: number }> {
  return (await page.evaluate(`(() => {
    // What is painted a little below the top edge, as a person sees it (not what the DOM holds).
    const at = (container, selector) => {
      const box = container.getBoundingClientRect();
      for (let y = box.top + 6; y < box.top + 120; y += 8) {
        const hit = document.elementFromPoint(box.left + box.width * 0.4, y)?.closest(selector);
        const number = hit && /\\d+/.exec(hit.textContent || '');
        if (number) return Number(number[0]);
      }
      return -1;
    };
    return {
      editor: at(document.querySelector('.cm-scroller'), '.cm-line'),
      preview: at(document.querySelector('.preview'), '.md-block > *'),
    };
  })()`)) as { editor: number; preview: number };
}

describe('a 10,000-line file', () => {
  let context: BrowserContext;
  let page: Page;
  let errors: string[];

  it('opens in the editor with its preview', async () => {
    context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    ({ page, errors } = await watchedPage(context));
    await loginPage(page, server.url, 'alice');
    await page.evaluate(`localStorage.setItem('rune-editor-mode', 'split')`);
    await openEditor(page, server.url, 'big', 'long.md');
    await page.waitForSelector('.preview[data-ready="1"]', { timeout: 60_000 });
    // Down to the last group of lines.
    const last = /\d+/.exec(longNote(LINES).trimEnd().split('\n').at(-1)!)![0];
    expect(await page.locator('.preview .md-block').last().textContent()).toContain(last);
    expect(await page.locator('.preview .md-block').count()).toBeGreaterThan(1000);
    await watchKeystrokes(page);
  });

  it('measures what it claims: a keystroke made slow on purpose is caught', async () => {
    await page.evaluate(`window.__slow = (e) => { if (e.key === 'F8') { const end = performance.now() + 40; while (performance.now() < end); } };
      addEventListener('keydown', window.__slow)`);
    const before = (await page.evaluate('window.__keys.length')) as number;
    await page.keyboard.press('F8');
    expect((await keystrokeTimes(page))[before]).toBeGreaterThan(KEYSTROKE_MS);
    await page.evaluate(`removeEventListener('keydown', window.__slow)`);
  });

  it('types with no keystroke over 16 ms of main-thread time, and the preview shows what was typed', async () => {
    // Blocks an edit does not touch keep their elements (nothing re-rendered, nothing flickers).
    await page.evaluate(
      `document.querySelectorAll('.preview .md-block').forEach((el) => { el.__kept = true; })`,
    );
    await page.click('.cm-content');
    await page.keyboard.press('Control+End');
    const atEnd = await typeMeasured(page, 'typed at the end');
    await page.keyboard.press('Control+Home');
    const atStart = await typeMeasured(page, 'At the start ');
    // The middle: a few pages down from the top.
    for (let i = 0; i < 40; i++) await page.keyboard.press('PageDown');
    const inMiddle = await typeMeasured(page, ' in the middle');
    const report = (name: string, run: { slowest: number; all: number[] }) =>
      `${name}: slowest ${run.slowest.toFixed(1)} ms, median ${[...run.all].sort((a, b) => a - b)[run.all.length >> 1]!.toFixed(1)} ms`;
    console.log(
      `keystroke main-thread time (Event Timing): ${report('end', atEnd)}; ${report('start', atStart)}; ${report('middle', inMiddle)}`,
    );
    expect(atEnd.slowest).toBeLessThanOrEqual(KEYSTROKE_MS);
    expect(atStart.slowest).toBeLessThanOrEqual(KEYSTROKE_MS);
    expect(inMiddle.slowest).toBeLessThanOrEqual(KEYSTROKE_MS);
    // The preview is in step with the text: what was typed at both ends is there.
    await expect
      .poll(() => page.locator('.preview .md-block').first().textContent(), { timeout: 10_000 })
      .toContain('At the start');
    await expect
      .poll(() => page.locator('.preview .md-block').last().textContent(), { timeout: 10_000 })
      .toContain('typed at the end');
    await expect
      .poll(() => page.locator('.preview').textContent(), { timeout: 10_000 })
      .toContain('in the middle');
    const fresh = (await page.evaluate(
      `[...document.querySelectorAll('.preview .md-block')].filter((el) => !el.__kept).length`,
    )) as number;
    // Three places were edited: their blocks (and at most a neighbour each) were rendered anew.
    expect(fresh).toBeGreaterThanOrEqual(3);
    expect(fresh).toBeLessThanOrEqual(6);
    // And the server has it all.
    await expect
      .poll(async () => (await admin.call('GET', '/api/notes/big/files/long.md')).content as string, {
        timeout: 20_000,
      })
      .toMatch(/^At the start [\s\S]* in the middle[\s\S]*typed at the end$/);
  });

  it('keeps the preview scrolled in step with the editor, both ways', async () => {
    for (const fraction of [0.25, 0.6, 0.9]) {
      await page.evaluate(`(() => {
        const scroller = document.querySelector('.cm-scroller');
        scroller.scrollTop = (scroller.scrollHeight - scroller.clientHeight) * ${fraction};
      })()`);
      // The follower moves on the next frame; pages of the preview are laid out as they appear.
      await expect
        .poll(
          async () => {
            const { editor, preview } = await topNumbers(page);
            return editor > 0 && Math.abs(editor - preview) <= 3;
          },
          { timeout: 10_000 },
        )
        .toBe(true);
    }
    await artefact(page, 'long-file-in-step');
    // The other way: the person scrolls the preview with the mouse wheel.
    const box = (await page.locator('.preview').boundingBox())!;
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    for (let i = 0; i < 10; i++) await page.mouse.wheel(0, -4000);
    await expect
      .poll(
        async () => {
          const { editor, preview } = await topNumbers(page);
          return preview > 0 && Math.abs(editor - preview) <= 3;
        },
        { timeout: 10_000 },
      )
      .toBe(true);
    expect(errors).toEqual([]);
    await context.close();
  });
});
