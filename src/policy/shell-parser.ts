// Loads tree-sitter-bash through web-tree-sitter once per process. Both wasm files travel inside
// the binary as SEA assets (scripts/build.mjs); nothing is read from node_modules at run time.
import { Language, Parser } from 'web-tree-sitter';
import { readAsset } from '../core/assets.ts';
import { analyzeShell, type ShellAnalysis, type SyntaxNodeLike } from './shell.ts';

export const SHELL_ASSETS = { runtime: 'wasm/tree-sitter.wasm', bash: 'wasm/tree-sitter-bash.wasm' } as const;

let parser: Promise<Parser> | undefined;

async function load(read: (name: string) => Uint8Array): Promise<Parser> {
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
