// Checkpoints in the interactive session, in a real terminal (tmux) with the built binary and the
// scripted model: /undo puts back what a shell command did (an edit, a new file, a deleted file, a
// rename, a binary file) and takes the conversation back; /changes shows the session's changes;
// /rewind previews and goes back to an earlier turn; a file edited outside rune meanwhile brings
// up the conflict prompt, and each answer does what it says.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hasTmux, startSession as startTerm, type Term, useSessionSuite } from '../helpers/tmux.ts';

const COMMAND =
  "echo more >> edited.txt && echo fresh > new.txt && rm gone.txt && mv old.txt renamed.txt && printf '\\000\\001\\002\\377' > blob.bin";
const mock = useSessionSuite();
const roots: string[] = [];

afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

/** A session in a project folder whose files a command may change. */
function startSession(): Term {
  // Outside /tmp: a tool's view has a private /tmp.
  const root = mkdtempSync('/var/tmp/rune-checkpoints-tmux-');
  roots.push(root);
  const home = join(root, 'home');
  const cwd = join(root, 'project');
  mkdirSync(join(home, '.rune'), { recursive: true, mode: 0o700 });
  mkdirSync(cwd);
  writeFileSync(join(cwd, 'edited.txt'), 'original line\n');
  writeFileSync(join(cwd, 'gone.txt'), 'deleted by the command\n');
  writeFileSync(join(cwd, 'old.txt'), 'renamed by the command\n');
  const toml = `[policy]\nallowed_commands = ["echo", "rm", "mv", "printf"]\nallowed_paths_rw = ["${cwd}"]\n`;
  return startTerm(mock.baseUrl, { home, cwd, toml });
}

/** One turn that runs `cmd` and answers `answer`. */
async function turn(term: Term, prompt: string, cmd: string, answer: string): Promise<void> {
  mock.script([{ toolCalls: [{ name: 'execute_cmd', arguments: { cmd } }] }, { text: answer }]);
  term.type(prompt);
  await term.waitFor(answer);
}

function expectOriginal(cwd: string): void {
  expect(readFileSync(join(cwd, 'edited.txt'), 'utf8')).toBe('original line\n');
  expect(readFileSync(join(cwd, 'gone.txt'), 'utf8')).toBe('deleted by the command\n');
  expect(readFileSync(join(cwd, 'old.txt'), 'utf8')).toBe('renamed by the command\n');
  for (const made of ['new.txt', 'renamed.txt', 'blob.bin'])
    expect(existsSync(join(cwd, made)), made).toBe(false);
}

describe.skipIf(!hasTmux)('checkpoints in the interactive session (tmux)', () => {
  it('/changes shows the changes and /undo puts files and conversation back', async () => {
    const term = startSession();
    await term.waitFor('/help for commands');
    await turn(term, 'change the files', COMMAND, 'changed them all');
    expect(readFileSync(join(term.cwd, 'blob.bin'))).toEqual(Buffer.from([0, 1, 2, 255]));
    term.type('/changes');
    await term.waitFor('binary file: 0 → 4 bytes');
    await term.waitFor('+more');
    term.type('/undo');
    await term.waitFor('the conversation is back to before "change the files"');
    expectOriginal(term.cwd);
    // The next request carries no trace of the undone turn.
    mock.script([{ text: 'fresh start' }]);
    term.type('hello again');
    await term.waitFor('fresh start');
    const sent = JSON.stringify(mock.requests.at(-1)!.body.messages);
    expect(sent).not.toContain('change the files');
    expect(sent).toContain('hello again');
  });

  it('asks about a file edited outside rune: keep, take, or both', async () => {
    const term = startSession();
    await term.waitFor('/help for commands');
    await turn(term, 'change the files', COMMAND, 'changed them all');
    writeFileSync(join(term.cwd, 'edited.txt'), 'edited by the person\n');
    writeFileSync(join(term.cwd, 'new.txt'), 'the person kept working here\n');
    term.type('/undo');
    await term.waitFor('edited.txt was changed since the checkpoint (not by rune)');
    await term.waitFor('[k]eep yours, [t]ake the checkpoint, [b]oth');
    term.type('b');
    await term.waitFor('new.txt was changed since the checkpoint (not by rune)');
    term.type('k');
    await term.waitFor('the conversation is back to before');
    expect(readFileSync(join(term.cwd, 'edited.txt'), 'utf8')).toBe('edited by the person\n');
    expect(readFileSync(join(term.cwd, 'edited.txt.rune-undo'), 'utf8')).toBe('original line\n');
    expect(readFileSync(join(term.cwd, 'new.txt'), 'utf8')).toBe('the person kept working here\n');
    expect(readFileSync(join(term.cwd, 'gone.txt'), 'utf8')).toBe('deleted by the command\n');
    expect(existsSync(join(term.cwd, 'renamed.txt'))).toBe(false);
  });

  it('/rewind lists the turns, previews, and goes back to before the one chosen', async () => {
    const term = startSession();
    await term.waitFor('/help for commands');
    await turn(term, 'first turn', 'echo one >> edited.txt', 'did one');
    await turn(term, 'second turn', 'echo two >> edited.txt && echo fresh > new.txt', 'did two');
    await turn(term, 'third turn', 'rm gone.txt', 'did three');
    term.type('/rewind');
    await term.waitFor(/2\s+\d\d:\d\d\s+2 files\s+second turn/);
    await term.waitFor('go back to before which turn?');
    term.type('2');
    await term.waitFor('going back to before turn 2 ("second turn") would change:');
    const preview = await term.waitFor('rewind? [y/N]');
    expect(preview).toMatch(/M edited\.txt/);
    expect(preview).toMatch(/D new\.txt/);
    expect(preview).toMatch(/A gone\.txt/);
    term.type('y');
    await term.waitFor('the conversation is back to before "second turn"');
    expect(readFileSync(join(term.cwd, 'edited.txt'), 'utf8')).toBe('original line\none\n');
    expect(existsSync(join(term.cwd, 'new.txt'))).toBe(false);
    expect(readFileSync(join(term.cwd, 'gone.txt'), 'utf8')).toBe('deleted by the command\n');
    term.type('/undo');
    await term.waitFor('the conversation is back to before "first turn"');
    expect(readFileSync(join(term.cwd, 'edited.txt'), 'utf8')).toBe('original line\n');
  });
});
