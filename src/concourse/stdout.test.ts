import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSync } from 'esbuild';
import { describe, expect, it } from 'vitest';

// The isolation acts on the real fd 1, so it runs in a child Node process: a bundle of stdout.ts
// plus a script that writes to stdout every way a tool, a library or a child process could.
function bundle(script: string): string {
  const result = buildSync({
    stdin: { contents: script, resolveDir: import.meta.dirname, loader: 'ts' },
    bundle: true,
    write: false,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
  });
  return result.outputFiles[0]!.text;
}

const noisy = bundle(`
  import { spawnSync } from 'node:child_process';
  import { writeSync } from 'node:fs';
  import { claimStdout } from ${JSON.stringify(join(import.meta.dirname, 'stdout.ts'))};
  (async () => {
  const out = await claimStdout();
  console.log('console.log noise');
  process.stdout.write('process.stdout noise\\n');
  writeSync(1, 'fd 1 noise\\n');
  spawnSync('sh', ['-c', 'echo child noise; echo child stderr >&2'], { stdio: 'inherit' });
  await out.emit({ ok: true, isolation: out.isolation, big: 'x'.repeat(200000) });
  })();
`);

const NODE_NOISES = ['console.log noise', 'process.stdout noise'];
const FD_NOISES = ['fd 1 noise', 'child noise'];

/** Runs the noisy script with stdout and stderr as `kind`. */
function runNoisy(kind: 'socket' | 'pipe' | 'file'): {
  stdout: string;
  stderr: string;
  status: number | null;
} {
  if (kind === 'socket') {
    // Node's child_process hands children UNIX sockets, not pipes.
    return spawnSync(process.execPath, ['-e', noisy], { encoding: 'utf8', maxBuffer: 1 << 24 });
  }
  const dir = mkdtempSync(join(tmpdir(), 'rune-stdout-'));
  const script =
    kind === 'pipe'
      ? '{ "$0" -e "$1" | cat >"$2/out"; } 2>&1 | cat >"$2/err"'
      : '"$0" -e "$1" 2>&1 >"$2/out" | cat >"$2/err"';
  const result = spawnSync('sh', ['-c', script, process.execPath, noisy, dir], { encoding: 'utf8' });
  const read = (name: string) => readFileSync(join(dir, name), 'utf8');
  const out = { stdout: read('out'), stderr: read('err'), status: result.status };
  rmSync(dir, { recursive: true, force: true });
  return out;
}

describe('claimStdout', () => {
  it.each([
    ['pipe', 'fd'],
    ['file', 'fd'],
  ] as const)(
    'leaves exactly the emitted JSON on a %s and moves every other write to stderr',
    (kind, isolation) => {
      const result = runNoisy(kind);
      expect(result.status).toBe(0);
      const value = JSON.parse(result.stdout);
      expect(value).toMatchObject({ ok: true, isolation });
      expect(value.big).toHaveLength(200000);
      for (const noise of [...NODE_NOISES, ...FD_NOISES, 'child stderr']) {
        expect(result.stderr).toContain(noise);
      }
    },
  );

  it('keeps a socket stdout clean too, through the relay', () => {
    const result = runNoisy('socket');
    expect(result.status).toBe(0);
    const value = JSON.parse(result.stdout);
    expect(value).toMatchObject({ ok: true, isolation: 'relay' });
    expect(value.big).toHaveLength(200000);
    // stderr is a socket as well, so fd-level writes are dropped; Node's own writes still arrive.
    for (const noise of NODE_NOISES) expect(result.stderr).toContain(noise);
    for (const noise of FD_NOISES) expect(result.stdout).not.toContain(noise);
  });
});
