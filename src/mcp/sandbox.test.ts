// A real filesystem MCP server told it may serve `/` still cannot read outside what its [[mcp]]
// table grants: the sandbox (Landlock, mount namespace), not the server's own checks, stops it.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULTS, type RuneConfig } from '../config/schema.ts';
import { createLogger } from '../core/logger.ts';
import { createSandboxExecutor } from '../sandbox/executor.ts';
import type { McpManager } from './manager.ts';
import { startMcpServers } from './manager.ts';

const require = createRequire(import.meta.url);
const FILESYSTEM = join(
  dirname(require.resolve('@modelcontextprotocol/server-filesystem/package.json')),
  'dist/index.js',
);
const logger = createLogger({ write: () => {} });
const config = { ...DEFAULTS, mcp: [] } as unknown as RuneConfig;
const executor = createSandboxExecutor({ config, logger });
const landlock = executor.describe().find((layer) => layer.layer === 'landlock');
const signal = new AbortController().signal;

describe.runIf(landlock?.applied)('server-filesystem inside the sandbox', () => {
  // Not under /tmp: tool processes get a private /tmp, which would hide the files for another reason.
  const root = mkdtempSync(join(homedir(), '.rune-mcp-test-'));
  const granted = join(root, 'granted');
  const secret = join(root, 'secret');
  let manager: McpManager;

  beforeAll(async () => {
    mkdirSync(granted);
    mkdirSync(secret);
    writeFileSync(join(granted, 'ok.txt'), 'visible text');
    writeFileSync(join(secret, 'key.txt'), 'TOP-SECRET-VALUE');
    manager = await startMcpServers({
      // The server itself would serve everything under `/`; only the table limits it.
      servers: [{ name: 'fs', command: 'node', args: [FILESYSTEM, '/'], allowed_paths_ro: [granted] }],
      executor,
      logger,
      cwd: process.cwd(),
      env: process.env,
    });
  });
  afterAll(async () => {
    await manager?.shutdown();
    const { rmSync } = await import('node:fs');
    rmSync(root, { recursive: true, force: true });
  });

  const read = (path: string) =>
    manager
      .tools()
      .find((tool) => tool.definition.name === 'read_text_file')!
      .execute({ path }, signal);

  it('reads a file the table grants', async () => {
    expect(await read(join(granted, 'ok.txt'))).toEqual({
      content: '{"content":"visible text"}',
      isError: false,
    });
  });

  it('cannot read a file outside the grant even though the server would', async () => {
    const out = await read(join(secret, 'key.txt'));
    expect(out.isError).toBe(true);
    expect(out.content).not.toContain('TOP-SECRET-VALUE');
    // Not in the server's view at all (Landlock would refuse it where there is no view).
    expect(out.content).toMatch(/ENOENT: no such file or directory|EACCES: permission denied/);
  });
});
