// What a call's checkpoint covers: a file tool its judged file, a command the writable grants
// (folders and files apart, missing ones left out), an MCP tool its server's folders, a read-only
// tool nothing.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { withDefaults } from '../../config/load.ts';
import { realPath } from '../../core/paths.ts';
import type { RegisteredTool } from '../../tools/registry.ts';
import type { ToolContext } from '../../tools/types.ts';
import { callScope } from './scope.ts';

const base = realPath(mkdtempSync(join(tmpdir(), 'rune-scope-')));
afterAll(() => rmSync(base, { recursive: true, force: true }));
mkdirSync(join(base, 'rw'));
writeFileSync(join(base, 'notes.md'), '');

const context = {
  cwd: base,
  config: withDefaults({}),
  env: { HOME: base },
  readOnlyPaths: [base],
  readWritePaths: [join(base, 'rw'), join(base, 'notes.md'), join(base, 'missing')],
  judged: { [join(base, 'link.txt')]: join(base, 'rw', 'real.txt') },
} as unknown as ToolContext;

const tool = (name: string, extra: Partial<RegisteredTool> = {}) =>
  ({ definition: { name }, source: 'builtin', readOnly: false, ...extra }) as RegisteredTool;

describe('callScope', () => {
  it.each([
    ['write_file', { path: 'a.txt' }, { roots: [], files: [join(base, 'a.txt')] }],
    ['edit_file', { path: 'link.txt' }, { roots: [], files: [join(base, 'rw', 'real.txt')] }],
    ['execute_cmd', { cmd: 'true' }, { roots: [join(base, 'rw')], files: [join(base, 'notes.md')] }],
  ])('%s %j', (name, args, scope) => {
    expect(callScope(tool(name), args, context)).toEqual(scope);
  });

  it('a read-only tool changes nothing', () => {
    expect(callScope(tool('read_file', { readOnly: true }), { path: 'a' }, context)).toBeUndefined();
  });

  it("an MCP tool covers its server's writable folders; without any, nothing", () => {
    const mcp = tool('fs_write', { source: 'mcp', writablePaths: ['rw', '~/rw'] });
    expect(callScope(mcp, {}, context)).toEqual({ roots: [join(base, 'rw')], files: [] });
    expect(callScope(tool('fs_write', { source: 'mcp' }), {}, context)).toBeUndefined();
  });
});
