// What a one-step pipe run loads, through the built binary: none of the modules whose start-up cost
// ADR 0010 took off the pipe-mode path (undici, web streams, tls, zlib, html-to-text's parsers).
// A structural check, not a timing one: bench/pipe.mjs measures the speed.
import { closeSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MockLlm, startMockLlm } from '../helpers/mock-llm.ts';
import { cleanEnv, requireBinary, runRune, tempDir } from '../helpers/rune.ts';

let mock: MockLlm;
beforeAll(async () => {
  requireBinary();
  mock = await startMockLlm();
});
afterAll(() => mock.close());

/** Runs one pipe answer with a preload that writes Node's list of loaded built-in modules at exit. */
async function loadedModules(
  toml = '',
  stdin: 'pipe' | 'file' = 'pipe',
): Promise<{ modules: string[]; stdout: string; code: number | null }> {
  const dir = tempDir('rune-e2e-startup-');
  const runeHome = join(dir, '.rune');
  mkdirSync(runeHome, { recursive: true, mode: 0o700 });
  if (toml) writeFileSync(join(runeHome, 'rune.toml'), toml);
  const out = join(dir, 'modules.json');
  const preload = join(dir, 'record.cjs');
  writeFileSync(
    preload,
    `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(out)}, JSON.stringify(process.moduleLoadList)));\n`,
  );
  const flags = ['--base-url', mock.baseUrl, '--api-key', 'sk-test-startup', '--model', 'm'];
  const env = { ...cleanEnv(), RUNE_HOME: runeHome, NODE_OPTIONS: `--require ${preload}` };
  let result: Awaited<ReturnType<typeof runRune>>;
  if (stdin === 'pipe') result = await runRune(flags, { input: 'what is 2+2', cwd: dir, env });
  else {
    const prompt = join(dir, 'prompt.txt');
    writeFileSync(prompt, 'what is 2+2');
    const fd = openSync(prompt, 'r');
    try {
      result = await runRune(flags, { cwd: dir, env, stdio: [fd, 'pipe', 'pipe'] });
    } finally {
      closeSync(fd);
    }
  }
  return {
    modules: JSON.parse(readFileSync(out, 'utf8')) as string[],
    stdout: result.stdout,
    code: result.code,
  };
}

describe('pipe mode start-up', () => {
  it('answers over node:http without loading undici, web streams, tls or zlib', async () => {
    mock.script([{ text: 'The answer is 4.' }]);
    mock.requests.length = 0;
    const { modules, stdout, code } = await loadedModules();
    expect(stdout.trim()).toBe('The answer is 4.');
    expect(code).toBe(0);
    // The preload really ran: the HTTP client the answer came through is in the list.
    expect(modules).toContain('NativeModule _http_client');
    const unwanted = modules.filter((name) =>
      /undici|webstreams\/readablestream|webstreams\/writablestream|NativeModule tls$|NativeModule zlib$/.test(
        name,
      ),
    );
    expect(unwanted).toEqual([]);
  });

  it.each(['pipe', 'file'] as const)(
    'reads a prompt from a %s on stdin straight from fd 0: no stdin stream, no tty, no DNS resolver',
    async (stdin) => {
      mock.script([{ text: 'The answer is 4.' }]);
      const { modules, stdout, code } = await loadedModules('', stdin);
      expect(stdout.trim()).toBe('The answer is 4.');
      expect(code).toBe(0);
      expect(modules).toContain('NativeModule _http_client');
      // A file on stdin became an fs.ReadStream (with fs/promises and readline's helpers); a
      // terminal check loaded node:tty; node:dns starts c-ares, which reads /etc/resolv.conf.
      const unwanted = modules.filter((name) =>
        /NativeModule (internal\/fs\/streams|internal\/readline\/interface|tty|dns)$/.test(name),
      );
      expect(unwanted).toEqual([]);
    },
  );

  it('RUNE_CPU_PROFILE writes a V8 CPU profile of the run', async () => {
    mock.script([{ text: 'The answer is 4.' }]);
    const dir = tempDir('rune-e2e-profile-');
    const file = join(dir, 'run.cpuprofile');
    const result = await runRune(
      ['--base-url', mock.baseUrl, '--api-key', 'sk-test-profile', '--model', 'm'],
      {
        input: 'what is 2+2',
        cwd: dir,
        env: { ...cleanEnv(), RUNE_HOME: join(dir, '.rune'), RUNE_CPU_PROFILE: file },
      },
    );
    expect(result.stdout.trim()).toBe('The answer is 4.');
    const profile = JSON.parse(readFileSync(file, 'utf8')) as {
      nodes: { callFrame: { url: string } }[];
      samples: number[];
    };
    expect(profile.samples.length).toBeGreaterThan(0);
    // The cli bundle's own frames, by the name bundles.ts compiles it under.
    expect(profile.nodes.some((node) => node.callFrame.url === 'rune:js/cli.cjs')).toBe(true);
  });

  it('fetch_url still reads a gzip-compressed HTML page: its modules load on first use', async () => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' });
      res.end(gzipSync('<html><body><h1>Docs</h1><p>The port is <b>8080</b>.</p></body></html>'));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/page`;
    try {
      mock.script([{ toolCalls: [{ name: 'fetch_url', arguments: { url } }] }, { text: 'done' }]);
      mock.requests.length = 0;
      const { modules, stdout, code } = await loadedModules('[policy]\nallowed_domains = ["127.0.0.1"]\n');
      expect(stdout.trim()).toBe('done');
      expect(code).toBe(0);
      const tool = mock.requests[1]?.body.messages.at(-1);
      expect(tool?.role).toBe('tool');
      expect(tool?.content).toMatch(/The port is 8080\./);
      expect(tool?.content).not.toContain('<p>');
      expect(modules).toContain('NativeModule zlib');
    } finally {
      server.close();
    }
  });
});
