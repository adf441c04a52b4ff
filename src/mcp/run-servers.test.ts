// The run's tool registry gains the tools of real servers and loses them when their server dies.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULTS, type RuneConfig } from '../config/schema.ts';
import { createLogger } from '../core/logger.ts';
import { createSandboxExecutor } from '../sandbox/executor.ts';
import { ToolRegistry } from '../tools/registry.ts';
import { startMcpForRun } from './run-servers.ts';

const require = createRequire(import.meta.url);
const EVERYTHING = join(
  dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')),
  'dist/index.js',
);
const logger = createLogger({ write: () => {} });
const config = { ...DEFAULTS, mcp: [] } as unknown as RuneConfig;
const executor = createSandboxExecutor({ config, logger });

describe('startMcpForRun', () => {
  it('costs nothing when no server is configured', async () => {
    const registry = new ToolRegistry();
    const before = registry.names();
    expect(
      await startMcpForRun({ config, executor, logger, cwd: process.cwd(), env: process.env, registry }),
    ).toBeUndefined();
    expect(registry.names()).toEqual(before);
  });

  it('adds --mcp-stdio tools to the registry and removes them when the server dies', async () => {
    const registry = new ToolRegistry();
    const manager = await startMcpForRun({
      config,
      mcpStdio: [`node ${EVERYTHING} stdio`],
      executor,
      logger,
      cwd: process.cwd(),
      env: process.env,
      registry,
    });
    try {
      expect(registry.get('echo')).toMatchObject({
        source: 'mcp',
        server: 'server-everything',
        readOnly: true,
      });
      expect(registry.get('read_file')?.source).toBe('builtin');
      const pid = manager?.describeServers()[0]?.pid as number;
      process.kill(pid, 'SIGKILL');
      for (let i = 0; i < 250 && registry.get('echo'); i++) await new Promise((r) => setTimeout(r, 20));
      expect(registry.get('echo')).toBeUndefined();
      expect(registry.get('read_file')?.source).toBe('builtin');
    } finally {
      await manager?.shutdown();
    }
  });
});
