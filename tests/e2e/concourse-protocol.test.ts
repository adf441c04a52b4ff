// Bad input to the resource: one clear line on stderr, nothing on stdout, a non-zero exit; and the
// argv[0] dispatch through the symlinks. No model is needed: all of it is refused before a run.
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/rune.ts';
import { resourceDir, type Step } from './concourse-harness.ts';

const resource = resourceDir();
const KEY = 'sk-proj-concourseSecretKey0123456789';

function putFolder(): string {
  const base = tempDir('rune-put-');
  const src = join(base, 'src');
  mkdirSync(join(src, 'repo'), { recursive: true });
  writeFileSync(join(src, 'repo', 'prompt.md'), 'What changed?');
  writeFileSync(join(src, 'repo', 'empty.md'), '  \n');
  writeFileSync(join(base, 'outside.md'), 'secret prompt');
  symlinkSync(join(base, 'outside.md'), join(src, 'repo', 'sneaky.md'));
  return src;
}

const cases: [string, Step, unknown, RegExp][] = [
  ['invalid JSON', 'check', '{"source": {', /stdin is not valid JSON/],
  ['empty stdin', 'in', '', /stdin is empty/],
  ['a null source (check)', 'check', { source: null }, /source is null; set source\.prompt/],
  ['a null source (out)', 'out', { source: null, params: { prompt: 'x' } }, /source is null/],
  [
    'unknown keys in source and params',
    'out',
    { source: { prompt: 'x', modle: 'm', api_key: KEY }, params: { prompt: 'x', promptfile: 'y' } },
    /unknown key source\.modle; unknown key params\.promptfile/,
  ],
  [
    'a missing prompt (out)',
    'out',
    { source: { api_key: KEY }, params: {} },
    /params\.prompt or params\.prompt_file is required/,
  ],
  [
    'prompt_file escaping src with ..',
    'out',
    { source: {}, params: { prompt_file: '../outside.md' } },
    /params\.prompt_file "\.\.\/outside\.md" resolves outside/,
  ],
  [
    'prompt_file escaping src through a symlink',
    'out',
    { source: {}, params: { prompt_file: 'repo/sneaky.md' } },
    /params\.prompt_file "repo\/sneaky\.md" resolves outside/,
  ],
  [
    'both prompt and prompt_file',
    'out',
    { source: {}, params: { prompt: 'x', prompt_file: 'repo/prompt.md' } },
    /give params\.prompt or params\.prompt_file, not both/,
  ],
  ['an empty prompt_file', 'out', { source: {}, params: { prompt_file: 'repo/empty.md' } }, /is empty/],
  [
    'stateless in without a prompt',
    'in',
    { source: { api_key: KEY }, version: { ref: 'sha256:1' } },
    /source\.prompt is not set.*skip_download/,
  ],
  [
    'a version with a non-string value',
    'in',
    { source: { prompt: 'x' }, version: { ref: 7 } },
    /version\.ref: must be a string/,
  ],
  [
    'stateless in with a version of another shape',
    'in',
    { source: { api_key: KEY, prompt: 'x' }, version: { run: '3' } },
    /in: the version has no "ref": "sha256:…"; it was not made by the stateless resource \(keys: run\)/,
  ],
  ['an empty version', 'check', { source: { prompt: 'x' }, version: {} }, /version: must not be empty/],
  ['in without a version', 'in', { source: { prompt: 'x' } }, /in: no version given/],
  [
    'watch and prompt together',
    'check',
    {
      source: {
        prompt: 'x',
        notes: { url: 'http://127.0.0.1:9', token: 'rune_abcdef', note: 'n', watch: 'a.md' },
      },
    },
    /source\.prompt and source\.notes\.watch exclude each other/,
  ],
];

describe('the resource refuses bad input', () => {
  it.each(cases)('%s', async (_name, step, input, pattern) => {
    const result = await resource.step(step, input, step === 'out' ? { folder: putFolder() } : {});
    expect(result.stdout).toBe('');
    expect(result.code).toBe(2);
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(pattern);
    expect(lines[0]).toMatch(new RegExp(`^rune: ${step}: `));
    expect(result.stderr).not.toContain(KEY);
  });

  it('refuses a stdin past 16 MiB with one line, before parsing or running anything', async () => {
    const input = JSON.stringify({ source: { api_key: KEY, prompt: 'x'.repeat(17 * 1024 * 1024) } });
    const result = await resource.step('check', input);
    expect(result.stdout).toBe('');
    expect(result.code).toBe(2);
    expect(result.stderr.trimEnd().split('\n')).toEqual([
      expect.stringMatching(/^rune: check: stdin is larger than 16 MiB; .*params\.prompt_file/),
    ]);
  });

  it("keeps an MCP server's env values (credentials) out of the build log when it echoes them", async () => {
    const token = 'pipeline-env-credential-4711-quux';
    const result = await resource.step('check', {
      source: {
        api_key: KEY,
        model: 'm',
        prompt: 'x',
        mcp: [
          {
            name: 'gh',
            required: true,
            command: 'sh',
            args: ['-c', 'echo "bad token $GH_TOKEN" >&2; exit 1'],
            env: { GH_TOKEN: token },
          },
        ],
      },
    });
    expect(result.stdout).toBe('');
    expect(result.code).not.toBe(0);
    // The server did start and its stderr did reach the log: only the value is gone.
    expect(result.stderr).toContain('bad token [REDACTED]');
    expect(result.stderr).not.toContain(token);
    expect(result.stderr).not.toContain(KEY);
  });

  it("keeps credentials in an MCP server's command line out of the build log", async () => {
    const token = 'pipeline-arg-credential-0815-quux';
    const result = await resource.step('check', {
      source: {
        api_key: KEY,
        model: 'm',
        prompt: 'x',
        mcp: [
          {
            name: 'search',
            required: true,
            command: 'sh',
            args: ['-c', 'echo "started as $0 $1" >&2; exit 1', 'search-server', `--api-key=${token}`],
          },
        ],
      },
    });
    expect(result.stdout).toBe('');
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('started as search-server --api-key=[REDACTED]');
    expect(result.stderr).not.toContain(token);
  });

  it('keeps the credential inside an env value (a URL password, Bearer …) out of the build log', async () => {
    const password = 'pipeline-env-url-credential-0815';
    const token = 'pipeline-env-bearer-credential-4711';
    const result = await resource.step('check', {
      source: {
        api_key: KEY,
        model: 'm',
        prompt: 'x',
        mcp: [
          {
            name: 'db',
            required: true,
            command: 'sh',
            args: [
              '-c',
              'echo "pw $(echo $DATABASE_URL | cut -d: -f3) tok $(echo $AUTH_HEADER | cut -d" " -f2)" >&2; exit 1',
            ],
            env: { DATABASE_URL: `postgres://me:${password}@db/x`, AUTH_HEADER: `Bearer ${token}` },
          },
        ],
      },
    });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('tok [REDACTED]');
    expect(result.stderr).not.toContain(password);
    expect(result.stderr).not.toContain(token);
  });

  it("keeps a dash-led password and a URL's Basic token out of the build log, plain env values in it", async () => {
    const password = 'pipeline-dash-credential-0815';
    const urlPassword = 'pipeline-basic-credential-4711';
    const basic = Buffer.from(`me:${urlPassword}`).toString('base64');
    const result = await resource.step('check', {
      source: {
        api_key: KEY,
        model: 'm',
        prompt: 'x',
        mcp: [
          {
            name: 'db',
            required: true,
            command: 'sh',
            args: [
              '-c',
              // What a server prints: its flags, the Basic header it sends for the URL, its settings.
              'echo "pw $2 sent Authorization: Basic $(printf %s "$3" | sed -e "s,.*//,," -e "s,@.*,," | base64) env $DEPLOY_ENV in $REGION" >&2; exit 1',
              'srv',
              '--password',
              `-${password}`,
              `--url=https://me:${urlPassword}@db.example/mcp`,
            ],
            env: { DEPLOY_ENV: 'production', REGION: 'us-east-1' },
          },
        ],
      },
    });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(
      'pw [REDACTED] sent Authorization: Basic [REDACTED] env production in us-east-1',
    );
    for (const secret of [password, urlPassword, basic]) expect(result.stderr).not.toContain(secret);
  });

  it('refuses a notes URL holding a password, without printing it', async () => {
    const result = await resource.step('check', {
      source: {
        notes: { url: 'http://admin:hunter2-notes-pass@127.0.0.1:9/', token: 'rune_tok_abcdefgh', note: 'n' },
      },
    });
    expect(result.stdout).toBe('');
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/source\.notes\.url: must not hold a user name or password/);
    expect(result.stderr).not.toContain('hunter2-notes-pass');
  });

  it('keeps a credential in a notes URL query out of the build log', async () => {
    const result = await resource.step('check', {
      source: {
        notes: {
          url: 'http://127.0.0.1:9/?key=query-credential-0815',
          token: 'rune_tok_abcdefgh',
          note: 'n',
        },
      },
    });
    expect(result.stdout).toBe('');
    expect(result.code).toBe(12);
    expect(result.stderr).toMatch(/notes server .* unreachable/);
    expect(result.stderr).not.toContain('query-credential-0815');
  });

  it('needs the folder argument for in and out', async () => {
    const { run } = await import('../helpers/rune.ts');
    const result = await run(join(resource.dir, 'in'), [], {
      input: JSON.stringify({ source: { prompt: 'x' }, version: { ref: 'sha256:1' } }),
    });
    expect(result.stdout).toBe('');
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/in: missing the destination folder argument/);
  });

  it('skip_download emits the version without running anything', async () => {
    const version = { ref: 'sha256:abc' };
    const dest = tempDir('rune-in-');
    const result = await resource.step(
      'in',
      { source: { prompt: 'x' }, version, params: { skip_download: true } },
      { folder: dest },
    );
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ version, metadata: [{ name: 'skipped', value: 'true' }] });
  });
});

describe('the request as Concourse may send it', () => {
  it('ignores keys beside source, version and params (a newer Concourse may add some)', async () => {
    const version = { ref: 'sha256:abc' };
    const result = await resource.step(
      'in',
      { source: { prompt: 'x' }, version, params: { skip_download: true }, space: 'main', team: { id: 1 } },
      { folder: tempDir('rune-in-') },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ version, metadata: [{ name: 'skipped', value: 'true' }] });
    // Still strict where the pipeline author writes: source and params.
    const typo = await resource.step('check', { source: { prompt: 'x', modle: 'm' }, extra: 1 });
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/unknown key source\.modle/);
    expect(typo.stderr).not.toMatch(/extra/);
  });

  it('check of a stateless resource without a prompt (put-only) lists no versions', async () => {
    const result = await resource.step('check', { source: { api_key: KEY }, version: null });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual([]);
    expect(result.stderr).toContain('nothing to check (a put-only resource');
  });

  it('a missing key is the first thing the step says, before the sandbox summary', async () => {
    const result = await resource.step('check', { source: { model: 'm', prompt: 'x' } });
    expect(result.code).toBe(7);
    expect(result.stdout).toBe('');
    expect(result.stderr.trimEnd().split('\n')).toEqual([
      'rune: no API key and no base URL: set source.api_key (or source.base_url for a server that needs no key) in the resource',
    ]);
    const noModel = await resource.step('check', { source: { api_key: KEY, prompt: 'x' } });
    expect(noModel.code).toBe(2);
    expect(noModel.stderr.trimEnd().split('\n')).toEqual([
      'rune: no model is set: set source.model in the resource',
    ]);
  });

  it('out warns on the build log when the put folder holds nothing (no inputs were mounted)', async () => {
    const empty = tempDir('rune-put-');
    const result = await resource.step(
      'out',
      { source: { model: 'm', prompt: 'x' }, params: { prompt: 'Review repo/.' } },
      { folder: empty },
    );
    expect(result.stderr).toContain(
      `rune: warning: the put folder ${empty} is empty: no inputs were mounted, so the agent sees nothing of this build; list them in the put step's \`inputs:\``,
    );
    // A folder with an input says nothing of the kind.
    const full = await resource.step(
      'out',
      { source: { model: 'm' }, params: { prompt: 'x' } },
      { folder: putFolder() },
    );
    expect(full.stderr).not.toContain('is empty');
  });
});
