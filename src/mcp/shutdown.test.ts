// Shutdown of a real server through the sandbox: stdin ended, then SIGTERM, and SIGKILL only for a
// server that ignores SIGTERM too. The server script records the signals it gets in a file.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULTS, type RuneConfig } from '../config/schema.ts';
import { createLogger } from '../core/logger.ts';
import { createSandboxExecutor } from '../sandbox/executor.ts';
import { startMcpServers } from './manager.ts';

const require = createRequire(import.meta.url);
const SDK_ENTRY = require.resolve('@modelcontextprotocol/sdk/server/mcp.js');
const SDK = SDK_ENTRY.slice(0, SDK_ENTRY.indexOf('/dist/'));
const NODE_MODULES = dirname(dirname(SDK));
const logger = createLogger({ write: () => {} });
const config = { ...DEFAULTS, mcp: [] } as unknown as RuneConfig;
const executor = createSandboxExecutor({ config, logger });

// Not under /tmp: server processes get a private /tmp.
const dir = mkdtempSync(join(homedir(), '.rune-mcp-shutdown-'));
const SCRIPT = join(dir, 'stubborn.mjs');
writeFileSync(
  SCRIPT,
  `import { appendFileSync } from 'node:fs';
import { McpServer } from ${JSON.stringify(join(SDK, 'dist/esm/server/mcp.js'))};
import { StdioServerTransport } from ${JSON.stringify(join(SDK, 'dist/esm/server/stdio.js'))};
const [record, mode] = process.argv.slice(2);
appendFileSync(record, 'started;');
// Outlives the end of stdin, so only a signal ends it.
setInterval(() => {}, 1000);
process.on('SIGTERM', () => {
  appendFileSync(record, 'SIGTERM;');
  if (mode === 'ignore-term') return;
  // A clean exit takes a moment; a SIGKILL sent right after SIGTERM would cut it short.
  setTimeout(() => {
    appendFileSync(record, 'clean exit;');
    process.exit(0);
  }, 300);
});
const server = new McpServer({ name: 'stubborn', version: '1.0.0' });
server.registerTool('noop', { description: 'does nothing' }, async () => ({ content: [] }));
await server.connect(new StdioServerTransport());
`,
);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function runAndStop(mode: string): Promise<string> {
  const record = join(dir, `${mode}.log`);
  writeFileSync(record, '');
  const manager = await startMcpServers({
    servers: [
      {
        name: 'stubborn',
        command: 'node',
        args: [SCRIPT, record, mode],
        allowed_paths_ro: [NODE_MODULES],
        allowed_paths_rw: [dir],
      },
    ],
    executor,
    logger,
    cwd: process.cwd(),
    env: process.env,
  });
  const pid = manager.describeServers()[0]?.pid as number;
  expect(manager.describeServers()[0]?.state).toBe('ready');
  await manager.shutdown();
  expect(manager.describeServers()[0]?.state).toBe('stopped');
  expect(() => process.kill(pid, 0)).toThrow(/ESRCH/);
  return readFileSync(record, 'utf8');
}

describe('McpManager.shutdown', () => {
  it('asks a server that ignores the end of stdin to stop with SIGTERM and lets it exit cleanly', async () => {
    expect(await runAndStop('obey-term')).toMatch(/^started;(SIGTERM;)+clean exit;$/);
  });

  it('kills a server that ignores SIGTERM too', async () => {
    expect(await runAndStop('ignore-term')).toMatch(/^started;(SIGTERM;)+$/);
  });
});
