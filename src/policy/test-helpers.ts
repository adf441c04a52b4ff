// Test support: points readAsset at a folder holding the two wasm files from node_modules, the
// way main.ts points it at dist/assets, so unit tests load the same bytes the build embeds.
import { copyFileSync, mkdirSync, mkdtempSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { devAssets } from '../core/assets.ts';
import definitions from '../tools/definitions.json' with { type: 'json' };
import { SHELL_ASSETS } from './shell-parser.ts';
import type { ToolAccess } from './types.ts';

export function useShellAssetsFromNodeModules(): void {
  const require = createRequire(import.meta.url);
  const dir = mkdtempSync(join(tmpdir(), 'rune-policy-assets-'));
  mkdirSync(join(dir, 'wasm'));
  copyFileSync(require.resolve('web-tree-sitter/tree-sitter.wasm'), join(dir, SHELL_ASSETS.runtime));
  copyFileSync(
    join(dirname(require.resolve('tree-sitter-bash/package.json')), 'tree-sitter-bash.wasm'),
    join(dir, SHELL_ASSETS.bash),
  );
  devAssets.dir = dir;
}

/** The access the built-in tool `name` declares (src/tools/definitions.json), as the agent passes it. */
export function toolAccess(name: string): ToolAccess {
  const entry = (definitions as { name: string; access: ToolAccess }[]).find((tool) => tool.name === name);
  if (!entry) throw new Error(`no built-in tool named ${name}`);
  return entry.access;
}
