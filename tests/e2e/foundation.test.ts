// The foundation through the built binary: dispatch by invoked name, lazy modes, embedded addons,
// doctor, config errors, and the hidden subcommands staying hidden.
import { execFileSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cleanEnv, RUNE_BIN, requireBinary, run, runRune, tempDir } from '../helpers/rune.ts';

function kernelLandlockAbi(): number {
  const mod = { exports: {} as { probe(): { landlockAbi: number } } };
  process.dlopen(mod, join(import.meta.dirname, '../../native/build/Release/rune_native.node'));
  return mod.exports.probe().landlockAbi;
}

describe('rune --version', () => {
  it('prints the version and loads no mode bundle and no native addon', async () => {
    const home = tempDir();
    const result = await runRune(['--version'], { env: { RUNE_HOME: join(home, 'rune') } });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^rune \d+\.\d+\.\d+/);
    // Loading a mode writes its code cache and loading an addon extracts it, both under RUNE_HOME.
    expect(existsSync(join(home, 'rune'))).toBe(false);
  });

  it('ships an entry bundle that contains none of openai, fastify, better-sqlite3 or the addon loader', () => {
    const meta = JSON.parse(readFileSync(join(RUNE_BIN, '..', 'meta.json'), 'utf8')) as {
      outputs: Record<string, { inputs: Record<string, unknown> }>;
    };
    const main = Object.entries(meta.outputs).find(([file]) => file.endsWith('js/main.cjs'));
    expect(main).toBeDefined();
    const inputs = Object.keys(main![1].inputs);
    expect(inputs.length).toBeGreaterThan(0);
    for (const banned of [
      'node_modules/openai',
      'node_modules/fastify',
      'node_modules/better-sqlite3',
      'src/core/native.ts',
    ]) {
      expect(inputs.filter((input) => input.includes(banned))).toEqual([]);
    }
  });

  it('bundles no package twice (its CommonJS and ES module builds side by side in one bundle)', () => {
    // A lazy `require()` of a package that other modules `import` resolves to the package's other
    // build: both copies ship, and both are set up on a run (zod did, from src/config/schema.ts).
    // (Copies npm nests at other versions under a dependency's own node_modules are another matter.)
    const meta = JSON.parse(readFileSync(join(RUNE_BIN, '..', 'meta.json'), 'utf8')) as {
      outputs: Record<string, { inputs: Record<string, unknown> }>;
    };
    const bundles = Object.entries(meta.outputs).filter(([file]) => file.endsWith('.cjs'));
    expect(bundles.length).toBeGreaterThan(3);
    const twice: string[] = [];
    for (const [file, { inputs }] of bundles) {
      const seen = new Map<string, string>();
      for (const input of Object.keys(inputs).filter((i) => i.includes('node_modules/'))) {
        const module = input
          .slice(input.indexOf('node_modules/'))
          .replace(/\/(cjs|esm|es6|commonjs|module|mjs)\//g, '/~/')
          .replace(/\.(c|m)?js$/, '');
        const other = seen.get(module);
        if (other !== undefined && other !== input) twice.push(`${file}: ${other} and ${input}`);
        seen.set(module, input);
      }
    }
    expect(twice).toEqual([]);
  });

  it('splits the cli into a main bundle and a lazy chunk that share no module', () => {
    // Each module exists once (scripts/cli-chunks.mjs): a copy in both would split its state (the
    // secrets to redact, caches) and its classes (instanceof) in two.
    const meta = JSON.parse(readFileSync(join(RUNE_BIN, '..', 'meta.json'), 'utf8')) as {
      outputs: Record<string, { inputs: Record<string, unknown> }>;
    };
    const inputsOf = (name: string): string[] => {
      const found = Object.entries(meta.outputs).find(([file]) => file.endsWith(`js/${name}.cjs`));
      expect(found, name).toBeDefined();
      return Object.keys(found![1].inputs);
    };
    const cli = new Set(inputsOf('cli'));
    const lazy = inputsOf('cli-lazy');
    // What a one-step answer runs stays in cli; the tools, the session and MCP are in the chunk.
    expect([...cli].filter((input) => input.includes('node_modules/@modelcontextprotocol/'))).toEqual([]);
    expect(lazy).toContain('src/cli/session.ts');
    expect(lazy).toContain('src/tools/execute-cmd.ts');
    expect(cli.has('src/cli/pipe.ts')).toBe(true);
    expect(lazy.filter((input) => cli.has(input))).toEqual([]);
  });

  it('writes the code cache of a mode after its first run and reuses it', async () => {
    const runeHome = join(tempDir(), 'rune');
    await runRune(['--help'], { env: { RUNE_HOME: runeHome } });
    const caches = readdirSync(join(runeHome, 'cache', 'code'));
    expect(caches.some((name) => name.startsWith('cli-'))).toBe(true);
    const file = join(runeHome, 'cache', 'code', caches[0]!);
    const before = statSync(file).mtimeMs;
    const again = await runRune(['--help'], { env: { RUNE_HOME: runeHome } });
    expect(again.code).toBe(0);
    expect(statSync(file).mtimeMs).toBe(before);
  });
});

describe('the binary alone', () => {
  it('reports embedded SQLite with FTS5 and the kernel Landlock ABI from an empty folder and env', () => {
    const folder = tempDir('rune-alone-');
    const home = tempDir('rune-empty-home-');
    copyFileSync(requireBinary(), join(folder, 'rune'));
    const out = execFileSync(
      'env',
      ['-i', 'PATH=/usr/bin:/bin', `HOME=${home}`, './rune', 'doctor', '--json'],
      {
        cwd: folder,
        encoding: 'utf8',
      },
    );
    const report = JSON.parse(out);
    expect(report.singleExecutable).toBe(true);
    expect(report.sqlite).toMatchObject({ ok: true, fts5: true });
    expect(report.sqlite.version).toMatch(/^3\.\d+/);
    expect(report.sqlite.addon.startsWith(join(home, '.rune', 'cache', 'native'))).toBe(true);
    expect(report.sandbox.landlock.abi).toBe(kernelLandlockAbi());
    expect(report.config).toMatchObject({
      file: join(home, '.rune', 'rune.toml'),
      found: false,
      valid: true,
    });
    // The cache folder is private to the user.
    expect(statSync(join(home, '.rune', 'cache', 'native')).mode & 0o077).toBe(0);
  });

  it('falls back to a private temporary folder when the home cache cannot be used', async () => {
    const home = tempDir();
    const elsewhere = tempDir('rune-not-ours-');
    mkdirSync(join(home, 'rune', 'cache'), { recursive: true });
    // Someone planted a symlink where the addon cache belongs: it must not be followed.
    symlinkSync(elsewhere, join(home, 'rune', 'cache', 'native'));
    const result = await runRune(['doctor', '--json'], { env: { RUNE_HOME: join(home, 'rune') } });
    const report = JSON.parse(result.stdout);
    expect(report.sqlite.ok).toBe(true);
    expect(report.cache.notes.join('\n')).toMatch(/symbolic link/);
    expect(readdirSync(elsewhere)).toEqual([]);
  });

  it('reports the --config file in use, not the default one', async () => {
    const dir = tempDir('rune-doctor-config-');
    writeFileSync(join(dir, 'other.toml'), 'max_steps = "many"\n');
    const result = await runRune(['--config', 'other.toml', 'doctor', '--json'], {
      cwd: dir,
      env: { RUNE_HOME: join(dir, 'home') },
    });
    const report = JSON.parse(result.stdout);
    expect(report.config).toMatchObject({ file: join(dir, 'other.toml'), valid: false });
    expect(report.config.problems.join('\n')).toContain('max_steps');
    expect(result.code).toBe(3);
  });

  it('still works when RUNE_HOME cannot be created at all', async () => {
    const result = await runRune(['doctor', '--json'], { env: { RUNE_HOME: '/dev/null/rune' } });
    const report = JSON.parse(result.stdout);
    expect(report.sqlite).toMatchObject({ ok: true, fts5: true });
    expect(report.cache.notes.join('\n')).toMatch(/cannot create \/dev\/null\/rune/);
  });

  it('falls back when RUNE_HOME is under /proc, where mkdir says ENOENT (no endless retry)', async () => {
    const result = await runRune(['doctor', '--json'], {
      env: { RUNE_HOME: '/proc/rune-home' },
      timeoutMs: 20_000,
    });
    expect(result.signal).toBeNull();
    const report = JSON.parse(result.stdout);
    expect(report.sqlite).toMatchObject({ ok: true, fts5: true });
    expect(report.cache.notes.join('\n')).toMatch(/cannot create \/proc\/rune-home/);
  });
});

describe('dispatch by invoked name', () => {
  const badJson = '{"source": ';

  function expectConcourseRejection(
    result: { code: number | null; stdout: string; stderr: string },
    name: string,
  ) {
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(`${name}: stdin is not valid JSON`);
    expect(result.code).not.toBe(0);
  }

  it('through real symlinks named check, in and out', async () => {
    const dir = tempDir();
    for (const name of ['check', 'in', 'out']) {
      symlinkSync(requireBinary(), join(dir, name));
      const result = await run(join(dir, name), name === 'check' ? [] : [dir], {
        input: badJson,
        env: cleanEnv(),
      });
      expectConcourseRejection(result, name);
    }
  });

  it('through a PATH lookup', async () => {
    const dir = tempDir();
    symlinkSync(requireBinary(), join(dir, 'check'));
    const env = { ...cleanEnv(), PATH: `${dir}:/usr/bin:/bin` };
    const result = await run('/bin/sh', ['-c', 'check'], { input: badJson, env });
    expectConcourseRejection(result, 'check');
  });

  it('through exec -a', async () => {
    const result = await run('/bin/bash', ['-c', `exec -a in "${requireBinary()}" /tmp`], {
      input: badJson,
      env: cleanEnv(),
    });
    expectConcourseRejection(result, 'in');
  });

  it('as rune, a prompt word like "check" is not a mode', async () => {
    const result = await runRune(['--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Usage: rune');
  });
});

describe('help and hidden subcommands', () => {
  it('--help lists doctor and none of the sandbox protocol subcommands', async () => {
    const result = await runRune(['--help']);
    expect(result.stdout).toContain('doctor');
    for (const hidden of ['_landlock', '_seccomp', '_net-guard']) expect(result.stdout).not.toContain(hidden);
  });

  it('an unknown flag is a usage error on stderr', async () => {
    const result = await runRune(['--no-such-flag']);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/unknown option/);
  });
});

describe('configuration errors', () => {
  it('names the file and every bad key at once, and exits with the config code', async () => {
    const home = tempDir();
    const file = join(home, 'rune.toml');
    writeFileSync(
      file,
      'max_steps = "many"\ncolour = "blue"\n[policy]\nmode = "allowlist"\nallowed_comands = ["ls"]\n',
    );
    const result = await runRune(['doctor'], { env: { RUNE_HOME: home } });
    expect(result.code).toBe(3);
    const text = result.stdout + result.stderr;
    expect(text).toContain(`${file}: max_steps:`);
    expect(text).toContain(`${file}: colour: unknown key`);
    expect(text).toContain(`${file}: policy.allowed_comands: unknown key`);
  });

  it('reports TOML syntax errors with the line', async () => {
    const home = tempDir();
    writeFileSync(join(home, 'rune.toml'), 'model = "a"\nmax_steps = = 3\n');
    const result = await runRune(['doctor', '--json'], { env: { RUNE_HOME: home } });
    expect(result.code).toBe(3);
    expect(JSON.parse(result.stdout).config.problems[0]).toMatch(/rune\.toml: line 2/);
  });
});
