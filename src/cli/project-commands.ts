// The commands a project evidently needs to be worked on — its test runner and build — read from
// the files at its top (package.json's scripts, Cargo.toml, go.mod, a Makefile, pytest's or
// unittest's tests), offered when a folder is trusted. Pure: the caller passes the folder's names
// and a reader for a few small files.

export interface ProjectFiles {
  /** Names at the top of the folder. */
  names: readonly string[];
  /** Names inside `tests/` or `test/`, when there is one. */
  testNames: readonly string[];
  /** The text of a top-level file, or undefined. */
  read(name: string): string | undefined;
}

function has(files: ProjectFiles, ...names: string[]): boolean {
  return names.some((name) => files.names.includes(name));
}

function nodeCommands(files: ProjectFiles): string[] {
  const text = files.read('package.json');
  if (text === undefined) return [];
  let scripts: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(text) as { scripts?: Record<string, unknown> };
    scripts = parsed.scripts && typeof parsed.scripts === 'object' ? parsed.scripts : {};
  } catch {
    return [];
  }
  const runner = has(files, 'pnpm-lock.yaml') ? 'pnpm' : has(files, 'yarn.lock') ? 'yarn' : 'npm';
  const commands: string[] = [];
  if (typeof scripts.test === 'string') commands.push(`${runner} test`);
  for (const name of ['build', 'lint', 'typecheck'])
    if (typeof scripts[name] === 'string') commands.push(`${runner} run ${name}`);
  return commands;
}

function pythonCommands(files: ProjectFiles): string[] {
  const pytestConfigured =
    has(files, 'pytest.ini', 'conftest.py') ||
    /^\[tool\.pytest/m.test(files.read('pyproject.toml') ?? '') ||
    /^\[(tool:)?pytest\]/m.test(`${files.read('setup.cfg') ?? ''}\n${files.read('tox.ini') ?? ''}`);
  if (pytestConfigured) return ['python3 -m pytest'];
  const testFile = (name: string): boolean => /^test_.*\.py$|_test\.py$/.test(name);
  if (files.names.some(testFile) || files.testNames.some(testFile)) return ['python3 -m unittest'];
  return [];
}

/** The commands to offer, most evident first, without duplicates. */
export function projectCommands(files: ProjectFiles): string[] {
  const commands = [...nodeCommands(files), ...pythonCommands(files)];
  if (has(files, 'Cargo.toml')) commands.push('cargo test', 'cargo build');
  if (has(files, 'go.mod')) commands.push('go test', 'go build', 'go vet');
  if (has(files, 'Makefile', 'makefile', 'GNUmakefile')) commands.push('make');
  if (has(files, 'pom.xml')) commands.push('mvn test');
  if (has(files, 'Gemfile') && has(files, 'Rakefile')) commands.push('bundle exec rake');
  // Reading a repository's state is part of working in it.
  if (has(files, '.git')) commands.push('git status', 'git diff', 'git log');
  return [...new Set(commands)];
}
