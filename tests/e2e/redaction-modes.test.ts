// A secret registered inside a mode's bundle stays secret in the error that escapes to main.ts,
// which is a bundle of its own. The key has no provider shape, so only the registry can catch it;
// a required MCP server that prints what it was given on its way down puts it in the error (the
// notes server: a refused chat workspace whose path holds it).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runRune, tempDir } from '../helpers/rune.ts';
import { resourceDir } from './concourse-harness.ts';

const KEY = 'plain-words-secret-42';
// Exits during start-up after writing its environment's K to stderr, which rune quotes.
const leaky = {
  name: 'leaky',
  command: '/bin/sh',
  args: ['-c', 'echo "got $K" >&2; exit 3'],
  env: { K: KEY },
  required: true,
};

describe('a registered secret in an error that reaches the entry point', () => {
  it('is redacted for the agent CLI (the key from RUNE_API_KEY)', async () => {
    const home = tempDir('rune-home-');
    mkdirSync(join(home, '.rune'));
    writeFileSync(
      join(home, '.rune', 'rune.toml'),
      `[[mcp]]\nname = "leaky"\ncommand = "/bin/sh"\nargs = ${JSON.stringify(leaky.args)}\nenv = { K = "${KEY}" }\nrequired = true\n`,
    );
    const result = await runRune(['hi'], {
      cwd: tempDir(),
      env: { HOME: home, RUNE_API_KEY: KEY, RUNE_BASE_URL: 'http://127.0.0.1:9/v1', RUNE_MODEL: 'm' },
    });
    expect(result.code).toBe(11);
    expect(result.stderr).toContain('got [REDACTED]');
    expect(result.stderr).not.toContain(KEY);
  });

  it('is redacted for the notes server (the key from [notes.github] client_secret)', async () => {
    const home = tempDir('rune-home-');
    const runeDir = join(home, '.rune');
    mkdirSync(runeDir);
    // A chat workspace inside RUNE_HOME is refused at start, and the refusal quotes its path.
    writeFileSync(
      join(runeDir, 'rune.toml'),
      `[notes]\nworkspace = "${join(runeDir, KEY)}"\n[notes.github]\nclient_id = "id"\nclient_secret = "${KEY}"\n`,
    );
    const result = await runRune(['notes', '--port', '0'], { cwd: tempDir(), env: { HOME: home } });
    expect(result.code).toBe(3);
    expect(result.stderr).toContain(`${runeDir}/[REDACTED]`);
    expect(result.stderr).not.toContain(KEY);
  });

  it('is redacted for the Concourse resource (the key from source.api_key)', async () => {
    const resource = resourceDir();
    const result = await resource.step('check', {
      source: { api_key: KEY, base_url: 'http://127.0.0.1:9/v1', model: 'm', prompt: 'hi', mcp: [leaky] },
    });
    expect(result.code).toBe(11);
    expect(result.stderr).toContain('got [REDACTED]');
    expect(result.stderr).not.toContain(KEY);
    expect(result.stdout).not.toContain(KEY);
  });
});
