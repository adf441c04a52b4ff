import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { whileCollecting } from '../../tests/helpers/gc.ts';
import { startSilentServer } from '../../tests/helpers/silent-server.ts';
import { DEFAULTS, type RuneConfig } from '../config/schema.ts';
import { restrictedAddressReason } from '../core/addresses.ts';
import type { SandboxExecutor } from '../sandbox/types.ts';
import { hostMatches } from './addresses.ts';
import { capText } from './cap.ts';
import { toolEnvironment } from './env.ts';
import { formatCommandResult } from './execute-cmd.ts';
import { parseProcess } from './inspect-process.ts';
import { looksBinary } from './read-file.ts';
import { executeTool, ToolRegistry } from './registry.ts';
import type { ToolContext } from './types.ts';

function context(
  cwd: string,
  overrides: Partial<ToolContext> = {},
  policy: Partial<RuneConfig['policy']> = {},
): ToolContext {
  const config = {
    ...(DEFAULTS as unknown as RuneConfig),
    policy: { ...DEFAULTS.policy, ...policy },
  } as RuneConfig;
  return {
    cwd,
    config,
    executor: {} as SandboxExecutor,
    env: { HOME: cwd },
    readOnlyPaths: [cwd],
    readWritePaths: [],
    protectedPaths: { floor: [], denied: [], unrestricted: false },
    signal: new AbortController().signal,
    ...overrides,
  };
}

const registry = new ToolRegistry();
async function call(name: string, args: Record<string, unknown>, ctx: ToolContext) {
  const tool = registry.get(name)!;
  const parsed = await tool.parse(JSON.stringify(args));
  if (!parsed.ok) return { content: parsed.error, isError: true };
  return executeTool(tool, parsed.args, ctx);
}

describe('read_file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rune-tools-'));
  writeFileSync(join(dir, 'lines.txt'), Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join('\n'));
  writeFileSync(join(dir, 'big.txt'), `${'a'.repeat(100)}\n`.repeat(1000));
  writeFileSync(join(dir, 'bin.dat'), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2, 3]));

  it('reads a file whose single line exceeds the cap in pieces, by bytes, to its last byte', async () => {
    // 100 000 bytes on one line, with multi-byte characters so no piece may split one.
    const long = `${'é€x'.repeat(16_666)}END`;
    writeFileSync(join(dir, 'one-line.json'), `head\n${long}\ntail\n`);
    const first = await call('read_file', { path: 'one-line.json', offset: 2 }, context(dir));
    const note =
      /\[truncated: line 2 alone is (\d+) bytes, over the 32 KiB cap; showing its first \d+ bytes; call read_file with byte_offset=(\d+) to read on\]$/;
    expect(first.content).toMatch(note);
    expect(Number(first.content.match(note)![1])).toBe(Buffer.byteLength(long));
    let text = first.content.replace(/\n\[truncated:[^\]]*\]$/, '');
    let next: number | undefined = Number(first.content.match(note)![2]);
    for (let pieces = 0; next !== undefined; pieces++) {
      expect(pieces).toBeLessThan(10);
      const out = await call('read_file', { path: 'one-line.json', byte_offset: next }, context(dir));
      expect(out.isError).toBeFalsy();
      expect(Buffer.byteLength(out.content)).toBeLessThan(32 * 1024);
      const more = out.content.match(/call read_file with byte_offset=(\d+) to read on\]$/);
      text += out.content.replace(/\n\[(truncated: showing )?bytes [^\]]*\]$/, '');
      next = more ? Number(more[1]) : undefined;
    }
    expect(text).toBe(`${long}\ntail\n`);
    // Without the byte path the line was unreadable: the note always names a way on.
    const whole = await call('read_file', { path: 'one-line.json' }, context(dir));
    expect(whole.content).toMatch(/^head\n\[truncated: showing lines 1-1 of 3 .*offset=2/);
  });

  it('refuses byte_offset with offset or limit, and past the end', async () => {
    const both = await call('read_file', { path: 'lines.txt', byte_offset: 1, limit: 2 }, context(dir));
    expect(both).toMatchObject({ isError: true });
    expect(both.content).toMatch(/give it alone/);
    const past = await call('read_file', { path: 'lines.txt', byte_offset: 10_000 }, context(dir));
    expect(past.content).toMatch(/past the end/);
  });

  it('reads a range of lines and says which', async () => {
    const out = await call('read_file', { path: 'lines.txt', offset: 3, limit: 2 }, context(dir));
    expect(out.content).toBe('line 3\nline 4\n[lines 3-4 of 10]');
  });

  it('caps at 32 KiB with a note that says how to read on', async () => {
    const out = await call('read_file', { path: 'big.txt' }, context(dir));
    expect(Buffer.byteLength(out.content)).toBeLessThan(33 * 1024);
    expect(out.content).toMatch(
      /\[truncated: showing lines 1-\d+ of 1000 \(32 KiB cap\); call read_file with offset=\d+/,
    );
  });

  it('describes binary files instead of dumping them', async () => {
    const out = await call('read_file', { path: 'bin.dat' }, context(dir));
    expect(out.content).toMatch(/is a binary file \(8 bytes\)/);
    expect(looksBinary(Buffer.from('héllo wörld', 'utf8'))).toBe(false);
    expect(looksBinary(Buffer.from([0xff, 0xfe, 0x41]))).toBe(true);
  });

  it('reads /proc files, whose stat size is 0, to the end', async () => {
    const out = await call('read_file', { path: '/proc/self/status' }, context(dir));
    expect(out.isError).toBeFalsy();
    expect(out.content).toMatch(/^Name:\t/);
    expect(out.content).toContain(`Pid:\t${process.pid}`);
  });

  it('reports a missing file and a folder as errors', async () => {
    expect(await call('read_file', { path: 'nope' }, context(dir))).toMatchObject({ isError: true });
    expect((await call('read_file', { path: '.' }, context(dir))).content).toMatch(
      /is a directory; use list_dir/,
    );
  });
});

describe('write_file and list_dir', () => {
  it('writes atomically, keeps the mode of the file it replaces, creates parents', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rune-tools-'));
    writeFileSync(join(dir, 'run.sh'), 'old');
    chmodSync(join(dir, 'run.sh'), 0o755);
    const out = await call('write_file', { path: 'run.sh', content: 'new' }, context(dir));
    expect(out.content).toMatch(/wrote 3 bytes/);
    expect(readFileSync(join(dir, 'run.sh'), 'utf8')).toBe('new');
    expect(statSync(join(dir, 'run.sh')).mode & 0o777).toBe(0o755);
    await call('write_file', { path: 'a/b/c.txt', content: 'x' }, context(dir));
    expect(readFileSync(join(dir, 'a/b/c.txt'), 'utf8')).toBe('x');
  });

  it("shows the diff of the file it replaces, never of a link's target, never waiting on a FIFO", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rune-tools-'));
    const outside = mkdtempSync(join(tmpdir(), 'rune-tools-outside-'));
    writeFileSync(join(dir, 'a.txt'), 'old line\n');
    writeFileSync(join(outside, 'secret'), 'SECRET-LINE\n');
    symlinkSync(join(outside, 'secret'), join(dir, 'link.txt'));
    execFileSync('mkfifo', [join(dir, 'fifo.txt')]);
    const tool = registry.get('write_file')!;
    expect(await tool.preview!({ path: 'a.txt', content: 'new line\n' }, context(dir))).toMatch(
      /-old line\n\+new line/,
    );
    expect(await tool.preview!({ path: 'link.txt', content: 'x\n' }, context(dir))).toBeUndefined();
    expect(await tool.preview!({ path: 'fifo.txt', content: 'x\n' }, context(dir))).toBeUndefined();
    expect(readFileSync(join(outside, 'secret'), 'utf8')).toBe('SECRET-LINE\n');
  });

  it('lists folders with a slash, links with @, files with sizes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rune-tools-'));
    writeFileSync(join(dir, 'f.txt'), 'abc');
    symlinkSync('f.txt', join(dir, 'link'));
    await call('write_file', { path: 'sub/x', content: '' }, context(dir));
    const out = await call('list_dir', { path: '.' }, context(dir));
    expect(out.content).toBe('f.txt  (3 bytes)\nlink@\nsub/');
  });
});

describe('argument validation', () => {
  it('rejects extra keys, wrong types and inspect_process without exactly one selector', async () => {
    await expect(registry.get('write_file')!.parse('{"path":"x"}')).resolves.toMatchObject({ ok: false });
    await expect(registry.get('list_dir')!.parse('{"path":"x","deep":true}')).resolves.toMatchObject({
      ok: false,
    });
    await expect(registry.get('inspect_process')!.parse('{}')).resolves.toMatchObject({ ok: false });
    await expect(registry.get('inspect_process')!.parse('{"pid":1,"name":"x"}')).resolves.toMatchObject({
      ok: false,
    });
    await expect(registry.get('inspect_process')!.parse('{"pid":1}')).resolves.toMatchObject({ ok: true });
  });

  it('every built-in has an object JSON Schema with its properties', () => {
    for (const tool of registry.list()) {
      expect(tool.definition.parameters.type, tool.definition.name).toBe('object');
      expect(tool.definition.parameters.$schema).toBeUndefined();
    }
    expect(registry.get('read_file')!.definition.parameters).toMatchObject({
      required: ['path'],
      properties: { path: { type: 'string' }, offset: { type: 'integer' } },
    });
  });

  it('an MCP tool cannot shadow a built-in', () => {
    const r = new ToolRegistry();
    const tool = {
      definition: { name: 'read_file', description: '', parameters: {} },
      source: 'mcp' as const,
      execute: async () => ({ content: '' }),
    };
    expect(() => r.add(tool)).toThrow(/cannot replace/);
  });
});

describe('inspect_process', () => {
  it('parses /proc status and cmdline', () => {
    const info = parseProcess(
      42,
      'Name:\tnode\nState:\tS (sleeping)\nPPid:\t1\nUid:\t1000\t1000\t1000\t1000\nThreads:\t7\nVmRSS:\t  51200 kB\n',
      'node\0server.js\0--port\0'.concat('80\0'),
    );
    expect(info).toEqual({
      pid: 42,
      name: 'node',
      state: 'S (sleeping)',
      ppid: 1,
      uid: 1000,
      threads: 7,
      rssKiB: 51200,
      cmdline: 'node server.js --port 80',
    });
  });

  it.each([
    // Attack: another process's command line holds a credential the model should not see.
    ['mysql\0--password=hunter2-db\0', 'mysql --password=[REDACTED]'],
    ['rune\0--api-key\0k3y-v4lue-xyz\0-p\0hi\0', 'rune --api-key [REDACTED] -p hi'],
    [
      'curl\0-H\0Authorization: Bearer abc.def\0https://u:pa55@host/x\0',
      'curl -H Authorization: [REDACTED] https://u:[REDACTED]@host/x',
    ],
    [
      'app\0--client-secret\0s3cr3t\0DB_PASSWORD=pw\0--token=t0k\0',
      'app --client-secret [REDACTED] DB_PASSWORD=[REDACTED] --token=[REDACTED]',
    ],
    ['ls\0--color=auto\0', 'ls --color=auto'],
  ])('hides secret values in a command line (%j)', (cmdline, shown) => {
    expect(parseProcess(7, 'Name:\tx\n', cmdline).cmdline).toBe(shown);
  });

  it('finds this process by pid', async () => {
    const out = await call('inspect_process', { pid: process.pid }, context(tmpdir()));
    expect(out.content).toContain(`pid ${process.pid}:`);
  });
});

describe('execute_cmd formatting, caps and env', () => {
  it('says when output was cut and when the command timed out', () => {
    const text = formatCommandResult(
      {
        exitCode: null,
        signal: 'SIGKILL',
        stdout: 'partial',
        stderr: '',
        stdoutDropped: 100,
        stderrDropped: 0,
        timedOut: true,
        cancelled: false,
        layers: [],
        durationMs: 1,
      },
      30,
    );
    expect(text).toMatch(/timed out after 30 s; the whole process group was killed/);
    expect(text).toMatch(/\[truncated: stdout was cut at 16384 bytes; 100 more bytes dropped\]/);
    expect(text).toMatch(/stderr: \(empty\)/);
  });

  it('caps any text on a character boundary with a note', () => {
    const out = capText('é'.repeat(100), 51);
    expect(out.startsWith('é'.repeat(25))).toBe(true);
    expect(out).toMatch(/\[truncated: output was 200 bytes; the last 150 bytes are not shown\]/);
  });

  it('passes the allow list and the passthrough names, nothing else', () => {
    const env = toolEnvironment(
      {
        PATH: '/bin',
        OPENAI_API_KEY: 'x',
        GITHUB_TOKEN: 'y',
        RUNE_HOME: '/r',
        MY_SECRET: 'z',
        KEEP_TOKEN: 'k',
        DATABASE_URL: 'postgres://u:pw@db/x',
      },
      ['KEEP_TOKEN'],
    );
    expect(env).toEqual({ PATH: '/bin', KEEP_TOKEN: 'k' });
  });

  it('drops CDPATH, so `cd NAME` goes where the policy judged it would', () => {
    expect(toolEnvironment({ PATH: '/bin', CDPATH: '/home/u' }, [])).toEqual({ PATH: '/bin' });
  });
});

describe('fetch_url', () => {
  let server: Server;
  let base: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/page') {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(
          '<html><head><script>evil()</script></head><body><h1>Title</h1><p>Hello <a href="/x">link</a></p></body></html>',
        );
      } else if (req.url === '/redirect-away') {
        res.writeHead(302, { location: 'http://elsewhere.example/' });
        res.end();
      } else if (req.url === '/redirect-home') {
        res.writeHead(301, { location: '/page' });
        res.end();
      } else if (req.url === '/huge') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('z'.repeat(3 * 1024 * 1024));
      } else {
        res.writeHead(404);
        res.end('missing');
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const allowLocal = (dir: string) => context(dir, {}, { allowed_domains: ['127.0.0.1'] });

  it('refuses loopback, private, link-local and metadata addresses unless listed literally', async () => {
    const out = await call('fetch_url', { url: `${base}/page` }, context(tmpdir()));
    expect(out).toMatchObject({ isError: true });
    expect(out.content).toMatch(/refused to connect to 127\.0\.0\.1/);
    const meta = await call(
      'fetch_url',
      { url: 'http://169.254.169.254/latest/meta-data/' },
      context(tmpdir()),
    );
    expect(meta.content).toMatch(/link-local/);
    const rebound = context(tmpdir(), { lookup: async () => [{ address: '10.1.2.3', family: 4 }] });
    expect((await call('fetch_url', { url: 'http://innocent.example/' }, rebound)).content).toMatch(
      /refused to connect to innocent\.example: 10\.1\.2\.3/,
    );
    expect((await call('fetch_url', { url: 'file:///etc/passwd' }, context(tmpdir()))).content).toMatch(
      /only http and https/,
    );
  });

  it('turns HTML into readable text and follows a same-host redirect', async () => {
    const out = await call('fetch_url', { url: `${base}/redirect-home` }, allowLocal(tmpdir()));
    expect(out.isError).toBeFalsy();
    expect(out.content).toMatch(/redirected 301/);
    expect(out.content).toMatch(/TITLE/i);
    expect(out.content).toMatch(/Hello link \[.*\/x\]/);
    expect(out.content).not.toContain('evil()');
  });

  it('re-checks a redirect to another host against allowed_domains', async () => {
    const out = await call('fetch_url', { url: `${base}/redirect-away` }, allowLocal(tmpdir()));
    expect(out.content).toMatch(/elsewhere\.example is not in policy\.allowed_domains/);
  });

  it('a redirect to another port of the same host needs that port on the list', async () => {
    // Attack: allowed_domains pins a port ("host:8443"); a redirect on that host moves to another port.
    const other = createServer((_req, res) => res.end('OTHER-PORT-BODY'));
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const otherPort = (other.address() as AddressInfo).port;
    const hop = createServer((_req, res) => {
      res.writeHead(302, { location: `http://127.0.0.1:${otherPort}/` });
      res.end();
    });
    await new Promise<void>((resolve) => hop.listen(0, '127.0.0.1', resolve));
    const hopPort = (hop.address() as AddressInfo).port;
    try {
      const pinned = context(tmpdir(), {}, { allowed_domains: [`127.0.0.1:${hopPort}`] });
      const out = await call('fetch_url', { url: `http://127.0.0.1:${hopPort}/` }, pinned);
      expect(out.content).not.toContain('OTHER-PORT-BODY');
      expect(out.content).toMatch(/is not in policy\.allowed_domains/);
      const both = context(
        tmpdir(),
        {},
        { allowed_domains: [`127.0.0.1:${hopPort}`, `127.0.0.1:${otherPort}`] },
      );
      expect((await call('fetch_url', { url: `http://127.0.0.1:${hopPort}/` }, both)).content).toContain(
        'OTHER-PORT-BODY',
      );
    } finally {
      other.close();
      hop.close();
    }
  });

  it('caps the download and the result', async () => {
    const out = await call('fetch_url', { url: `${base}/huge` }, allowLocal(tmpdir()));
    expect(out.content).toMatch(/only the first 2097152 bytes were downloaded/);
    expect(Buffer.byteLength(out.content)).toBeLessThan(33 * 1024);
  });

  it('ends a fetch from a server that accepts and never answers at its deadline, under forced GC', async () => {
    const silent = await startSilentServer();
    try {
      const out = await whileCollecting(
        call(
          'fetch_url',
          { url: `${silent.url}/slow` },
          context(tmpdir(), { fetchTimeoutMs: 300 }, { allowed_domains: ['127.0.0.1'] }),
        ),
      );
      expect(out.isError).toBe(true);
      expect(out.content).toContain(`no complete answer from 127.0.0.1:${silent.port} within 300 ms`);
      expect(silent.accepted).toBe(1);
    } finally {
      await silent.close();
    }
  });

  it('classifies addresses and matches domain patterns', () => {
    expect(restrictedAddressReason('8.8.8.8')).toBeUndefined();
    expect(restrictedAddressReason('::ffff:127.0.0.1')).toBeDefined();
    expect(restrictedAddressReason('::ffff:7f00:1')).toBeDefined();
    // How the URL parser spells http://[::127.0.0.1]/ and http://[::ffff:0:10.0.0.1]/.
    expect(restrictedAddressReason(new URL('http://[::127.0.0.1]/').hostname)).toBeDefined();
    expect(restrictedAddressReason(new URL('http://[::ffff:0:10.0.0.1]/').hostname)).toBeDefined();
    expect(restrictedAddressReason('64:ff9b::a9fe:a9fe')).toMatch(/link-local/);
    expect(restrictedAddressReason('fd00:ec2::254')).toBeDefined();
    expect(restrictedAddressReason('2606:4700::1111')).toBeUndefined();
    expect(hostMatches('api.github.com', ['*.github.com'])).toBe(true);
    expect(hostMatches('github.com', ['*.github.com'])).toBe(false);
    expect(hostMatches('evilgithub.com', ['*.github.com'])).toBe(false);
  });
});
