// What each page of the notes UI downloads, raw and gzip, built exactly as the binary ships it
// (scripts/web-build.mjs). Baseline: the public page, the smallest script a reader gets; every
// other figure is a ratio to it.
//   node bench/web-bundle.mjs [--json]
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { buildWeb, loadGraph } from '../scripts/web-build.mjs';
import { ROOT } from './lib.mjs';

const { values } = parseArgs({ options: { json: { type: 'boolean', default: false } } });
const out = mkdtempSync(join(tmpdir(), 'rune-web-bundle-'));
try {
  const meta = await buildWeb(ROOT, out);
  const key = (name) => relative(ROOT, join(out, name));
  const size = (paths) => {
    let raw = 0;
    let gzip = 0;
    for (const path of new Set(paths)) {
      const bytes = readFileSync(join(ROOT, path));
      raw += bytes.length;
      gzip += gzipSync(bytes, { level: 9 }).length;
    }
    return { raw, gzip };
  };
  const app = loadGraph(meta, key('app.js'));
  const pub = loadGraph(meta, key('public.js'));
  // A page that opens a lazily loaded part of the app runs that chunk's static closure too.
  const lazyParts = {};
  for (const chunk of app.dynamic) {
    const source = meta.outputs[chunk]?.entryPoint ?? chunk;
    if (!source.startsWith('web/src/')) continue;
    const closure = loadGraph(meta, chunk).eager.filter((name) => !app.eager.includes(name));
    lazyParts[source] = closure;
  }
  const rows = {
    'public page (/notes/…)': size(pub.eager),
    'app shell (log-in, note list)': size(app.eager),
  };
  let notePage = [...app.eager];
  for (const [source, closure] of Object.entries(lazyParts)) {
    notePage = [...notePage, ...closure];
    rows[`  + ${source}`] = size(closure);
  }
  if (Object.keys(lazyParts).length > 0) rows['note page, editing (all of the above)'] = size(notePage);
  const base = rows['public page (/notes/…)'];
  if (values.json) {
    console.log(JSON.stringify(rows));
  } else {
    console.log('notes UI scripts a page loads before it is usable (minified; gzip -9)');
    for (const [name, { raw, gzip }] of Object.entries(rows)) {
      const ratio =
        name === 'public page (/notes/…)' ? '(baseline)' : `ratio ${(gzip / base.gzip).toFixed(2)}`;
      console.log(
        `  ${name.padEnd(42)} ${(raw / 1024).toFixed(1).padStart(7)} KiB  gzip ${(gzip / 1024).toFixed(1).padStart(6)} KiB  ${ratio}`,
      );
    }
  }
} finally {
  rmSync(out, { recursive: true, force: true });
}
