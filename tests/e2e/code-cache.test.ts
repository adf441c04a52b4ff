// The V8 code cache of the cli bundle: written after the first run, and written once more after the
// first pipe answer when that first run was a side path (--help, doctor, an error), so later pipe
// runs do not compile the agent's code again on every start. Structural checks; bench/ times it.
import { chmodSync, chownSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Script } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MockLlm, startMockLlm } from '../helpers/mock-llm.ts';
import { cleanEnv, RUNE_BIN, requireBinary, runRune, tempDir } from '../helpers/rune.ts';

let mock: MockLlm;
beforeAll(async () => {
  requireBinary();
  mock = await startMockLlm();
});
afterAll(() => mock.close());

/** The cache files of one bundle: `cli`, or `cli-lazy`, the chunk a tool call or the session loads. */
function cliCaches(
  runeHome: string,
  bundle: 'cli' | 'cli-lazy' = 'cli',
): { name: string; size: number; mtimeMs: number }[] {
  const dir = join(runeHome, 'cache', 'code');
  return readdirSync(dir)
    .filter((name) => new RegExp(`^${bundle}-[0-9a-f]{20}-`).test(name))
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
    // A one-step answer never loads the lazy chunk (docs/adr/0029-cli-lazy-chunk.md).
    expect(cliCaches(env.RUNE_HOME, 'cli-lazy')).toEqual([]);
    expect(fromPipe!.name).not.toBe(fromHelp!.name);
    // It holds the agent's functions as well, so it is clearly larger.
    expect(fromPipe!.size).toBeGreaterThan(fromHelp!.size * 1.2);

    // Neither another pipe run nor another side path writes it again.
    await pipe();
    expect((await runRune(['doctor', '--json'], { env })).code).toBe(0);
    expect(cliCaches(env.RUNE_HOME)).toEqual([fromPipe]);
  });

  it('is kept after runs that call a shell tool', async () => {
    const dir = tempDir('rune-e2e-cache-');
    const env = { ...cleanEnv(), RUNE_HOME: join(dir, '.rune') };
    const toolRun = async () => {
      mock.script([
        { toolCalls: [{ name: 'execute_cmd', arguments: { cmd: 'echo hi' } }] },
        { text: 'done' },
      ]);
      const result = await runRune(
        ['--base-url', mock.baseUrl, '--api-key', 'sk-test-cache', '--model', 'm', '--yes'],
        { input: 'say hi', cwd: dir, env },
      );
      expect(result.stdout.trim()).toBe('done');
      expect(result.code).toBe(0);
    };
    await toolRun();
    const written = cliCaches(env.RUNE_HOME);
    expect(written).toHaveLength(1);
    // The tool call loaded the lazy chunk; its cache is written as the main path's too.
    const lazy = cliCaches(env.RUNE_HOME, 'cli-lazy');
    expect(lazy.map(({ name }) => name.endsWith('.partial.v8'))).toEqual([false]);
    // The next start accepts them (a cache stamped with a V8 flag the run changed would be rejected
    // and written again on every run).
    await toolRun();
    expect(cliCaches(env.RUNE_HOME)).toEqual(written);
    expect(cliCaches(env.RUNE_HOME, 'cli-lazy')).toEqual(lazy);
  });
});

/**
 * A V8 code cache for the cli bundle that runs other code: V8 matches a cache to its source by
 * length only, so a same-length script's cache is accepted. Written where rune looks for it.
 */
function plantCache(runeHome: string, mode: number): string {
  const assets = join(dirname(RUNE_BIN), 'assets');
  const code = readFileSync(join(assets, 'js/cli.cjs'), 'utf8');
  const real = `(function (exports, require, module, __filename, __dirname) {${code}\n})`;
  const head =
    '(function (exports, require, module, __filename, __dirname) {process.stdout.write("PLANTED\\n");process.exit(0);/*';
  const evil = `${head}${' '.repeat(real.length - head.length - 5)}*/\n})`;
  const data = new Script(evil, { filename: 'rune:js/cli.cjs' }).createCachedData();
  const manifest = JSON.parse(readFileSync(join(assets, 'manifest.json'), 'utf8')) as {
    sha256: Record<string, string>;
  };
  const dir = join(runeHome, 'cache', 'code');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, `cli-${manifest.sha256['js/cli.cjs']!.slice(0, 20)}-${process.version}.v8`);
  writeFileSync(file, data);
  chmodSync(file, mode);
  return file;
}

describe('cli code cache trust', () => {
  it('is used from a file only this user can write (the control: a planted cache does run)', async () => {
    const runeHome = join(tempDir('rune-e2e-plant-'), '.rune');
    plantCache(runeHome, 0o600);
    const result = await runRune(['--help'], { env: { RUNE_HOME: runeHome } });
    expect(result.stdout).toBe('PLANTED\n');
  });

  it('is never read from a file others can write', async () => {
    const runeHome = join(tempDir('rune-e2e-plant-'), '.rune');
    plantCache(runeHome, 0o666);
    const result = await runRune(['--help'], { env: { RUNE_HOME: runeHome } });
    expect(result.stdout).toContain('Usage: rune');
    expect(result.stdout).not.toContain('PLANTED');
  });

  // Making a folder owned by another uid needs root (CI runs as root).
  it.skipIf(process.getuid?.() !== 0)('is never read from a folder owned by another user', async () => {
    const runeHome = join(tempDir('rune-e2e-plant-'), '.rune');
    const file = plantCache(runeHome, 0o600);
    chownSync(dirname(file), 65534, 65534);
    const result = await runRune(['--help'], { env: { RUNE_HOME: runeHome } });
    expect(result.stdout).toContain('Usage: rune');
    expect(result.stdout).not.toContain('PLANTED');
  });
});
