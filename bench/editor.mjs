// The notes editor on a 10,000-line file, each figure against a baseline measured in the same run:
//   1. preview work per edit: rendering the whole file with marked (what the preview did on every
//      change before it went incremental) vs re-splitting and rendering only the touched blocks;
//   2. main-thread CPU time per keystroke (Chromium's trace of the key and input events, against
//      the built binary) in the 10,000-line file vs a 30-line one.
//   node bench/editor.mjs [--edits 40] [--keys 30] [--no-browser]
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import * as esbuild from 'esbuild';
import { median, percentile, ROOT, requireBinary } from './lib.mjs';
import { waitForLine } from './notes/lib.mjs';

const { values } = parseArgs({
  options: {
    edits: { type: 'string', default: '40' },
    keys: { type: 'string', default: '30' },
    'no-browser': { type: 'boolean', default: false },
  },
});

/** The same kind of note as tests/browser/editor-long.test.ts. */
function longNote(lines) {
  const out = [];
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

const ms = (values) =>
  `median ${median(values).toFixed(2).padStart(8)} ms  p90 ${percentile(values, 90).toFixed(2).padStart(8)} ms`;

async function previewWork() {
  // The web modules as they are (TypeScript, no DOM), bundled for Node.
  const dir = mkdtempSync(join(tmpdir(), 'rune-bench-editor-'));
  try {
    const entry = join(dir, 'entry.ts');
    writeFileSync(
      entry,
      `export { splitBlocks, resplit } from ${JSON.stringify(join(ROOT, 'web/src/blocks.ts'))};
       export { marked, lexBlock, blockHtml } from ${JSON.stringify(join(ROOT, 'web/src/markdown.ts'))};`,
    );
    await esbuild.build({
      entryPoints: [entry],
      bundle: true,
      platform: 'node',
      format: 'esm',
      outfile: join(dir, 'web.mjs'),
      logLevel: 'warning',
    });
    const { splitBlocks, resplit, marked, lexBlock, blockHtml } = await import(
      pathToFileURL(join(dir, 'web.mjs')).href
    );
    let text = longNote(10_000);
    let blocks = splitBlocks(text);
    const whole = [];
    const incremental = [];
    const edits = Number(values.edits);
    for (let i = 0; i < edits; i++) {
      // Typing at the end, at the start and in the middle, in turn.
      const at = [text.length - 1, 0, text.length >> 1][i % 3];
      const next = `${text.slice(0, at)}x${text.slice(at)}`;
      let start = performance.now();
      marked.parse(next, { async: false });
      whole.push(performance.now() - start);
      start = performance.now();
      // What the preview does (preview.ts, minus the DOM): split again around the edit, render the
      // blocks whose text is new.
      const known = new Set(blocks.map((block) => block.text));
      const after = resplit(text, blocks, next);
      for (const block of after) if (!known.has(block.text)) blockHtml(lexBlock(block.text).tokens);
      incremental.push(performance.now() - start);
      text = next;
      blocks = after;
    }
    console.log(`\npreview work per edit of a 10,000-line note (${edits} edits; Node, no DOM)`);
    console.log(`  whole file through marked (before)     ${ms(whole)}  (baseline)`);
    console.log(
      `  touched blocks only (now)              ${ms(incremental)}  ratio ${(median(incremental) / median(whole)).toFixed(4)}`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function keystrokes() {
  const rune = requireBinary();
  const { chromium } = await import('playwright-core');
  const home = mkdtempSync(join(tmpdir(), 'rune-bench-editor-home-'));
  mkdirSync(join(home, 'home'), { recursive: true });
  writeFileSync(join(home, 'rune.toml'), '[notes.local]\nadmins = ["admin:bench-pass-1"]\n');
  const server = spawn(rune, ['notes', '--port', '0', '--bind', '127.0.0.1'], {
    env: { PATH: '/usr/bin:/bin', HOME: join(home, 'home'), RUNE_HOME: home },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu'],
  });
  try {
    const [, url] = await waitForLine(server, /listening on (http:\/\/[\d.]+:\d+)/);
    const page = await (await browser.newContext({ viewport: { width: 1400, height: 900 } })).newPage();
    await page.goto(`${url}/#/login`);
    await page.fill('input[name="username"]', 'admin');
    await page.fill('input[name="password"]', 'bench-pass-1');
    await page.click('form.login button[type="submit"]');
    await page.waitForSelector('.me-name');
    const call = (method, path, body) =>
      page.evaluate(
        async ([method, path, body]) => {
          const me = await (await fetch('/api/me')).json();
          const response = await fetch(path, {
            method,
            headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': me.csrf_token },
            body: JSON.stringify(body),
          });
          if (!response.ok) throw new Error(`${method} ${path}: ${response.status}`);
        },
        [method, path, body],
      );
    await call('POST', '/api/notes', { name: 'bench' });
    await call('POST', '/api/notes/bench/files', { name: 'short.md', content: longNote(30) });
    await call('POST', '/api/notes/bench/files', { name: 'long.md', content: longNote(10_000) });
    const results = {};
    for (const file of ['short.md', 'long.md']) {
      await page.goto(`${url}/#/n/bench/${file}`);
      await page.waitForSelector('.editor-host[data-ready="1"] .cm-content');
      await page.waitForSelector('.preview[data-ready="1"]', { timeout: 60_000 });
      await page.click('.cm-content');
      await page.keyboard.press('Control+End');
      await page.waitForTimeout(1000);
      // CPU time of the key and input events' dispatch (handlers and default actions), from a
      // trace: exact per event and unaffected by other processes taking the CPU.
      const cdp = await page.context().newCDPSession(page);
      const trace = [];
      cdp.on('Tracing.dataCollected', (data) => trace.push(...data.value));
      const done = new Promise((resolve) => cdp.once('Tracing.tracingComplete', resolve));
      await cdp.send('Tracing.start', { categories: 'devtools.timeline', transferMode: 'ReportEvents' });
      for (let i = 0; i < Number(values.keys); i++) {
        await page.keyboard.press('abcdefghij'[i % 10]);
        await page.waitForTimeout(60);
      }
      await page.waitForTimeout(300);
      await cdp.send('Tracing.end');
      await done;
      const dispatches = trace
        .filter(
          (e) =>
            e.name === 'EventDispatch' &&
            e.ph === 'X' &&
            /^(key|textInput|beforeinput|input)/.test(e.args?.data?.type ?? ''),
        )
        .sort((a, b) => a.ts - b.ts);
      const perKey = [];
      let end = 0;
      for (const e of dispatches) {
        if (e.ts < end) continue; // nested in the one before (textInput inside keypress)
        end = e.ts + e.dur;
        if (e.args.data.type === 'keydown') perKey.push(0);
        if (perKey.length > 0) perKey[perKey.length - 1] += (e.tdur ?? e.dur) / 1000;
      }
      results[file] = perKey;
    }
    console.log(`\nmain-thread CPU time per keystroke (Chromium trace, split view, ${values.keys} keys)`);
    console.log(`  30-line note                           ${ms(results['short.md'])}  (baseline)`);
    console.log(
      `  10,000-line note                       ${ms(results['long.md'])}  ratio ${(median(results['long.md']) / Math.max(median(results['short.md']), 0.01)).toFixed(2)}`,
    );
  } finally {
    await browser.close();
    server.kill('SIGTERM');
    rmSync(home, { recursive: true, force: true });
  }
}

await previewWork();
if (!values['no-browser']) await keystrokes();
