// The notes UI as the build ships it (next to the binary under assets/web, the same files the
// binary embeds): browser-only code, no TypeScript sources, no inline script in the HTML shells.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { RUNE_BIN } from '../helpers/rune.ts';

const assets = join(dirname(RUNE_BIN), 'assets');
const web = join(assets, 'web');

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)));
}

/** Node built-ins by specifier (`"node:fs"`) and bare CommonJS `require(…)` calls (not `x.require`). */
function nodeLeaks(code: string): string[] {
  const leaks: string[] = [];
  for (const match of code.matchAll(/["'`]node:[a-z_/]+["'`]/g)) leaks.push(match[0]);
  for (const match of code.matchAll(/(?<![\w$.])require\s*\(/g)) {
    leaks.push(code.slice(Math.max(0, match.index - 30), match.index + 40));
  }
  return leaks;
}

describe('built web assets', () => {
  it('exist next to the binary', () => {
    expect(existsSync(join(web, 'index.html')), `${web} missing: build with --out`).toBe(true);
  });

  it('the scan finds what it is meant to find', () => {
    expect(nodeLeaks('import x from "node:fs";')).toHaveLength(1);
    expect(nodeLeaks("const p = require('path')")).toHaveLength(1);
    expect(nodeLeaks('x={node:e}; mod.require("util")')).toEqual([]);
  });

  it('contain no Node built-ins and no CommonJS require in any script', () => {
    const scripts = files(web).filter((name) => name.endsWith('.js'));
    expect(scripts).toContain('js/app.js');
    expect(scripts).toContain('js/public.js');
    const leaks = scripts.flatMap((name) =>
      nodeLeaks(readFileSync(join(web, name), 'utf8')).map((leak) => `${name}: ${leak}`),
    );
    expect(leaks).toEqual([]);
  });

  it('ship no sources and are all in the binary manifest', () => {
    const shipped = files(web);
    expect(shipped.filter((name) => /\.(ts|tsx|map)$|^src\/|tsconfig/.test(name))).toEqual([]);
    const manifest = JSON.parse(readFileSync(join(assets, 'manifest.json'), 'utf8')) as {
      sha256: Record<string, string>;
    };
    for (const name of shipped) expect(manifest.sha256, name).toHaveProperty([`web/${name}`]);
  });

  it('HTML shells load only external scripts and carry no inline handlers', () => {
    for (const page of ['index.html', 'public.html']) {
      const html = readFileSync(join(web, page), 'utf8');
      const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)];
      expect(scripts.length, page).toBeGreaterThan(0);
      for (const [, attrs, body] of scripts) {
        expect(attrs, page).toMatch(/\bsrc="\/assets\/js\/[\w-]+\.js"/);
        expect(body?.trim(), page).toBe('');
      }
      expect(html, page).not.toMatch(/\son[a-z]+\s*=/i);
      expect(html, page).not.toMatch(/javascript:/i);
    }
    expect(readFileSync(join(web, 'public.html'), 'utf8')).toContain('<!--RUNE_DATA-->');
  });

  it('keep Mermaid and KaTeX out of the first load (only dynamic imports reach them)', () => {
    for (const entry of ['js/app.js', 'js/public.js']) {
      const code = loadedCode(entry);
      expect(code, entry).not.toMatch(/flowchart-v2|sequenceDiagram/);
      expect(code, entry).not.toContain('KaTeX_Main');
    }
    expect(loadedCode('js/public.js')).toContain('DOMPurify');
  });

  it('keep the note page and the editor out of the log-in page and the note list', () => {
    const app = loadedCode('js/app.js');
    const lazy = dynamicImports('js/app.js').map(loadedCode);
    // CodeMirror, the remote cursors, Yjs, the renderer: none before a note is opened, all after.
    for (const marker of ['cm-content', 'cm-ySelection', 'Yjs was already imported', 'DOMPurify']) {
      expect(app, marker).not.toContain(marker);
      expect(
        lazy.some((code) => code.includes(marker)),
        `${marker} in a chunk the app imports on demand`,
      ).toBe(true);
    }
    expect(loadedCode('js/public.js')).not.toContain('cm-content');
  });

  it('bundle one copy of Yjs and of CodeMirror (two break instanceof checks)', async () => {
    const meta = JSON.parse(readFileSync(join(dirname(RUNE_BIN), 'web-meta.json'), 'utf8')) as {
      inputs: Record<string, unknown>;
    };
    const folders = (pkg: string) =>
      new Set(
        Object.keys(meta.inputs)
          .filter((input) => input.includes(`node_modules/${pkg}/`))
          .map((input) => input.slice(0, input.lastIndexOf(`node_modules/${pkg}/`))),
      );
    for (const pkg of [
      'yjs',
      'lib0',
      '@codemirror/state',
      '@codemirror/view',
      'y-codemirror.next',
      '@lezer/common',
    ]) {
      expect(folders(pkg).size, pkg).toBe(1);
    }
    // The build's own check finds none, and would find a second copy.
    const { duplicatePackages } = await import('../../scripts/web-build.mjs');
    const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
    expect(duplicatePackages(meta, root)).toEqual([]);
    const twice = {
      inputs: { ...meta.inputs, 'node_modules/y-codemirror.next/node_modules/yjs/dist/yjs.mjs': {} },
    };
    expect(duplicatePackages(twice, root).map((each) => each.name)).toEqual(['yjs']);
  });
});

/** The code a page runs before it is usable: the entry and its static imports. */
function loadedCode(entry: string): string {
  return staticClosure(entry)
    .map((name) => readFileSync(join(web, name), 'utf8'))
    .join('\n');
}

/** The chunks the entry's first load may import later (`import("./x.js")`). */
function dynamicImports(entry: string): string[] {
  const names = new Set<string>();
  for (const name of staticClosure(entry)) {
    const code = readFileSync(join(web, name), 'utf8');
    for (const match of code.matchAll(/\bimport\(\s*["'](\.\/[\w.-]+\.js)["']\s*\)/g)) {
      names.add(join(dirname(name), match[1]!));
    }
  }
  return [...names];
}

/** The scripts a page loads before running: the entry and its static `import … from "./x.js"`. */
function staticClosure(entry: string): string[] {
  const seen = new Set<string>();
  const queue = [entry];
  while (queue.length > 0) {
    const name = queue.pop()!;
    if (seen.has(name)) continue;
    seen.add(name);
    const code = readFileSync(join(web, name), 'utf8');
    for (const match of code.matchAll(/(?:\bfrom|\bimport)\s*["'](\.\/[\w.-]+\.js)["']/g)) {
      queue.push(join(dirname(name), match[1]!));
    }
  }
  return [...seen];
}
