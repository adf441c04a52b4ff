import { describe, expect, it } from 'vitest';
import {
  assignToolNames,
  modelToolName,
  serverNameFromArgv,
  splitCommandLine,
  uniqueNames,
} from './naming.ts';

describe('splitCommandLine', () => {
  it.each([
    ['node server.js stdio', ['node', 'server.js', 'stdio']],
    ['  node   a  ', ['node', 'a']],
    [`node "/path with space/x.js" 'it''s'`, ['node', '/path with space/x.js', 'its']],
    ['echo "a \\"b\\" c"', ['echo', 'a "b" c']],
    ['echo a\\ b', ['echo', 'a b']],
    ["echo ''", ['echo', '']],
    ['echo $HOME', ['echo', '$HOME']],
  ])('%s', (text, argv) => {
    expect(splitCommandLine(text)).toEqual(argv);
  });

  it('rejects an unclosed quote with a usage error', () => {
    expect(() => splitCommandLine('node "x.js')).toThrow(/unclosed " quote/);
  });

  it('rejects a trailing backslash', () => {
    expect(() => splitCommandLine('node x\\')).toThrow(/trailing backslash/);
  });
});

describe('serverNameFromArgv', () => {
  const pkg = (file: string) =>
    file.includes('server-everything') ? '@modelcontextprotocol/server-everything' : undefined;
  it.each([
    [
      ['node', '/x/node_modules/@modelcontextprotocol/server-everything/dist/index.js', 'stdio'],
      'server-everything',
    ],
    [['npx', '-y', '@modelcontextprotocol/server-filesystem@2026.8.31', '/tmp'], 'server-filesystem'],
    [['uvx', 'mcp-server-fetch'], 'mcp-server-fetch'],
    [['python3', '-u', 'weather.py'], 'weather'],
    [['/usr/local/bin/my-server', '--flag'], 'my-server'],
    [['node', 'dist/index.js'], 'index'],
    [['npx', 'pkg@1.2.3'], 'pkg'],
    [['node', 'my.server.js'], 'my_server'],
  ])('%j → %s', (argv, name) => {
    expect(serverNameFromArgv(argv, pkg)).toBe(name);
  });
});

describe('uniqueNames', () => {
  it('numbers repeats and avoids taken names', () => {
    expect(uniqueNames(['a', 'a', 'b', 'a'], ['b'])).toEqual(['a', 'a-2', 'b-2', 'a-3']);
  });
});

describe('modelToolName', () => {
  it('keeps valid names and repairs others', () => {
    expect(modelToolName('get-env')).toBe('get-env');
    expect(modelToolName('fs.read/file')).toBe('fs_read_file');
    expect(modelToolName('x'.repeat(80))).toHaveLength(64);
  });
});

describe('assignToolNames', () => {
  it('gives a name to its first owner, built-ins first, and warns about the hidden one', () => {
    const { offered, hidden } = assignToolNames(
      ['read_file', 'execute_cmd'],
      [
        { server: 'a', tool: 'echo' },
        { server: 'a', tool: 'read_file' },
        { server: 'b', tool: 'echo' },
        { server: 'b', tool: 'sum' },
      ],
    );
    expect(offered.map((t) => `${t.server}:${t.name}`)).toEqual(['a:echo', 'b:sum']);
    expect(hidden.map((t) => `${t.server}:${t.tool}→${t.owner}`)).toEqual([
      'a:read_file→built-in tool',
      'b:echo→tool of MCP server "a"',
    ]);
    expect(hidden[1]?.warning).toBe(
      'MCP tool "echo" of server "b" is hidden: the name "echo" belongs to the tool of MCP server "a"',
    );
  });

  it('treats two tools that repair to the same name as a collision', () => {
    const { offered, hidden } = assignToolNames(
      [],
      [
        { server: 'a', tool: 'x.y' },
        { server: 'a', tool: 'x/y' },
      ],
    );
    expect(offered.map((t) => t.name)).toEqual(['x_y']);
    expect(hidden.map((t) => t.tool)).toEqual(['x/y']);
  });
});
