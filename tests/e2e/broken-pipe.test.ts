// `rune … | head`: when the reader of stdout goes away, rune stops quietly with 141 (128 + SIGPIPE,
// what a shell reports), never with an unhandled EPIPE stack trace.
// Pipe mode writes its answer straight to fd 1 (src/core/stdio.ts), so it is tested here as well,
// with a descriptor a parent left non-blocking.
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MockLlm, startMockLlm } from '../helpers/mock-llm.ts';
import { cleanEnv, requireBinary } from '../helpers/rune.ts';

let mock: MockLlm;
beforeAll(async () => {
  mock = await startMockLlm();
});
afterAll(() => mock.close());

/** An answer far larger than a pipe's buffer (64 KiB), so writing it waits for the reader. */
const LONG_ANSWER = Array.from({ length: 40_000 }, (_, i) => `line ${i}`).join('\n');

function agentArgs(): string[] {
  return ['--base-url', mock.baseUrl, '--api-key', 'sk-test-broken-pipe', '--model', 'm', 'answer at length'];
}

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

  it('ends a pipe-mode answer the same way', async () => {
    mock.script([{ text: LONG_ANSWER }]);
    const result = await readFirstChunkThenClose(agentArgs());
    expect(result.first).toMatch(/^line 0\nline 1\n/);
    expect(result.stderr).not.toMatch(/EPIPE|Unhandled|node:internal/);
    expect(result.code).toBe(141);
  });
});

describe('a slow reader of a non-blocking pipe', () => {
  it('gets the whole answer: rune waits while the pipe is full instead of failing with EAGAIN', async () => {
    mock.script([{ text: LONG_ANSWER }]);
    // The parent sets O_NONBLOCK on the write end it hands rune, fills nothing, and starts reading
    // only after a pause, so rune's first writes find the pipe full.
    const reader = String.raw`
import fcntl, os, subprocess, sys, time
r, w = os.pipe()
fcntl.fcntl(w, fcntl.F_SETFL, fcntl.fcntl(w, fcntl.F_GETFL) | os.O_NONBLOCK)
child = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=w)
os.close(w)
time.sleep(1.5)
data = b''
while True:
    chunk = os.read(r, 4096)
    if not chunk:
        break
    data += chunk
    time.sleep(0.001)
sys.stdout.write(str(child.wait()) + ' ' + str(len(data)) + ' ' + data[-12:].decode())
`;
    // Not spawnSync: the mock model answers from this process.
    const result = await promisify(execFile)(
      '/usr/bin/python3',
      ['-c', reader, requireBinary(), ...agentArgs()],
      {
        env: cleanEnv(),
        encoding: 'utf8',
        timeout: 60_000,
        maxBuffer: 4 * 1024 * 1024,
      },
    );
    expect(result.stderr).toBe('');
    const expected = `${LONG_ANSWER}\n`;
    expect(result.stdout).toBe(`0 ${Buffer.byteLength(expected)} ${expected.slice(-12)}`);
  });
});
