// Confirm mode in a real terminal (tmux): one question per call the lists do not cover — yes once,
// yes for this session (this folder's edits, or the command's prefix), always (saved in rune.toml,
// comments kept), or no with what the model should do instead — the change shown before it.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  hasTmux,
  startSession as startTmuxSession,
  type Term,
  useSessionSuite,
  waitForRequests,
} from '../helpers/tmux.ts';

const mock = useSessionSuite();

function startSession(toml: string): Term {
  return startTmuxSession(mock.baseUrl, { toml });
}

describe.skipIf(!hasTmux)('confirm mode (tmux)', () => {
  it('confirm mode asks one question; its default (yes, once) runs the call and changes no file', async () => {
    const term = startSession('[policy]\nmode = "confirm"\n');
    await term.waitFor('/help for commands');
    mock.script([
      { toolCalls: [{ name: 'write_file', arguments: { path: 'out.txt', content: 'hello' } }] },
      { text: 'file written' },
    ]);
    term.type('write a file');
    const screen = await term.waitFor(/› 1\. Yes, once/);
    expect(screen).toMatch(
      /Write .*out\.txt\?\n› 1\. Yes, once\n {2}2\. Yes, for this session: edits in this folder\n {2}3\. Always \(add '.*out\.txt' to allowed_files_rw in .*rune\.toml\)\n {2}4\. No, and tell the model what to do instead/,
    );
    // The new file's content as a diff, in the transcript before the question.
    expect(screen).toMatch(/out\.txt \+1 −0\n {4}1 \+ hello/);
    term.keys('Enter');
    await term.waitFor('file written');
    await waitForRequests(mock, 2);
    const tool = mock.requests[1]!.body.messages.find((m: { role: string }) => m.role === 'tool');
    expect(tool.content).toMatch(/wrote 5 bytes/);
    // Only one question was asked, and "once" left rune.toml as it was.
    expect(term.capture().match(/Yes, once/g)).toHaveLength(1);
    expect(readFileSync(join(term.runeHome, 'rune.toml'), 'utf8')).toBe('[policy]\nmode = "confirm"\n');
  });

  it('confirm mode shows the diff of an edit_file call before asking; "n" leaves the file alone', async () => {
    const term = startSession('[policy]\nmode = "confirm"\n');
    await term.waitFor('/help for commands');
    const original = 'def greet():\n    return "hello"\n';
    writeFileSync(join(term.cwd, 'app.py'), original);
    const edit = {
      toolCalls: [
        {
          name: 'edit_file',
          arguments: {
            path: 'app.py',
            edits: [{ old_string: 'return "hello"', new_string: 'return "goodbye"' }],
          },
        },
      ],
    };
    const other = {
      toolCalls: [
        { name: 'write_file', arguments: { path: 'farewell.py', content: 'def bye():\n    pass\n' } },
      ],
    };
    mock.script([edit, { text: 'left it alone' }, edit, other, { text: 'greeting changed' }]);
    term.type('change the greeting');
    let screen = await term.waitFor('4. No, and tell the model what to do instead');
    // The change itself, as a numbered diff with its counts, between the call and the question.
    expect(screen).toMatch(
      /\? edit_file path="app\.py".*\n.*outside the writable paths.*\n {2}app\.py \+1 −1\n {4}1 {3}def greet\(\):\n {4}2 - {5}return "hello"\n {4}2 \+ {5}return "goodbye"\n/,
    );
    // No, with what to do instead: the file is left alone and the model reads the instruction.
    term.keys('n');
    await term.waitFor('what should the model do instead?');
    term.type('keep hello, add a farewell function');
    await term.waitFor('left it alone');
    expect(readFileSync(join(term.cwd, 'app.py'), 'utf8')).toBe(original);
    const tool = mock.requests[1]!.body.messages.find((m: { role: string }) => m.role === 'tool');
    expect(tool.content).toMatch(
      /the user declined: .*; instead, the user says: keep hello, add a farewell function/,
    );
    // Yes for this session: the next edit in this folder (another file) is not asked about again.
    term.type('change it after all');
    screen = await term.waitFor(/change it after all[\s\S]*4\. No, and tell the model/);
    expect(screen).toMatch(/2\. Yes, for this session: edits in this folder/);
    term.type('2');
    await term.waitFor('greeting changed');
    expect(readFileSync(join(term.cwd, 'app.py'), 'utf8')).toBe('def greet():\n    return "goodbye"\n');
    expect(readFileSync(join(term.cwd, 'farewell.py'), 'utf8')).toBe('def bye():\n    pass\n');
    screen = term.capture();
    expect(screen).toMatch(/> edit_file .*allowed \(confirm\.session\)[\s\S]*app\.py \+1 −1/);
    expect(screen).toMatch(/allowed for this session \(edits in this folder\)/);
    // Asked twice (the refused edit and the approved one), never about farewell.py.
    expect(screen.match(/^\? (edit|write)_file/gm)).toHaveLength(2);
  });

  it('"always" saves the command in rune.toml (comments kept) and the next call is not asked about', async () => {
    const toml = '# my settings\n[policy]\nmode = "confirm" # asked\nallowed_commands = ["ls"]\n';
    const term = startSession(toml);
    await term.waitFor('/help for commands');
    const call = { toolCalls: [{ name: 'execute_cmd', arguments: { cmd: 'printf always-ok' } }] };
    mock.script([call, call, { text: 'printed twice' }]);
    term.type('print it twice');
    const screen = await term.waitFor('4. No, and tell the model what to do instead');
    expect(screen).toMatch(/ {2}3\. Always \(add 'printf' to allowed_commands in .*rune\.toml\)/);
    term.keys('a');
    await term.waitFor('printed twice');
    expect(readFileSync(join(term.runeHome, 'rune.toml'), 'utf8')).toBe(
      '# my settings\n[policy]\nmode = "confirm" # asked\nallowed_commands = ["ls", "printf"]\n',
    );
    const results = mock.requests[2]!.body.messages.filter((m: { role: string }) => m.role === 'tool');
    expect(results.map((m: { content: string }) => m.content)).toEqual([
      expect.stringMatching(/^exit code: 0\n[\s\S]*always-ok/),
      expect.stringMatching(/^exit code: 0\n[\s\S]*always-ok/),
    ]);
    // One question: the second call was covered by the saved entry.
    const after = term.capture();
    expect(after.match(/^\? execute_cmd/gm)).toHaveLength(1);
    expect(after).toMatch(/→ Always\n/);
    expect(after).toMatch(/> execute_cmd cmd="printf always-ok" \| allowed \(allowed_commands\)/);
  });

  it('"yes, for this session" for a command prefix covers that prefix only: not another subcommand, not a write', async () => {
    const term = startSession('[policy]\nmode = "confirm"\n');
    await term.waitFor('/help for commands');
    const run = (cmd: string) => ({ toolCalls: [{ name: 'execute_cmd', arguments: { cmd } }] });
    mock.script([
      run('git log -1'),
      run('git log -2'),
      run('git status'),
      run('git log --output=log.txt'),
      { text: 'all done' },
    ]);
    term.type('look at the history');
    let screen = await term.waitFor('4. No, and tell the model what to do instead');
    expect(screen).toMatch(/2\. Yes, for this session: commands starting with "git log"/);
    term.keys('s');
    // git log -2 is covered; git status is asked about (the session did not get all of git).
    screen = await term.waitFor(/git status[\s\S]*4\. No, and tell the model/);
    expect(screen).toMatch(/allowed for this session \(commands starting with "git log"\)/);
    term.keys('n');
    await term.waitFor('what should the model do instead?');
    term.keys('Enter');
    // The prefix writing a file outside the writable paths is asked about again, and refused.
    screen = await term.waitFor(/log\.txt[\s\S]*4\. No, and tell the model/);
    term.keys('n');
    await term.waitFor(/output=log\.txt"\n.*\n {2}→ No, and tell the model/);
    term.keys('Enter');
    await term.waitFor('all done');
    expect(term.capture().match(/^\? execute_cmd/gm)).toHaveLength(3);
    expect(existsSync(join(term.cwd, 'log.txt'))).toBe(false);
  });
});
