#!/usr/bin/env node
// Builds dist/rune: the native addon (node-gyp), one esbuild bundle per mode, the assets the binary
// carries (bundles, addons, web files) with a sha256 manifest, then a Node single executable
// (SEA blob injected with postject) and the check/in/out symlinks.
//
//   node scripts/build.mjs [--out DIR] [--no-code-cache] [--no-strip] [--no-minify]
// (--no-minify keeps names readable in CPU profiles: RUNE_CPU_PROFILE=run.cpuprofile dist/rune …)
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import * as esbuild from 'esbuild';
import { buildCliChunks } from './cli-chunks.mjs';
import { openaiGlobals } from './esbuild-openai-globals.mjs';
import { buildWeb, duplicatePackages } from './web-build.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const { values: opts } = parseArgs({
  options: {
    out: { type: 'string', default: join(root, 'dist') },
    'no-code-cache': { type: 'boolean', default: false },
    'no-strip': { type: 'boolean', default: false },
    'no-minify': { type: 'boolean', default: false },
  },
});
const out = opts.out;
const assetDir = join(out, 'assets');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const started = Date.now();
const step = (what) =>
  process.stderr.write(`build: ${what} (${((Date.now() - started) / 1000).toFixed(1)} s)\n`);

/** Mode bundles: each is parsed only when its mode is chosen (see src/core/bundles.ts), plus the walk worker. */
const MODES = {
  main: 'src/main.ts',
  // cli (src/cli/index.ts) is built apart, as two bundles: scripts/cli-chunks.mjs.
  notes: 'src/notes/index.ts',
  concourse: 'src/concourse/index.ts',
  sandbox: 'src/sandbox/entry.ts',
  // Not modes: worker threads started from their own text, so each parses only what it runs.
  // The notes server's worker (search, diffs):
  'notes-worker': 'src/notes/worker-entry.ts',
  // search_files/find_files' walk (src/tools/walk/runner.ts):
  'walk-worker': 'src/tools/walk/worker.ts',
};

/**
 * The C files of each native target: the addon's are listed in binding.gyp; the static sandbox helper
 * is every other .c file under native/src plus probe.c, which both use. Each target's inputs are its
 * sources and the headers they include, so editing one target's files never rebuilds the other.
 */
function nativeInputs() {
  const dir = join(root, 'native/src');
  const gyp = JSON.parse(readFileSync(join(root, 'native/binding.gyp'), 'utf8'));
  const addon = gyp.targets[0].sources.map((source) => source.replace(/^src\//, ''));
  const helper = readdirSync(dir).filter(
    (name) => name.endsWith('.c') && (!addon.includes(name) || name === 'probe.c'),
  );
  const withHeaders = (sources) => {
    const seen = new Set();
    const visit = (name) => {
      if (seen.has(name) || !existsSync(join(dir, name))) return;
      seen.add(name);
      for (const [, header] of readFileSync(join(dir, name), 'utf8').matchAll(/^#include "([^"]+)"/gm))
        visit(header);
    };
    for (const source of sources) visit(source);
    return [...seen].map((name) => join(dir, name));
  };
  return { addon: withHeaders(addon), helper: withHeaders(helper) };
}

const newerThan = (target, inputs) =>
  existsSync(target) && statSync(target).mtimeMs >= Math.max(...inputs.map((f) => statSync(f).mtimeMs));

function buildNative() {
  const addon = join(root, 'native/build/Release/rune_native.node');
  if (newerThan(addon, [...nativeInputs().addon, join(root, 'native/binding.gyp')])) return addon;
  const gyp = require.resolve('node-gyp/bin/node-gyp.js');
  // Headers of the running Node from the distribution (Debian's nodejs) keep the build offline;
  // otherwise node-gyp downloads them.
  const localHeaders = `/usr/include/node/node_version.h`;
  const nodedir =
    existsSync(localHeaders) &&
    readFileSync(localHeaders, 'utf8').includes(`NODE_PATCH_VERSION ${process.versions.node.split('.')[2]}`)
      ? ['--nodedir=/usr']
      : [];
  execFileSync(process.execPath, [gyp, 'rebuild', '--directory', join(root, 'native'), ...nodedir], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return addon;
}

// The sandbox helper: a static C program (no libc needed on the target), so it runs the same
// inside any mount namespace. Debian's libc6-dev ships the libc.a it links against.
function buildSandboxHelper() {
  const helper = join(root, 'native/build/rune-sandbox');
  const sources = nativeInputs().helper;
  if (newerThan(helper, sources)) return helper;
  mkdirSync(dirname(helper), { recursive: true });
  execFileSync(
    'gcc',
    [
      '-static',
      '-O2',
      '-Wall',
      '-Wextra',
      '-Werror',
      '-std=gnu11',
      '-o',
      helper,
      ...sources.filter((f) => f.endsWith('.c')),
    ],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  return helper;
}

function sqliteAddon() {
  const path = join(
    dirname(require.resolve('better-sqlite3/package.json')),
    'build/Release/better_sqlite3.node',
  );
  if (!existsSync(path)) {
    throw new Error(
      `better-sqlite3's native addon was not built (${path} is missing): npm may have held back its install script; run \`npm rebuild better-sqlite3\``,
    );
  }
  return path;
}

async function bundle() {
  const shared = {
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    // --no-minify keeps names (for CPU profiles) but still drops whitespace and comments: comments
    // are not escaped by `charset: 'ascii'` and would break the ASCII check below.
    minifyWhitespace: true,
    minifyIdentifiers: !opts['no-minify'],
    minifySyntax: !opts['no-minify'],
    keepNames: false,
    legalComments: 'none',
    // Bundles are read as Latin-1 at start-up (src/core/assets.ts readAssetAscii): keep them ASCII.
    charset: 'ascii',
    metafile: true,
    logLevel: 'warning',
    define: { __RUNE_VERSION__: JSON.stringify(pkg.version) },
    // The openai SDK gets light Headers/FormData stand-ins, so pipe mode never loads undici.
    plugins: [openaiGlobals],
    // Optional peers of bundled libraries that rune never uses.
    external: ['bufferutil', 'utf-8-validate', 'pino-pretty'],
    // web-tree-sitter's ESM build loads `module` and `fs/promises` with import(), which a SEA cannot
    // do; its CommonJS build uses require() for the same builtins.
    alias: { 'web-tree-sitter': require.resolve('web-tree-sitter') },
  };
  const result = await esbuild.build({
    ...shared,
    entryPoints: MODES,
    outdir: join(assetDir, 'js'),
    outExtension: { '.js': '.cjs' },
    bundle: true,
  });
  const cli = await buildCliChunks(root, join(assetDir, 'js'), shared);
  // Output paths are relative to the working directory (esbuild's absWorkingDir).
  const outputs = {
    ...Object.fromEntries(
      Object.entries(result.metafile.outputs).map(([file, o]) => [relative(root, resolve(file)), o]),
    ),
    ...cli.outputs,
  };
  writeFileSync(
    join(out, 'meta.json'),
    JSON.stringify({ inputs: { ...result.metafile.inputs, ...cli.inputs }, outputs }),
  );
  for (const file of Object.keys(outputs)) assertAscii(resolve(root, file));
}

/** A bundle read as Latin-1 must hold no other byte: a non-ASCII one would be misread silently. */
function assertAscii(file) {
  const bytes = readFileSync(file);
  const at = bytes.findIndex((byte) => byte > 0x7f);
  if (at >= 0)
    throw new Error(`${file}: byte ${at} is not ASCII; the bundles are read as Latin-1 at start-up`);
}

function listFiles(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

/** TypeScript sources of the notes UI and their config: bundled by buildWeb, never shipped as is. */
const isWebSource = (name) => name.startsWith('src/') || name === 'tsconfig.json';

/** The notes UI: bundled by scripts/web-build.mjs; a package bundled twice fails the build. */
async function buildBrowserBundle() {
  const meta = await buildWeb(root, join(assetDir, 'web/js'));
  writeFileSync(join(out, 'web-meta.json'), JSON.stringify(meta));
  const duplicates = duplicatePackages(meta, root);
  if (duplicates.length > 0) {
    throw new Error(
      `web bundle: ${duplicates.map(({ name, dirs }) => `${name} from ${dirs.join(' and ')}`).join('; ')}: two copies break instanceof checks and shared state; align the versions (npm dedupe) so one copy remains`,
    );
  }
}

async function collectAssets(nativeAddon) {
  mkdirSync(join(assetDir, 'native'), { recursive: true });
  copyFileSync(nativeAddon, join(assetDir, 'native/rune_native.node'));
  copyFileSync(sqliteAddon(), join(assetDir, 'native/better_sqlite3.node'));
  copyFileSync(buildSandboxHelper(), join(assetDir, 'native/rune-sandbox'));
  // The policy's shell parser (src/policy/shell-parser.ts): web-tree-sitter's runtime and the bash grammar.
  mkdirSync(join(assetDir, 'wasm'), { recursive: true });
  copyFileSync(require.resolve('web-tree-sitter/tree-sitter.wasm'), join(assetDir, 'wasm/tree-sitter.wasm'));
  copyFileSync(
    join(dirname(require.resolve('tree-sitter-bash/package.json')), 'tree-sitter-bash.wasm'),
    join(assetDir, 'wasm/tree-sitter-bash.wasm'),
  );
  rmSync(join(assetDir, 'web'), { recursive: true, force: true });
  if (existsSync(join(root, 'web/src'))) await buildBrowserBundle();
  for (const file of listFiles(join(root, 'web'))) {
    if (isWebSource(relative(join(root, 'web'), file))) continue;
    const target = join(assetDir, 'web', relative(join(root, 'web'), file));
    mkdirSync(dirname(target), { recursive: true });
    copyFileSync(file, target);
  }
  const names = listFiles(assetDir)
    .map((file) => relative(assetDir, file))
    .filter((name) => name !== 'manifest.json' && name !== 'js/main.cjs')
    .sort();
  const sha256 = {};
  for (const name of names)
    sha256[name] = createHash('sha256')
      .update(readFileSync(join(assetDir, name)))
      .digest('hex');
  writeFileSync(join(assetDir, 'manifest.json'), JSON.stringify({ version: pkg.version, sha256 }));
  assertAscii(join(assetDir, 'manifest.json'));
  return [...names, 'manifest.json'];
}

async function makeExecutable(assets) {
  const seaConfig = {
    main: join(assetDir, 'js/main.cjs'),
    output: join(out, 'sea-prep.blob'),
    disableExperimentalSEAWarning: true,
    useCodeCache: !opts['no-code-cache'],
    useSnapshot: false,
    assets: Object.fromEntries(assets.map((name) => [name, join(assetDir, name)])),
  };
  writeFileSync(join(out, 'sea-config.json'), JSON.stringify(seaConfig, null, 2));
  execFileSync(process.execPath, ['--experimental-sea-config', join(out, 'sea-config.json')], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });

  const tmp = join(out, 'rune.tmp');
  copyFileSync(process.execPath, tmp);
  chmodSync(tmp, 0o755);
  if (!opts['no-strip']) {
    try {
      execFileSync('strip', ['--strip-all', tmp], { stdio: 'ignore' });
    } catch {
      step('strip not available; the binary keeps its symbols');
    }
  }
  const { inject } = require('postject');
  await inject(tmp, 'NODE_SEA_BLOB', readFileSync(seaConfig.output), {
    sentinelFuse: 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2',
  });
  renameSync(tmp, join(out, 'rune'));
  for (const name of ['check', 'in', 'out']) {
    rmSync(join(out, name), { force: true });
    symlinkSync('rune', join(out, name));
  }
}

mkdirSync(out, { recursive: true });
const nativeAddon = buildNative();
step('native addon ready');
await bundle();
step('bundled');
const assets = await collectAssets(nativeAddon);
step(`${assets.length} assets collected`);
// postject prints LIEF warnings about .note sections; they are harmless (see PROBE-FINDINGS).
const realWarn = console.warn;
console.warn = () => {};
try {
  await makeExecutable(assets);
} finally {
  console.warn = realWarn;
}
step(
  `${relative(root, join(out, 'rune'))} written (${(statSync(join(out, 'rune')).size / 2 ** 20).toFixed(1)} MiB)`,
);
