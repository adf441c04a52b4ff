import { describe, expect, it } from 'vitest';
import { projectCommands } from './project-commands.ts';

const project = (files: Record<string, string>, testNames: string[] = []) => ({
  names: Object.keys(files),
  testNames,
  read: (name: string) => files[name],
});

describe('projectCommands', () => {
  it.each([
    [
      'an npm project with test and build scripts',
      project({ 'package.json': '{"scripts":{"test":"vitest","build":"tsc"}}' }),
      ['npm test', 'npm run build'],
    ],
    [
      'a pnpm project',
      project({ 'package.json': '{"scripts":{"test":"x"}}', 'pnpm-lock.yaml': '' }),
      ['pnpm test'],
    ],
    ['package.json without scripts, or broken', project({ 'package.json': '{' }), []],
    [
      'pytest configured',
      project({ 'pyproject.toml': '[tool.pytest.ini_options]\n', 'a.py': '' }),
      ['python3 -m pytest'],
    ],
    [
      'unittest-style tests at the top',
      project({ 'calc.py': '', 'test_calc.py': '' }),
      ['python3 -m unittest'],
    ],
    ['tests in tests/', project({ tests: '' }, ['test_x.py']), ['python3 -m unittest']],
    [
      'cargo and a git repository',
      project({ 'Cargo.toml': '', '.git': '' }),
      ['cargo test', 'cargo build', 'git status', 'git diff', 'git log'],
    ],
    ['go and make', project({ 'go.mod': '', Makefile: '' }), ['go test', 'go build', 'go vet', 'make']],
    ['nothing evident', project({ 'notes.txt': '' }), []],
  ])('%s', (_name, files, commands) => {
    expect(projectCommands(files)).toEqual(commands);
  });
});
