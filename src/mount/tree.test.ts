import { describe, expect, it } from 'vitest';
import { buildTree, InodeTable, type OfferedTool, ROOT_INO } from './tree.ts';

const tool = (name: string, extra: Partial<OfferedTool> = {}): OfferedTool => ({
  definition: {
    name,
    description: `the ${name} tool`,
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  },
  ...extra,
});

const paths = (tree: ReturnType<typeof buildTree>) => {
  const byIno = new Map(tree.nodes.map((node) => [node.ino, node]));
  const path = (ino: number): string => {
    const node = byIno.get(ino)!;
    return node.ino === ROOT_INO ? '' : `${path(node.parent)}/${node.name}`.replace(/^\//, '');
  };
  return tree.nodes.map((node) => `${path(node.ino)}${node.dir ? '/' : ''}`).sort();
};

describe('the mount tree', () => {
  it('has tools/<tool> per built-in, tools/<server>/<tool> per MCP tool, a .log beside each, and a README', () => {
    const tree = buildTree(
      [tool('read_file'), tool('everything__echo', { server: 'everything', serverTool: 'echo' })],
      new InodeTable(),
    );
    expect(paths(tree)).toEqual([
      '/',
      'README',
      'tools/',
      'tools/everything/',
      'tools/everything/echo',
      'tools/everything/echo.log',
      'tools/read_file',
      'tools/read_file.log',
    ]);
    const endpoints = [...tree.endpoints.values()];
    expect(endpoints).toContainEqual({
      path: 'tools/everything/echo',
      tool: 'everything__echo',
      kind: 'call',
    });
    expect(endpoints).toContainEqual({ path: 'tools/read_file.log', tool: 'read_file', kind: 'log' });
    expect(tree.readme).toContain('## tools/everything/echo (MCP server everything)');
    expect(tree.readme).toContain('input: a JSON object, or the text of "path"; its schema:');
    expect(tree.readme).toContain('"required": [\n    "path"\n  ]');
    const readme = tree.nodes.find((node) => node.name === 'README')!;
    expect(readme.content?.toString()).toBe(tree.readme);
    expect(tree.nodes.filter((node) => node.name === 'read_file')[0]!.mode).toBe(0o600);
  });

  it('leaves out tools whose names cannot be files, or would collide, and says so', () => {
    const tree = buildTree(
      [
        tool('read_file'),
        tool('a', { server: 's', serverTool: 'x.log' }),
        tool('b', { server: 's', serverTool: '..' }),
        tool('c', { server: 's', serverTool: 'a/b' }),
        tool('d', { server: 'read_file', serverTool: 'y' }),
      ],
      new InodeTable(),
    );
    expect(tree.skipped).toEqual([
      expect.stringContaining('tools/s/x.log: the name "x.log" ends in .log'),
      expect.stringContaining('tools/s/..: the name ".." is not a file name'),
      expect.stringContaining('tools/s/a/b: the name "a/b" holds "/"'),
      expect.stringContaining('tools/read_file/y: its folder tools/read_file is a tool'),
    ]);
    expect(paths(tree)).not.toContain('tools/s/');
    expect(tree.readme).toContain('## Not in the mount');
  });

  it('keeps a path’s inode when the tools change, and never gives it to another path', () => {
    const inodes = new InodeTable();
    const before = buildTree([tool('read_file'), tool('list_dir')], inodes);
    const after = buildTree([tool('list_dir'), tool('s__t', { server: 's', serverTool: 't' })], inodes);
    const ino = (tree: typeof before, name: string) => tree.nodes.find((node) => node.name === name)?.ino;
    expect(ino(after, 'list_dir')).toBe(ino(before, 'list_dir'));
    expect(ino(after, 't')).not.toBe(ino(before, 'read_file'));
    expect(ino(after, 'read_file')).toBeUndefined();
  });
});
