// The README's configuration table is generated from the schema; this fails when they drift.
// Regenerate: RUNE_UPDATE_DOCS=1 npx vitest run src/config/reference.test.ts
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderConfig } from '../cli/init.ts';
import { loadConfig } from './load.ts';
import { configReference, README_MARKERS, referenceTable } from './reference.ts';

const README = join(import.meta.dirname, '..', '..', 'README.md');

describe('the rune.toml reference', () => {
  it('describes every key of the top level, [policy] and [sandbox]', () => {
    const keys = configReference();
    expect(keys.map((k) => k.path)).toEqual(
      expect.arrayContaining(['model', 'max_steps', 'policy.allowed_commands', 'sandbox.env_passthrough']),
    );
    for (const key of keys) expect(key.description, key.path).not.toBe('');
    expect(keys.find((k) => k.path === 'max_steps')?.default).toBe(25);
    expect(keys.find((k) => k.path === 'policy.max_pids')?.default).toBe(512);
  });

  it("is the README's configuration table", () => {
    const text = readFileSync(README, 'utf8');
    const start = text.indexOf(README_MARKERS.start);
    const end = text.indexOf(README_MARKERS.end);
    expect(start, 'README.md lacks the config-reference markers').toBeGreaterThan(-1);
    const wanted = `${README_MARKERS.start}\n${referenceTable()}\n${README_MARKERS.end}`;
    const current = text.slice(start, end + README_MARKERS.end.length);
    if (process.env.RUNE_UPDATE_DOCS && current !== wanted) {
      writeFileSync(README, text.replace(current, wanted));
      return;
    }
    expect(current, 'regenerate: RUNE_UPDATE_DOCS=1 npx vitest run src/config/reference.test.ts').toBe(
      wanted,
    );
  });

  it("is in rune init's template: every key not chosen appears commented with its default, and the file loads", () => {
    const text = renderConfig({ policyMode: 'allowlist', allowedCommands: ['ls'], allowedDomains: [] });
    for (const key of configReference()) {
      if (key.key === 'api_key') continue;
      const line = new RegExp(`^#? ?${key.key}( = |: )`, 'm');
      expect(text, key.path).toMatch(line);
      if (key.default !== undefined && !['mode', 'allowed_commands', 'allowed_domains'].includes(key.key)) {
        expect(text, key.path).toContain(`# ${key.key} = ${JSON.stringify(key.default).replace(/,/g, ', ')}`);
      }
    }
    // Uncommenting every `key = default` line keeps the file valid.
    const uncommented = text.replace(/^# (\w+ = .*?) {2}# .*$/gm, '$1');
    expect(() => loadConfig({ env: {}, readFile: () => uncommented, file: '/x/rune.toml' })).not.toThrow();
  });
});
