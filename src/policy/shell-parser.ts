// Loads tree-sitter-bash through web-tree-sitter once per process. Both wasm files travel inside
// the binary as SEA assets (scripts/build.mjs); nothing is read from node_modules at run time.
import { setFlagsFromString } from 'node:v8';
import { Language, Parser } from 'web-tree-sitter';
import { readAsset } from '../core/assets.ts';
import { setRunFlags } from '../core/v8-flags.ts';
import { analyzeShell, type ShellAnalysis, type SyntaxNodeLike } from './shell.ts';

export const SHELL_ASSETS = { runtime: 'wasm/tree-sitter.wasm', bash: 'wasm/tree-sitter-bash.wasm' } as const;

let parser: Promise<Parser> | undefined;

/**
 * Keeps every WebAssembly function on V8's baseline compiler (Liftoff). By default V8 tiers
 * tree-sitter's hot functions up to TurboFan on a background thread; for about a second after the
 * first parse that compile holds up every child_process.spawn, so each sandboxed tool call of a
 * run waited on it (bench/pipe.mjs, its ten execute_cmd calls). A parse of one command line is
 * cheap on Liftoff too, and tree-sitter is rune's only wasm (the HTTP client avoids undici's llhttp).
 * Compiler choice only: the same module computes the same trees, so no policy decision changes.
 */
export const WASM_BASELINE_FLAG = '--liftoff-only';
/** What puts the flag hash back (--liftoff-only turns both tier-ups off), so code caches written at exit stay valid. */
export const WASM_BASELINE_RESTORE = '--no-liftoff-only --wasm-tier-up --wasm-dynamic-tiering';

async function load(read: (name: string) => Uint8Array): Promise<Parser> {
  setRunFlags(setFlagsFromString, WASM_BASELINE_FLAG, WASM_BASELINE_RESTORE);
  await Parser.init({ wasmBinary: read(SHELL_ASSETS.runtime) });
  const bash = await Language.load(read(SHELL_ASSETS.bash));
  const instance = new Parser();
  instance.setLanguage(bash);
  return instance;
}

/** Parses and analyses shell text. A parser that cannot load throws; callers deny (fail closed). */
export async function parseShell(
  text: string,
  read: (name: string) => Uint8Array = readAsset,
): Promise<ShellAnalysis> {
  parser ??= load(read).catch((error: unknown) => {
    parser = undefined;
    throw error;
  });
  const tree = (await parser).parse(text);
  if (!tree) return { ok: false, error: 'the shell parser returned nothing' };
  try {
    return analyzeShell(tree.rootNode as unknown as SyntaxNodeLike);
  } finally {
    tree.delete();
  }
}
