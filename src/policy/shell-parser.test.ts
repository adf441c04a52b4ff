// The parser pins wasm to V8's baseline compiler before compiling tree-sitter: without it, V8's
// background TurboFan tier-up of the grammar held up every spawn of the following second, which
// made each sandboxed tool call of a run ~100 ms slower (bench/pipe.mjs measures that, not this).
import { beforeAll, describe, expect, it, vi } from 'vitest';

const setFlags = vi.hoisted(() => vi.fn<(flags: string) => void>());
vi.mock('node:v8', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:v8')>();
  return {
    ...real,
    setFlagsFromString: (flags: string) => {
      setFlags(flags);
      real.setFlagsFromString(flags);
    },
  };
});

const { parseShell, WASM_BASELINE_FLAG } = await import('./shell-parser.ts');
const { useShellAssetsFromNodeModules } = await import('./test-helpers.ts');

describe('shell parser loading', () => {
  beforeAll(() => useShellAssetsFromNodeModules());

  it('sets the wasm baseline-only flag before the first parse compiles tree-sitter', async () => {
    expect(setFlags).not.toHaveBeenCalled();
    const analysis = await parseShell('ls -la | grep x && echo done');
    expect(WASM_BASELINE_FLAG).toBe('--liftoff-only');
    expect(setFlags).toHaveBeenCalledWith(WASM_BASELINE_FLAG);
    // Same grammar, same trees: the analysis still sees every command of the line.
    expect(analysis.ok).toBe(true);
    expect(JSON.stringify(analysis)).toContain('grep');
  });

  it('sets it once per process, not per parse', async () => {
    await parseShell('true');
    await parseShell('echo hi');
    expect(setFlags).toHaveBeenCalledTimes(1);
  });
});
