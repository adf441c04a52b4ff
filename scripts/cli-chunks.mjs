// The agent CLI as two bundles (docs/adr/0029-cli-lazy-chunk.md): `cli`, what a one-step pipe
// answer runs, and `cli-lazy`, every module the cli reaches only through a dynamic `import()` (the
// tools, the interactive session, MCP, the shell parser, the subcommands). esbuild splits code
// only for ES module output, which a SEA cannot load, so the split is made here, in three builds:
//
// 1. `cli` with each dynamic import turned into `require('rune-lazy:<file>')`, resolved at run
//    time by src/core/bundles.ts, which loads `cli-lazy` then;
// 2. `cli-lazy`, whose entry maps each such file to a function requiring it, with every module
//    that `cli` already holds left out as `require('rune-host:<file>')`: one copy of each module,
//    so module state (the secrets to redact, caches) and classes (instanceof) stay one;
// 3. `cli` again, now exporting `__runeHost`: a function per module `cli-lazy` asked for.
import { relative, resolve, sep } from 'node:path';
import * as esbuild from 'esbuild';

export const LAZY_PREFIX = 'rune-lazy:';
export const HOST_PREFIX = 'rune-host:';

/** `file` → `() => require(file)` for each, as the source of an object literal. */
function requireTable(root, files) {
  return `{\n${[...files]
    .sort()
    .map((file) => `  ${JSON.stringify(file)}: () => require(${JSON.stringify(resolve(root, file))}),`)
    .join('\n')}\n}`;
}

/**
 * Builds `cli.cjs` and `cli-lazy.cjs` into `outdir` with the shared esbuild `options`; returns
 * both metafiles' outputs and inputs merged, as one build's metafile.
 */
export async function buildCliChunks(root, outdir, options) {
  const rel = (file) => relative(root, file).split(sep).join('/');
  const common = { ...options, absWorkingDir: root, bundle: true, metafile: true, write: true };
  // The SEA's vm.Script has no module loader: every import() must become a require().
  common.supported = { ...options.supported, 'dynamic-import': false };

  /**
   * A plugin sending to `prefix` + file every import `wanted(args, file)` picks (file relative to
   * root), noting the file in `files`; every other import resolves as usual.
   */
  const redirect = (name, prefix, files, wanted) => ({
    name,
    setup(build) {
      build.onResolve({ filter: /.*/ }, async (args) => {
        if (args.pluginData === 'resolving' || args.kind === 'entry-point') return undefined;
        if (args.path.startsWith('node:')) return undefined;
        const found = await build.resolve(args.path, {
          kind: args.kind,
          importer: args.importer,
          resolveDir: args.resolveDir,
          pluginData: 'resolving',
        });
        if (found.errors.length > 0 || found.external || !wanted(args, rel(found.path))) return undefined;
        files.add(rel(found.path));
        return { path: `${prefix}${rel(found.path)}`, external: true };
      });
    },
  });

  const lazyFiles = new Set();
  const toLazy = redirect(
    'rune-lazy-imports',
    LAZY_PREFIX,
    lazyFiles,
    (args) => args.kind === 'dynamic-import',
  );
  const entry = resolve(root, 'src/cli/index.ts');
  const cliBuild = (hostFiles) =>
    esbuild.build({
      ...common,
      plugins: [toLazy, ...(options.plugins ?? [])],
      stdin: {
        contents: `export { run } from ${JSON.stringify(entry)};\nexport const __runeHost = ${requireTable(root, hostFiles)};\n`,
        resolveDir: root,
        sourcefile: 'src/cli/chunk-entry.js',
        loader: 'js',
      },
      outfile: resolve(outdir, 'cli.cjs'),
    });

  const first = await cliBuild([]);
  const inCli = new Set(Object.keys(first.metafile.inputs));

  const hostFiles = new Set();
  const toHost = redirect('rune-host-modules', HOST_PREFIX, hostFiles, (_args, file) => inCli.has(file));
  const lazy = await esbuild.build({
    ...common,
    plugins: [toHost, ...(options.plugins ?? [])],
    stdin: {
      contents: `module.exports = ${requireTable(root, lazyFiles)};\n`,
      resolveDir: root,
      sourcefile: 'src/cli/lazy-chunk-entry.js',
      loader: 'js',
    },
    outfile: resolve(outdir, 'cli-lazy.cjs'),
  });

  const cli = await cliBuild(hostFiles);
  const inputsNow = Object.keys(cli.metafile.inputs).filter((file) => !file.startsWith('<stdin>'));
  const added = inputsNow.filter((file) => !inCli.has(file));
  if (added.length > 0)
    throw new Error(`cli chunks: the host table pulled new modules into cli: ${added.join(', ')}`);
  const twice = Object.keys(lazy.metafile.inputs).filter((file) => inCli.has(file));
  if (twice.length > 0) throw new Error(`cli chunks: modules in both cli and cli-lazy: ${twice.join(', ')}`);
  return {
    inputs: { ...lazy.metafile.inputs, ...cli.metafile.inputs },
    outputs: { ...lazy.metafile.outputs, ...cli.metafile.outputs },
  };
}
