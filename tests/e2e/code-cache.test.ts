// The V8 code cache of the cli bundle: written after the first run, and written once more after the
// first pipe answer when that first run was a side path (--help, doctor, an error), so later pipe
// runs do not compile the agent's code again on every start. Structural checks; bench/ times it.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MockLlm, startMockLlm } from '../helpers/mock-llm.ts';
import { cleanEnv, requireBinary, runRune, tempDir } from '../helpers/rune.ts';

let mock: MockLlm;
beforeAll(async () => {
  requireBinary();
  mock = await startMockLlm();
});
afterAll(() => mock.close());

function cliCaches(runeHome: string): { name: string; size: number; mtimeMs: number }[] {
  const dir = join(runeHome, 'cache', 'code');
  return readdirSync(dir)
    .filter((name) => name.startsWith('cli-'))
    .map((name) => ({ name, ...statSync(join(dir, name)) }))
    .map(({ name, size, mtimeMs }) => ({ name, size, mtimeMs }));
}

describe('cli code cache', () => {
  it('is replaced by one from the first pipe answer when --help wrote it, and then kept', async () => {
    const dir = tempDir('rune-e2e-cache-');
    const env = { ...cleanEnv(), RUNE_HOME: join(dir, '.rune') };
    const pipe = async () => {
      mock.script([{ text: 'The answer is 4.' }]);
      const result = await runRune(
        ['--base-url', mock.baseUrl, '--api-key', 'sk-test-cache', '--model', 'm'],
        {
          input: 'what is 2+2',
          cwd: dir,
          env,
        },
      );
      expect(result.stdout.trim()).toBe('The answer is 4.');
      expect(result.code).toBe(0);
    };

    expect((await runRune(['--help'], { env })).code).toBe(0);
    const [fromHelp, ...noMore] = cliCaches(env.RUNE_HOME);
    expect(noMore).toEqual([]);

    await pipe();
    const [fromPipe, ...stillNoMore] = cliCaches(env.RUNE_HOME);
    expect(stillNoMore).toEqual([]);
    expect(fromPipe!.name).not.toBe(fromHelp!.name);
    // It holds the agent's functions as well, so it is clearly larger.
    expect(fromPipe!.size).toBeGreaterThan(fromHelp!.size * 1.2);

    // Neither another pipe run nor another side path writes it again.
    await pipe();
    expect((await runRune(['doctor', '--json'], { env })).code).toBe(0);
    expect(cliCaches(env.RUNE_HOME)).toEqual([fromPipe]);
  });
});
