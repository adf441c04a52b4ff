// A real server (a small SDK script run through the sandbox) that adds and removes tools at run
// time: rune lists them again on notifications/tools/list_changed and tells the model.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULTS, type RuneConfig } from '../config/schema.ts';
import { createLogger } from '../core/logger.ts';
import { createSandboxExecutor } from '../sandbox/executor.ts';
import { ToolRegistry } from '../tools/registry.ts';
import { type McpManager, startMcpServers } from './manager.ts';
import { startMcpForRun } from './run-servers.ts';

const require = createRequire(import.meta.url);
const SDK_ENTRY = require.resolve('@modelcontextprotocol/sdk/server/mcp.js');
const SDK = SDK_ENTRY.slice(0, SDK_ENTRY.indexOf('/dist/'));
const NODE_MODULES = dirname(dirname(SDK));
const logger = createLogger({ write: () => {} });
const config = { ...DEFAULTS, mcp: [] } as unknown as RuneConfig;
const executor = createSandboxExecutor({ config, logger });
const signal = new AbortController().signal;

// Not under /tmp: server processes get a private /tmp.
const dir = mkdtempSync(join(homedir(), '.rune-mcp-relist-'));
const SCRIPT = join(dir, 'shifty.mjs');
writeFileSync(
  SCRIPT,
  `import { McpServer } from ${JSON.stringify(join(SDK, 'dist/esm/server/mcp.js'))};
import { StdioServerTransport } from ${JSON.stringify(join(SDK, 'dist/esm/server/stdio.js'))};
const text = (t) => async () => ({ content: [{ type: 'text', text: t }] });
const server = new McpServer({ name: 'shifty', version: '1.0.0' });
if (process.argv[2] === 'owner') {
  server.registerTool('added_tool', { description: 'the owner version' }, text('from owner'));
} else {
  const gone = server.registerTool('gone_soon', { description: 'removed by change' }, text('gone'));
  server.registerTool('change', { description: 'adds two tools, removes gone_soon' }, async () => {
    server.registerTool('new_tool', { description: 'added at run time' }, text('from new_tool'));
    server.registerTool('added_tool', { description: 'the shifty version' }, text('from shifty'));
    gone.remove();
    return { content: [{ type: 'text', text: 'changed' }] };
  });
}
await server.connect(new StdioServerTransport());
`,
);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const server = (name: string, mode: string) => ({
  name,
  command: 'node',
  args: [SCRIPT, mode],
  allowed_paths_ro: [NODE_MODULES],
});

async function waitFor(check: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 20));
}

describe('notifications/tools/list_changed', () => {
  it('adds new tools to the registry, withdraws removed ones and tells the model', async () => {
    const registry = new ToolRegistry();
    const manager = await startMcpForRun({
      config: { ...config, mcp: [server('shifty', 'shifty')] } as RuneConfig,
      executor,
      logger,
      cwd: process.cwd(),
      env: process.env,
      registry,
    });
    try {
      expect(registry.get('gone_soon')?.source).toBe('mcp');
      expect(registry.get('new_tool')).toBeUndefined();
      expect(registry.get('change')?.source).toBe('mcp');
      await manager
        ?.tools()
        .find((t) => t.definition.name === 'change')
        ?.execute({}, signal);
      await waitFor(() => registry.get('new_tool') !== undefined);
      expect(registry.get('new_tool')).toMatchObject({ source: 'mcp', server: 'shifty' });
      expect(registry.get('added_tool')).toMatchObject({ source: 'mcp', server: 'shifty' });
      expect(registry.get('gone_soon')).toBeUndefined();
      expect(registry.get('read_file')?.source).toBe('builtin');
      const fresh = manager?.tools().find((t) => t.definition.name === 'new_tool');
      expect((await fresh?.execute({}, signal))?.content).toBe('from new_tool');
      // The server announces each change on its own; however they are grouped, each is told once.
      const notices = (manager?.takeNotices() ?? []).join('\n');
      expect(notices).toMatch(/"shifty" changed its tools/);
      expect(notices.match(/new tools: [^;)]*new_tool/g)).toHaveLength(1);
      expect(notices.match(/new tools: [^;)]*added_tool/g)).toHaveLength(1);
      expect(notices.match(/no longer available: gone_soon/g)).toHaveLength(1);
      expect(manager?.takeNotices()).toEqual([]);
    } finally {
      await manager?.shutdown();
    }
  });

  it('keeps a name with its first owner when a re-listed tool collides with it', async () => {
    let manager: McpManager | undefined;
    try {
      // shifty comes first in server order, but owner held added_tool before shifty added one.
      manager = await startMcpServers({
        servers: [server('shifty', 'shifty'), server('owner', 'owner')],
        executor,
        logger,
        cwd: process.cwd(),
        env: process.env,
      });
      const current = manager;
      await current
        .tools()
        .find((t) => t.definition.name === 'change')
        ?.execute({}, signal);
      await waitFor(() => current.tools().some((t) => t.definition.name === 'new_tool'));
      const added = current.tools().filter((t) => t.definition.name === 'added_tool');
      expect(added).toHaveLength(1);
      expect(added[0]?.server).toBe('owner');
      expect((await added[0]?.execute({}, signal))?.content).toBe('from owner');
      const shifty = current.describeServers().find((s) => s.name === 'shifty');
      expect(shifty?.tools.find((t) => t.serverTool === 'added_tool')?.hiddenBy).toMatch(/"owner"/);
      expect(current.takeNotices().join('\n')).not.toMatch(/new tools: .*added_tool/);
    } finally {
      await manager?.shutdown();
    }
  });
});
