// server-filesystem through the built binary: told to serve `/`, asked by the model for a file
// outside its [[mcp]] grant, it gets EACCES from the sandbox; the granted file reads fine.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MockLlm, startMockLlm } from '../helpers/mock-llm.ts';
import { cleanEnv, requireBinary, runRune, tempDir } from '../helpers/rune.ts';

const require = createRequire(import.meta.url);
const FILESYSTEM = join(
  dirname(require.resolve('@modelcontextprotocol/server-filesystem/package.json')),
  'dist/index.js',
);
let mock: MockLlm;
// Outside /tmp: sandboxed processes get a private /tmp, which would hide the files for another reason.
const root = mkdtempSync(join(homedir(), '.rune-mcp-e2e-'));

beforeAll(async () => {
  requireBinary();
  mock = await startMockLlm();
  mkdirSync(join(root, 'granted'));
  mkdirSync(join(root, 'secret'));
  writeFileSync(join(root, 'granted', 'ok.txt'), 'granted text');
  writeFileSync(join(root, 'secret', 'key.txt'), 'TOP-SECRET-E2E');
});
afterAll(async () => {
  await mock.close();
  rmSync(root, { recursive: true, force: true });
});

describe('server-filesystem inside the sandbox', () => {
  it('reads what its table grants and nothing else, even when the model asks', async () => {
    const home = tempDir('rune-mcp-home-');
    const runeHome = join(home, '.rune');
    mkdirSync(runeHome, { mode: 0o700 });
    writeFileSync(
      join(runeHome, 'rune.toml'),
      [
        '[[mcp]]',
        'name = "fs"',
        'command = "node"',
        `args = ["${FILESYSTEM}", "/"]`,
        `allowed_paths_ro = ["${join(root, 'granted')}"]`,
        '',
      ].join('\n'),
    );
    mock.script([
      {
        toolCalls: [
          { name: 'read_text_file', arguments: { path: join(root, 'granted', 'ok.txt') } },
          { name: 'read_text_file', arguments: { path: join(root, 'secret', 'key.txt') } },
        ],
      },
      { text: 'done' },
    ]);
    const result = await runRune(
      [
        '--base-url',
        mock.baseUrl,
        '--api-key',
        'sk-test-mcp-fs-0011223344556677',
        '--model',
        'm',
        'read both',
      ],
      { cwd: tempDir('rune-mcp-cwd-'), env: { ...cleanEnv(home), RUNE_HOME: runeHome }, timeoutMs: 50_000 },
    );
    expect(result.code).toBe(0);
    // biome-ignore lint/suspicious/noExplicitAny: wire JSON
    const tools = ((mock.requests[1]?.body?.messages ?? []) as any[]).filter((m) => m.role === 'tool');
    expect(tools[0]?.content).toBe('{"content":"granted text"}');
    // Outside the grant the file does not exist in the server's view (Landlock would say EACCES).
    expect(tools[1]?.content).toMatch(/ENOENT: no such file or directory|EACCES: permission denied/);
    expect(JSON.stringify(mock.requests)).not.toContain('TOP-SECRET-E2E');
  });
});
