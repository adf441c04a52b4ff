import { describe, expect, it } from 'vitest';
import { isRuneError, type RuneError } from '../core/errors.ts';
import { clearSecretsForTests, redact } from '../core/redact.ts';
import {
  configOrigin,
  deriveConfig,
  loadConfig,
  presentKeysSchema,
  settingName,
  withDefaults,
} from './load.ts';
import { CONFIG_PROVENANCE, configLayerSchema } from './schema.ts';

const FILE = '/home/u/.rune/rune.toml';

function load(text: string | undefined, env: NodeJS.ProcessEnv = {}, flags = {}) {
  return loadConfig({
    env: { HOME: '/home/u', ...env },
    flags,
    flagLabels: { max_steps: '--max-steps', model: '--model' },
    readFile: (path) => {
      if (path !== FILE || text === undefined) throw Object.assign(new Error('missing'), { code: 'ENOENT' });
      return text;
    },
  });
}

function problems(fn: () => unknown): string[] {
  try {
    fn();
  } catch (error) {
    if (isRuneError(error)) return [...(error as RuneError).details];
    throw error;
  }
  throw new Error('expected a config error');
}

function failureCode(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (isRuneError(error)) return (error as RuneError).code;
    throw error;
  }
  throw new Error('expected a config error');
}

describe('the exit code of a failed load (docs/exit-codes.md)', () => {
  it.each([
    [
      'a bad flag value is a usage error, like every other',
      () => load(undefined, {}, { max_steps: 'x' }),
      'USAGE',
    ],
    ['a bad file is invalid configuration', () => load('max_steps = "x"\n'), 'CONFIG_INVALID'],
    [
      'a bad RUNE_* variable is invalid configuration',
      () => load(undefined, { RUNE_MAX_STEPS: 'x' }),
      'CONFIG_INVALID',
    ],
    [
      'a file and a flag both bad: the file decides',
      () => load('colour = 1\n', {}, { max_steps: 'x' }),
      'CONFIG_INVALID',
    ],
    [
      'an explicit --config file that cannot be read is an I/O error',
      () => loadConfig({ file: '/nope/rune.toml', env: {} }),
      'IO',
    ],
    [
      'an unreadable file beats bad flags',
      () => loadConfig({ file: '/nope/rune.toml', env: {}, flags: { max_steps: 'x' } as never }),
      'IO',
    ],
  ])('%s', (_name, fn, code) => {
    expect(failureCode(fn)).toBe(code);
  });

  it('still lists every problem when the code is USAGE', () => {
    expect(problems(() => load(undefined, {}, { max_steps: 'x', model: 3 }))).toHaveLength(2);
  });
});

describe('loadConfig', () => {
  it('gives the defaults when there is no file', () => {
    const { config, fileFound, file } = load(undefined);
    expect(file).toBe(FILE);
    expect(fileFound).toBe(false);
    expect(config.policy.mode).toBe('allowlist');
    expect(config.max_steps).toBe(25);
    expect(config.max_output_tokens).toBe(8192);
    expect(config.sandbox.command_timeout_secs).toBe(30);
  });

  it('takes an empty layer as valid without the schema, which must agree (every layer key optional)', () => {
    // loadConfig skips zod for {}: sound only while the schema accepts {} unchanged.
    expect(configLayerSchema().safeParse({})).toEqual({ success: true, data: {} });
    const empty = load(undefined, {}, {}).config;
    const plain = (value: unknown) => JSON.parse(JSON.stringify(value));
    expect(plain(empty)).toEqual(plain(load('', {}, {}).config));
    // A non-empty layer is still checked.
    expect(problems(() => load(undefined, {}, { max_steps: -1 } as never)).join('\n')).toMatch(/max-steps/);
  });

  it('layers defaults < file < env < flags, table by table', () => {
    const { config } = load(
      'model = "file-model"\nmax_steps = 5\n[policy]\nallowed_commands = ["ls"]\nmode = "confirm"\n',
      { RUNE_MODEL: 'env-model', RUNE_POLICY_MODE: 'allowlist' },
      { max_steps: 9 },
    );
    expect(config.model).toBe('env-model');
    expect(config.max_steps).toBe(9);
    expect(config.policy.mode).toBe('allowlist');
    // Keys of a table not overridden survive from the file.
    expect(config.policy.allowed_commands).toEqual(['ls']);
    expect(config.policy.max_pids).toBe(512);
  });

  it('registers the credentials it loads as secrets, whichever mode loads them', () => {
    load(
      'api_key = "file-key-plain-words"\n[notes.github]\nclient_id = "id"\nclient_secret = "gh-secret-plain-words"\n',
    );
    expect(redact('file-key-plain-words gh-secret-plain-words')).toBe('[REDACTED] [REDACTED]');
    clearSecretsForTests();
  });

  it("registers a remote MCP server's URL query credential and credential headers", () => {
    load(
      '[[mcp]]\nname = "search"\nurl = "https://mcp.example.com/mcp?api_key=url-key-plain-words&mode=fast"\nheaders = { "X-Search-Key" = "header-key-plain-words", Accept = "text/event-stream" }\n',
    );
    expect(redact('url-key-plain-words header-key-plain-words text/event-stream')).toBe(
      '[REDACTED] [REDACTED] text/event-stream',
    );
    clearSecretsForTests();
  });

  it('returns a frozen object', () => {
    const { config } = load('[policy]\nallowed_commands = ["ls"]\n');
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.policy.allowed_commands)).toBe(true);
  });

  it('reports every problem of every layer at once', () => {
    const found = problems(() =>
      load(
        'max_steps = "many"\ncolour = 1\n[policy]\nmode = "yolo"\n',
        { RUNE_MAX_STEPS: 'lots' },
        { model: '' },
      ),
    );
    expect(found).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^\/home\/u\/\.rune\/rune\.toml: max_steps: .*number/),
        `${FILE}: colour: unknown key`,
        expect.stringMatching(/^\/home\/u\/\.rune\/rune\.toml: policy\.mode: /),
        expect.stringMatching(/^RUNE_MAX_STEPS: .*number/),
        expect.stringMatching(/^--model: /),
      ]),
    );
    expect(found).toHaveLength(5);
  });

  it('never replaces a bad security setting with a default', () => {
    expect(problems(() => load('[policy]\nmode = "off"\n'))[0]).toMatch(/policy\.mode/);
    expect(problems(() => load('[sandbox]\nmode = "maybe"\n'))[0]).toMatch(/sandbox\.mode/);
  });

  it('reports TOML syntax errors with line and column', () => {
    expect(problems(() => load('a = [1,\n'))[0]).toMatch(
      /^\/home\/u\/\.rune\/rune\.toml: line \d+, column \d+: /,
    );
  });

  it('uses RUNE_HOME for the file and requires an explicit --config file to exist', () => {
    expect(loadConfig({ env: { RUNE_HOME: '/x' }, readFile: () => '' }).file).toBe('/x/rune.toml');
    expect(problems(() => loadConfig({ file: '/nope/rune.toml', env: {} }))[0]).toMatch(
      /^\/nope\/rune\.toml: cannot read/,
    );
  });

  it('adds up MCP servers from the file and the flags', () => {
    const { config } = load(
      '[[mcp]]\nname = "a"\ncommand = "x"\n',
      {},
      { mcp: [{ name: 'b', command: 'y' }] },
    );
    expect(config.mcp.map((server) => server.name)).toEqual(['a', 'b']);
  });

  it('keeps the origin of each key on derived copies (project narrowing must not change key precedence)', () => {
    const { config } = load('api_key = "file-key-123456"\n', {}, { model: 'm' });
    expect(configOrigin(config, 'api_key')).toBe('file');
    const derived = deriveConfig(config, { policy: { ...config.policy, allowed_commands: [] } });
    expect(derived).not.toBe(config);
    expect(Object.isFrozen(derived.policy)).toBe(true);
    expect(configOrigin(derived, 'api_key')).toBe('file');
    expect(configOrigin(derived, 'model')).toBe('flag');
  });

  it('carries origins and flag spellings in the config itself: plain copies keep them, dumps do not show them', () => {
    const { config } = load('api_key = "file-key-123456"\n', { RUNE_MODEL: 'env-model' }, { max_steps: 4 });
    const copies = [{ ...config }, Object.assign({}, config), { ...config, trace: '/t' }];
    for (const copy of copies) {
      expect(configOrigin(copy, 'api_key')).toBe('file');
      expect(configOrigin(copy, 'model')).toBe('env');
      expect(configOrigin(copy, 'max_steps')).toBe('flag');
      expect(settingName(copy, 'model')).toBe('RUNE_MODEL');
      expect(settingName(copy, 'max_steps')).toBe('--max-steps');
    }
    expect(Object.isFrozen(config[CONFIG_PROVENANCE])).toBe(true);
    expect(Object.keys(config)).not.toContain(String(CONFIG_PROVENANCE));
    expect(JSON.stringify(config)).not.toMatch(/origins|provenance/);
    // A config that was never loaded knows no origins and names keys as rune.toml does.
    const built = withDefaults({ model: 'm' });
    expect(configOrigin(built, 'model')).toBeUndefined();
    expect(settingName(built, 'model')).toBe('model');
  });
});

describe('a layer is checked against the keys it has (start-up: the tables are not built for flags)', () => {
  const LAYERS: [string, unknown][] = [
    ['scalars', { model: 'm', base_url: 'http://127.0.0.1:1/v1', api_key: 'sk-x' }],
    ['a bad URL and a bad number', { base_url: 'localhost:8080/v1', max_steps: 0 }],
    ['an unknown key beside a known one', { model: 'm', modle: 'n' }],
    ['only unknown keys', { nope: 1, __proto__x: 2 }],
    ['a table', { policy: { mode: 'confirm', allowed_commands: ['ls'] } }],
    ['a bad table value', { sandbox: { mode: 'sometimes' } }],
    ['an unknown key inside a table', { policy: { mode: 'confirm', colour: 'red' } }],
    ['an MCP list', { mcp: [{ name: 'fs', command: 'npx' }] }],
    ['a table that is not one', { notes: 3 }],
    ['not an object', ['model']],
    ['null', null],
  ];
  it.each(LAYERS)('%s: the same result and messages as the whole schema', (_name, raw) => {
    const narrowed = presentKeysSchema(raw).safeParse(raw, { jitless: true });
    const whole = configLayerSchema().safeParse(raw, { jitless: true });
    expect(narrowed.success).toBe(whole.success);
    expect(narrowed.data).toEqual(whole.data);
    expect(narrowed.error?.issues).toEqual(whole.error?.issues);
  });

  it('leaves out the keys a layer does not have', () => {
    expect(Object.keys(presentKeysSchema({ model: 'm', api_key: 'k', stray: 1 }).shape)).toEqual([
      'model',
      'api_key',
    ]);
  });
});
