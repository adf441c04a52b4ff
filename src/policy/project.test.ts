// The resolved policy travels in the config value: a copy of a narrowed config is still narrowed,
// still knows where each key came from, and is not narrowed (or warned about) twice.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configOrigin, loadConfig, settingName } from '../config/load.ts';
import { createLogger } from '../core/logger.ts';
import { resolveRunPolicy } from './project.ts';

describe('resolveRunPolicy', () => {
  it('gives a config whose copies keep the narrowing and the key origins', () => {
    const home = mkdtempSync(join(tmpdir(), 'rune-project-'));
    const project = join(home, 'proj');
    mkdirSync(join(project, '.rune'), { recursive: true });
    writeFileSync(join(project, '.rune/rune.toml'), '[policy]\nallowed_commands = ["ls -la", "rm"]\n');
    const { config } = loadConfig({
      env: { RUNE_API_KEY: 'sk-env-key-1234567890abcdef' },
      flags: { policy: { allowed_commands: ['ls'] } },
      flagLabels: { 'policy.allowed_commands': '--allow-cmd' },
      readFile: () => '[policy]\nmode = "confirm"\n',
      file: join(home, 'rune.toml'),
    });
    const lines: string[] = [];
    const logger = createLogger({ write: (line) => lines.push(line) });
    const narrowed = resolveRunPolicy(config, project, { HOME: home }, logger);
    expect(lines.join('')).toMatch(/ignored: allowed_commands: rm/);

    const copy = { ...narrowed };
    expect(copy.policy.allowed_commands).toEqual(['ls -la']);
    expect(copy.project_policy).toEqual({
      cwd: project,
      file: join(project, '.rune/rune.toml'),
      ignored: ['allowed_commands: rm'],
    });
    expect(configOrigin(copy, 'api_key')).toBe('env');
    expect(configOrigin(copy, 'policy')).toBe('flag');
    expect(settingName(copy, 'policy.allowed_commands')).toBe('--allow-cmd');
    // Already resolved for this folder: handed back as it is, without a second warning.
    lines.length = 0;
    expect(resolveRunPolicy(copy, project, { HOME: home }, logger)).toBe(copy);
    expect(lines).toEqual([]);
  });
});
