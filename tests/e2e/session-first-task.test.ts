// The first task a new user gives, through the built binary in a real terminal: a fresh HOME (no
// rune.toml), a project with a bug and its test, and the default answer to every question — the
// first-run trust question included. The task completes: the fix is made (its diff in the
// transcript), the test runs in the sandbox, and the answer is rendered, not raw Markdown. Then the
// question itself: an existing rune.toml edited in place, and each folder asked once.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/rune.ts';
import { hasTmux, startSession, useSessionSuite } from '../helpers/tmux.ts';

const mock = useSessionSuite();

const ANSWER = `## Fixed \`add\`

The bug was in **calc.py**: \`add\` *subtracted*. Now:

| test | result |
|------|--------|
| test_add | ok |

\`\`\`python
def add(a, b):
    return a + b
\`\`\`

- the test passes
- nothing else changed`;

describe.skipIf(!hasTmux)('the first task in a new folder', () => {
  for (const colour of [true, false]) {
    it(`completes with the default answer to every question (${colour ? 'colour' : 'NO_COLOR'})`, async () => {
      const term = startSession(mock.baseUrl, { firstRun: 'ask', colour });
      writeFileSync(join(term.cwd, 'calc.py'), 'def add(a, b):\n    return a - b\n');
      writeFileSync(
        join(term.cwd, 'test_calc.py'),
        'import unittest\nfrom calc import add\n\n\nclass TestAdd(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n',
      );
      // No rune.toml yet: the question shows what it would write before anything is written.
      let screen = await term.waitFor('Trust this folder?');
      const file = join(term.runeHome, 'rune.toml');
      expect(existsSync(file)).toBe(false);
      expect(screen).toContain(`allowed_paths_rw  += ${term.cwd}`);
      expect(screen).toContain('allowed_commands  += python3 -m unittest');
      term.keys('Enter');
      await term.waitFor('/help for commands');
      const toml = readFileSync(file, 'utf8');
      expect(toml).toContain(`allowed_paths_rw = ["${term.cwd}"]`);
      expect(toml).toContain('allowed_commands = ["python3 -m unittest"]');
      // The template's explanations are there (a commented file, as `rune init` writes).
      expect(toml).toMatch(/^# rune configuration, written by `rune init`/);

      mock.script([
        {
          toolCalls: [
            {
              name: 'edit_file',
              arguments: {
                path: 'calc.py',
                edits: [{ old_string: 'return a - b', new_string: 'return a + b' }],
              },
            },
          ],
        },
        { toolCalls: [{ name: 'execute_cmd', arguments: { cmd: 'python3 -m unittest -v' } }] },
        { text: ANSWER, chunkSize: 5 },
      ]);
      term.type('fix add in calc.py and run the test');
      screen = await term.waitFor('nothing else changed');
      await term.waitFor(/─ 3 model calls/);
      screen = term.capture();
      expect(readFileSync(join(term.cwd, 'calc.py'), 'utf8')).toBe('def add(a, b):\n    return a + b\n');
      const results = mock.requests[2]!.body.messages.filter((m: { role: string }) => m.role === 'tool');
      expect(results[1].content).toMatch(/^exit code: 0\n[\s\S]*test_add .* ok[\s\S]*OK/);
      // The diff of the edit is in the transcript, with its counts.
      expect(screen).toMatch(
        /calc\.py \+1 −1\n {4}1 {3}def add\(a, b\):\n {4}2 - {5}return a - b\n {4}2 \+ {5}return a \+ b/,
      );
      // No question was asked beyond the first-run one.
      expect(screen).not.toMatch(/Yes, once|blocked/);
      // The answer is rendered: no Markdown syntax left on screen.
      const answer = screen.slice(screen.indexOf('Fixed add'));
      expect(answer).toMatch(/^Fixed add/);
      expect(answer).not.toMatch(/\*\*|```|\|[-:]+\||^#+ |^- /m);
      expect(answer).toMatch(/│ test_add │ ok +│/);
      expect(answer).toMatch(/^• the test passes$/m);
    });
  }
});

describe.skipIf(!hasTmux)('the first-run question', () => {
  it('edits an existing rune.toml in place, comments kept; each folder is asked once, a no remembered', async () => {
    const toml = '# my settings\n[policy]\nallowed_commands = ["ls"] # kept\n';
    const cwd = tempDir('rune-trusted-');
    writeFileSync(join(cwd, 'package.json'), '{"scripts":{"test":"node --test"}}\n');
    const term = startSession(mock.baseUrl, { firstRun: 'ask', toml, cwd });
    const screen = await term.waitFor('Trust this folder?');
    expect(screen).toContain('(comments kept)');
    expect(screen).toContain('allowed_commands  += npm test');
    term.keys('Enter');
    await term.waitFor('/help for commands');
    const file = join(term.runeHome, 'rune.toml');
    const saved = readFileSync(file, 'utf8');
    expect(saved).toBe(
      `# my settings\n[policy]\nallowed_paths_rw = ["${cwd}"]\nallowed_commands = ["ls", "npm test"] # kept\n`,
    );
    // Asked once: the next start here goes straight to the prompt.
    const again = startSession(mock.baseUrl, { home: term.home, cwd, firstRun: 'ask' });
    await again.waitFor('/help for commands');
    expect(again.capture()).not.toContain('Trust this folder?');
    // No writes nothing and is remembered.
    const elsewhere = tempDir('rune-untrusted-');
    const no = startSession(mock.baseUrl, { home: term.home, cwd: elsewhere, firstRun: 'ask' });
    await no.waitFor('Trust this folder?');
    no.keys('n');
    await no.waitFor('kept read-only');
    expect(readFileSync(file, 'utf8')).toBe(saved);
    const noAgain = startSession(mock.baseUrl, { home: term.home, cwd: elsewhere, firstRun: 'ask' });
    await noAgain.waitFor('/help for commands');
    expect(noAgain.capture()).not.toContain('Trust this folder?');
  });
});
