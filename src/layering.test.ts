// The layering of src/ is enforced by `npm run lint`: biome's noRestrictedImports per folder
// (biome.json's overrides) and dpdm's cycle check (`npm run cycles`). These tests feed each a
// fixture that breaks the rule, and one that keeps it, so a rule that stops biting fails here.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');
const BIN = join(ROOT, 'node_modules', '.bin');

/**
 * biome lint of `source` as the file at `path` of a copy of the repository's layout: biome.json
 * (its overrides match by path) in a temporary folder holding only the fixture.
 */
function lintAs(path: string, source: string): { ok: boolean; output: string } {
  const dir = mkdtempSync(join(tmpdir(), 'rune-layering-'));
  const config = JSON.parse(readFileSync(join(ROOT, 'biome.json'), 'utf8'));
  delete config.$schema;
  delete config.vcs;
  writeFileSync(join(dir, 'biome.json'), JSON.stringify(config));
  mkdirSync(dirname(join(dir, path)), { recursive: true });
  writeFileSync(join(dir, path), source);
  const result = spawnSync(join(BIN, 'biome'), ['lint', path], { cwd: dir, encoding: 'utf8' });
  return { ok: result.status === 0, output: `${result.stdout}${result.stderr}` };
}

describe('per-folder import rules (biome noRestrictedImports)', () => {
  const cases: Array<[file: string, source: string, refused: boolean]> = [
    ['src/config/fixture.ts', "import { x } from '../policy/gate.ts';\nexport const y = x;\n", true],
    ['src/config/fixture.ts', "import { x } from '../core/errors.ts';\nexport const y = x;\n", false],
    ['src/core/fixture.ts', "import { x } from '../config/load.ts';\nexport const y = x;\n", true],
    ['src/policy/fixture.ts', "import { x } from '../sandbox/env.ts';\nexport const y = x;\n", true],
    ['src/sandbox/fixture.ts', "import { x } from '../policy/paths.ts';\nexport const y = x;\n", false],
    ['src/sandbox/fixture.ts', "import OpenAI from 'openai';\nexport const y = OpenAI;\n", true],
    ['src/notes/fixture.ts', "import { x } from '../cli/agent.ts';\nexport const y = x;\n", true],
    ['src/concourse/fixture.ts', "import { x } from '../cli/agent.ts';\nexport const y = x;\n", true],
    ['src/tools/walk/fixture.ts', "import { x } from '../../agent/run.ts';\nexport const y = x;\n", true],
    ['src/tools/walk/fixture.ts', "import { x } from '../../policy/paths.ts';\nexport const y = x;\n", false],
    ['src/cli/fixture.ts', "import { x } from '../notes/server.ts';\nexport const y = x;\n", true],
    ['src/cli/fixture.ts', "import { x } from '../mount/serve.ts';\nexport const y = x;\n", false],
    ['src/mount/fixture.ts', "import { x } from '../cli/agent.ts';\nexport const y = x;\n", true],
    ['src/mount/fixture.ts', "import { x } from '../agent/tool-calls.ts';\nexport const y = x;\n", false],
    ['src/agent/fixture.ts', "import { x } from '../mount/serve.ts';\nexport const y = x;\n", true],
    ['web/src/fixture.ts', "import { readFileSync } from 'node:fs';\nexport const y = readFileSync;\n", true],
  ];
  it.each(cases)('%s: %j refused: %s', (file, source, refused) => {
    const { ok, output } = lintAs(file, source);
    expect(ok, output).toBe(!refused);
    if (refused) expect(output).toContain('noRestrictedImports');
  });
});

describe('function length (biome noExcessiveLinesPerFunction: at most 150 lines in src/, tests aside)', () => {
  const fn = (lines: number) =>
    `export function long(n: number): number {\n${'  n += 1;\n'.repeat(lines - 3)}  return n;\n}\n`;
  it.each([
    ['src/agent/fixture.ts', 160, true],
    ['src/agent/fixture.ts', 140, false],
    ['src/agent/fixture.test.ts', 400, false],
  ] as const)('%s with a %i-line function refused: %s', (file, lines, refused) => {
    const { ok, output } = lintAs(file, fn(lines));
    expect(ok, output).toBe(!refused);
    if (refused) expect(output).toContain('noExcessiveLinesPerFunction');
  });
});

describe('cycle check (npm run cycles)', () => {
  const script = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts.cycles as string;
  const [command, ...args] = script.split(' ').filter((arg) => !arg.startsWith("'"));

  it('is part of npm run lint, which npm test and the landing check run', () => {
    const scripts = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts;
    expect(scripts.lint).toContain('npm run cycles');
    expect(scripts.test).toMatch(/^npm run lint/);
  });

  it('fails on a fixture whose two modules import each other, and passes once one of them stops', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rune-cycle-'));
    writeFileSync(join(dir, 'a.ts'), "import { b } from './b.ts';\nexport const a = () => b;\n");
    writeFileSync(join(dir, 'b.ts'), "import { a } from './a.ts';\nexport const b = () => a;\n");
    const run = () =>
      spawnSync(join(BIN, command!), [...args, join(dir, '*.ts')], { cwd: ROOT, encoding: 'utf8' });
    const cyclic = run();
    expect(cyclic.status, cyclic.stdout).toBe(1);
    expect(cyclic.stdout).toMatch(/1\) \S*[ab]\.ts -> \S*[ab]\.ts/);
    writeFileSync(join(dir, 'b.ts'), 'export const b = () => 1;\n');
    const fixed = run();
    expect(fixed.status, fixed.stdout).toBe(0);
  });
});
