// The notes UI for the browser, shared by scripts/build.mjs and bench/web-bundle.mjs so the sizes
// measured are those shipped: no Node built-ins, ESM with code splitting, so Mermaid, KaTeX and
// the editor become chunks loaded only by the pages that need them.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as esbuild from 'esbuild';

/**
 * lang-markdown imports lang-html (with the HTML, CSS and JavaScript parsers; bench/web-bundle.mjs)
 * for its `markdown()` helper, which web/src/editor-languages.ts does not use. Even unused, a static import
 * puts the module in the editor's chunk, so lang-markdown's import gets an empty stand-in; the
 * editor still loads lang-html on its own when a fence asks for HTML.
 */
const noHtmlInMarkdown = {
  name: 'no-html-in-markdown',
  setup(build) {
    build.onResolve({ filter: /^@codemirror\/lang-html$/ }, (args) =>
      /[\\/]@codemirror[\\/]lang-markdown[\\/]/.test(args.importer)
        ? { path: 'lang-html-unused', namespace: 'rune-stub' }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'rune-stub' }, () => ({
      contents:
        "const unused = () => { throw new Error('@codemirror/lang-html is not bundled with lang-markdown'); };\n" +
        'export const html = unused, htmlCompletionSource = unused;\n',
      loader: 'js',
    }));
  },
};

/** Builds web/src into `outdir` and returns esbuild's metafile. */
export async function buildWeb(root, outdir) {
  const result = await esbuild.build({
    entryPoints: { app: 'web/src/app.ts', public: 'web/src/public.ts', katex: 'katex/dist/katex.min.css' },
    absWorkingDir: root,
    outdir,
    bundle: true,
    splitting: true,
    platform: 'browser',
    format: 'esm',
    target: ['es2022'],
    minify: true,
    legalComments: 'none',
    logLevel: 'warning',
    metafile: true,
    chunkNames: 'chunk-[hash]',
    assetNames: 'fonts/[name]-[hash]',
    loader: { '.woff2': 'file', '.woff': 'empty', '.ttf': 'empty' },
    plugins: [noHtmlInMarkdown],
  });
  return result.metafile;
}

/**
 * The scripts a page runs before it is usable: the entry and everything it imports statically
 * (`eager`), and what its dynamic imports pull in on top (`lazy`), as output paths of the metafile.
 */
export function loadGraph(metafile, entry) {
  const outputs = metafile.outputs;
  const closure = (start, seen = new Set()) => {
    const queue = [...start];
    while (queue.length > 0) {
      const name = queue.pop();
      if (seen.has(name) || !outputs[name]) continue;
      seen.add(name);
      for (const imported of outputs[name].imports) {
        if (imported.kind === 'import-statement') queue.push(imported.path);
      }
    }
    return seen;
  };
  const eager = closure([entry]);
  const dynamic = [...eager].flatMap((name) =>
    outputs[name].imports.filter((each) => each.kind === 'dynamic-import').map((each) => each.path),
  );
  return { eager: [...eager], dynamic };
}

/** Packages whose objects cross module boundaries (documents, editor state, syntax trees). */
const SINGLE = [/^yjs$/, /^lib0$/, /^y-codemirror\.next$/, /^@codemirror\//, /^@lezer\//];

/**
 * Packages bundled from more than one folder (`node_modules/yjs` and `node_modules/x/node_modules/yjs`)
 * that must not be: two copies of Yjs or of @codemirror/state break `instanceof` and shared facets
 * at run time, in ways no type check sees. Refused are the packages in SINGLE at any versions, and
 * any package twice at one major version (npm failed to dedupe it). Different majors elsewhere
 * (Mermaid's d3 modules) are separate libraries in effect and allowed.
 */
export function duplicatePackages(metafile, root) {
  const roots = new Map();
  for (const input of Object.keys(metafile.inputs)) {
    const match = /^(.*node_modules\/)((?:@[^/]+\/)?[^/]+)\//.exec(input);
    if (!match) continue;
    const [, prefix, name] = match;
    if (!roots.has(name)) roots.set(name, new Set());
    roots.get(name).add(`${prefix}${name}`);
  }
  const major = (dir) =>
    JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8')).version.split('.')[0];
  return [...roots]
    .filter(([name, dirs]) => {
      if (dirs.size < 2) return false;
      if (SINGLE.some((pattern) => pattern.test(name))) return true;
      const majors = [...dirs].map(major);
      return new Set(majors).size < majors.length;
    })
    .map(([name, dirs]) => ({ name, dirs: [...dirs] }));
}
