// `rune … | head`: when the reader of stdout goes away, rune stops quietly with 141 (128 + SIGPIPE,
// what a shell reports), never with an unhandled EPIPE stack trace.
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { cleanEnv, requireBinary } from '../helpers/rune.ts';

function readFirstChunkThenClose(
  args: string[],
): Promise<{ code: number | null; stderr: string; first: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(requireBinary(), args, { env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    let first = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.stdout.once('data', (chunk: Buffer) => {
      first = chunk.toString('utf8');
      child.stdout.destroy();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr, first });
    });
  });
}

describe('a reader that goes away', () => {
  it('ends rune sandbox with 141 and no stack trace', async () => {
    const result = await readFirstChunkThenClose(['sandbox', '--', 'seq', '1', '10000000']);
    expect(result.first).toMatch(/^1\n2\n/);
    expect(result.stderr).not.toMatch(/EPIPE|Unhandled|node:internal/);
    expect(result.code).toBe(141);
  });

  it('ends the commander path (rune sandbox without --) the same way', async () => {
    const result = await readFirstChunkThenClose(['sandbox', 'seq', '1', '10000000']);
    expect(result.first).toMatch(/^1\n/);
    expect(result.stderr).not.toMatch(/EPIPE|Unhandled|node:internal/);
    expect(result.code).toBe(141);
  });
});
