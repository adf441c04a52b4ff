// The interactive session in a real terminal (tmux): streamed answers, slash commands, Ctrl-C that
// cancels a model call or a running tool (its process group) and returns to the prompt, Ctrl-C at
// an empty prompt quitting, and a history file without keys.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { authorizationUrlIn, playBrowser, startEverything, startOAuthServer } from '../helpers/remote-mcp.ts';
import { tempDir } from '../helpers/rune.ts';
import {
  hasTmux,
  sleep,
  startSession as startTmuxSession,
  type Term,
  TMUX_KEY,
  tmux,
  useSessionSuite,
  waitForRequests,
} from '../helpers/tmux.ts';

const EVERYTHING = join(
  dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/package.json')),
  'dist/index.js',
);
const KEY = TMUX_KEY;
const mock = useSessionSuite();
let counter = 0;

function startSession(toml = '', args: string[] = ['--model', 'm'], colour = false): Term {
  counter++;
  return startTmuxSession(mock.baseUrl, { ...(toml ? { toml } : {}), args, colour });
}

function processRunning(marker: string): boolean {
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').includes(marker)) return true;
    } catch {
      // Gone meanwhile.
    }
  }
  return false;
}

describe.skipIf(!hasTmux)('interactive session (tmux)', () => {
  it('streams an answer, runs slash commands, and quits with Ctrl-C at an empty prompt', async () => {
    const term = startSession();
    await term.waitFor(/policy allowlist · \/help/);
    // Streamed in small chunks with a pause before the last ones: the first part shows up first.
    mock.script([async () => ({ text: 'Two plus two is four, streamed slowly.', chunkSize: 3 })]);
    term.type('what is 2+2');
    await term.waitFor('Two plus two is four, streamed slowly.');
    await waitForRequests(mock, 1);
    expect(mock.requests[0]!.stream).toBe(true);

    term.type('/policy');
    await term.waitFor('policy mode: allowlist');
    term.type('/tools');
    await term.waitFor(/execute_cmd\s+Run a shell command/);
    term.type('/nosuch');
    await term.waitFor('unknown command /nosuch');
    term.type('/policy full');
    // The sandbox rules (network, git, environment) come between the mode and the layers.
    const full = await term.waitFor(/sandbox mode: auto\nsandbox rules:\n(.*\n)+layers on this machine:/);
    // The files rule is listed, and $RUNE_HOME (~/.rune here) once in the floor.
    const shown = full.slice(full.lastIndexOf('› /policy full'));
    expect(shown).toMatch(/^ {2}files {8}\.env\*, rune's own config/m);
    const floor = shown
      .slice(shown.indexOf('never (floor)'), shown.indexOf('sandbox mode:'))
      .replace(/\n/g, '');
    expect(floor.split(', ').filter((path) => path === term.runeHome)).toHaveLength(1);
    term.type('/version');
    await term.waitFor(/^rune \d+\.\d+\.\d+$/m);
    term.type('/config');
    await term.waitFor('"max_steps": 25');
    term.type('/info');
    await term.waitFor(/session: {2}[0-9a-f-]{36} \(3 messages\)/);
    term.type('/skills');
    await term.waitFor('no skills in');
    term.type('/help');
    await term.waitFor(/Alt\+Enter, Shift\+Enter, Ctrl\+J\s+a new line in the prompt/);
    // Alt+Enter starts a new line of the same prompt.
    mock.script([{ text: 'two lines received' }]);
    term.keys('-l', 'line one');
    term.keys('M-Enter');
    term.type('line two');
    await term.waitFor('two lines received');
    expect(mock.requests.at(-1)!.body.messages.at(-1).content).toBe('line one\nline two');
    term.type('/reset');
    await term.waitFor('new conversation');

    term.keys('C-c');
    const screen = await term.waitFor('EXITED=0');
    expect(screen).not.toContain(KEY);
  });

  it('a long file change is folded in the transcript with a hint; /diff shows it whole', async () => {
    const cwd = tempDir('rune-tmux-cwd-');
    const term = startTmuxSession(mock.baseUrl, { cwd, toml: `[policy]\nallowed_paths_rw = ["${cwd}"]\n` });
    await term.waitFor('/help for commands');
    const content = Array.from({ length: 60 }, (_, i) => `line ${i + 1}`).join('\n');
    mock.script([
      { toolCalls: [{ name: 'write_file', arguments: { path: 'long.txt', content: `${content}\n` } }] },
      { text: 'wrote it' },
    ]);
    term.type('write the long file');
    let screen = await term.waitFor('wrote it');
    expect(screen).toMatch(/long\.txt \+60 −0\n {5}1 \+ line 1\n/);
    expect(screen).toMatch(/ {4}40 \+ line 40\n {4}… 20 more diff lines \(\/diff shows the whole change\)/);
    expect(screen).not.toContain('line 41');
    term.type('/diff');
    screen = await term.waitFor(/60 \+ line 60/);
    expect(screen.slice(screen.lastIndexOf('› /diff'))).toMatch(
      /long\.txt \+60 −0\n(.*\n){40}.*41 \+ line 41\n/,
    );
  });

  it('/trace starts and stops writing traces of the runs that follow, and /quit quits', async () => {
    const term = startSession();
    await term.waitFor('/help for commands');
    term.type('/trace');
    await term.waitFor('tracing is off (/trace DIR starts it)');
    term.type('/trace traces');
    const dir = join(term.cwd, 'traces');
    await term.waitFor(`tracing each run into ${dir}`);
    mock.script([{ text: 'traced answer' }]);
    term.type('first');
    await term.waitFor('traced answer');
    // The trace is written (NAME.tmp, then renamed) when the run ends, just after its answer shows.
    const done = (names: string[]) => names.length > 0 && names.every((name) => name.endsWith('.json'));
    const list = () => (existsSync(dir) ? readdirSync(dir) : []);
    let written = list();
    for (let i = 0; i < 400 && !done(written); i++) {
      await sleep(25);
      written = list();
    }
    expect(written.length).toBeGreaterThan(0);
    expect(written.filter((name) => !name.endsWith('.json'))).toEqual([]);
    expect(readFileSync(join(dir, written[0]!), 'utf8')).not.toContain(KEY);
    term.type('/trace off');
    await term.waitFor('tracing off');
    mock.script([{ text: 'untraced answer' }]);
    term.type('second');
    await term.waitFor('untraced answer');
    expect(readdirSync(dir)).toEqual(written);
    term.type('/quit');
    await term.waitFor('EXITED=0');
  });

  it('a warning during a turn starts on its own line (the spinner wiped first) and shows once', async () => {
    const term = startSession('', ['--model', 'm'], true);
    await term.waitFor('/help for commands');
    // The model answers late, so the spinner is turning when the warning comes and after it.
    mock.script([{ text: 'answered anyway', delay: 1500 }]);
    term.type('@nosuch summarise');
    const screen = await term.waitFor('answered anyway');
    expect(screen).toMatch(/^warning: unknown skill @nosuch \(looked in /m);
    expect(screen.match(/unknown skill @nosuch/g)).toHaveLength(1);
    expect(screen).not.toMatch(/thinking\S*warning/);
  });

  it('Ctrl-C cancels a hanging model call and returns to the prompt', async () => {
    const term = startSession();
    await term.waitFor('/help for commands');
    mock.script([{ hang: true }, { text: 'second answer' }]);
    term.type('this will hang');
    await waitForRequests(mock, 1);
    term.keys('C-c');
    await term.waitFor('cancelled');
    term.type('try again');
    await term.waitFor('second answer');
    expect(term.capture()).not.toContain('EXITED');
  });

  it('Ctrl-C kills a running tool with its whole process tree', async () => {
    const marker = `${40 + (process.pid % 50)}.${counter + 1}7`;
    // Unrestricted: this test is about cancelling, not about what the policy allows.
    const term = startSession('[policy]\nmode = "unrestricted"\n');
    await term.waitFor('/help for commands');
    mock.script([
      { toolCalls: [{ name: 'execute_cmd', arguments: { cmd: `sleep ${marker} & sleep ${marker}; wait` } }] },
      { text: 'after the tool' },
    ]);
    term.type('run a long command');
    for (let i = 0; i < 200 && !processRunning(`sleep ${marker}`); i++) await sleep(25);
    expect(processRunning(`sleep ${marker}`)).toBe(true);
    term.keys('C-c');
    await term.waitFor('cancelled');
    for (let i = 0; i < 100 && processRunning(`sleep ${marker}`); i++) await sleep(25);
    expect(processRunning(`sleep ${marker}`)).toBe(false);
    expect(term.capture()).not.toContain('EXITED');
  });

  it('keeps prompts in the history file, never a line holding a key', async () => {
    const term = startSession();
    await term.waitFor('/help for commands');
    // The model echoes the key in small streamed chunks: the terminal must not show it either.
    mock.setFallback({ text: `ok, the key is ${KEY} indeed`, chunkSize: 5 });
    term.type('remember this prompt');
    await waitForRequests(mock, 1);
    term.type(`my key is ${KEY}`);
    await waitForRequests(mock, 2);
    await term.waitFor('[REDACTED] indeed');
    term.type('/exit');
    const screen = await term.waitFor('EXITED=0');
    // The key is on screen only where the user typed it, never in what the model's stream printed.
    expect(screen.split('\n').filter((line) => line.includes(KEY))).toEqual([`› my key is ${KEY}`]);
    const file = join(term.runeHome, 'history');
    expect(existsSync(file)).toBe(true);
    const history = readFileSync(file, 'utf8');
    expect(history).toContain('remember this prompt');
    expect(history).not.toContain(KEY);
    for (const entry of readdirSync(term.runeHome, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile()) continue;
      expect(readFileSync(join(entry.parentPath, entry.name), 'latin1')).not.toContain(KEY);
    }
  });
  it('/tools lists the built-in tools, edit_file, search_files and find_files among them', async () => {
    const term = startSession();
    await term.waitFor('/help for commands');
    term.type('/tools');
    const screen = await term.waitFor(/inspect_process +\S/);
    for (const name of [
      'read_file',
      'write_file',
      'edit_file',
      'list_dir',
      'search_files',
      'find_files',
      'execute_cmd',
      'fetch_url',
    ]) {
      expect(screen).toMatch(new RegExp(`^  ${name} +\\S`, 'm'));
    }
    expect(screen).toMatch(/^ {2}edit_file +Edit a text file in place by exact string replacement/m);
    expect(screen).toMatch(/^ {2}search_files +Search file contents with a regular expression/m);
    expect(screen).toMatch(/^ {2}find_files +Find files by glob pattern/m);
  });

  it('Ctrl-C stops a search that would run for ever (its worker thread) and the session goes on', async () => {
    const term = startSession();
    await term.waitFor('/help for commands');
    // Exponential backtracking: this search would only end at its 30 s time limit.
    writeFileSync(join(term.cwd, 'a.txt'), `${'a'.repeat(64)}!\n`);
    mock.script([
      { toolCalls: [{ name: 'search_files', arguments: { pattern: '(a|aa)+$' } }] },
      { text: 'still here' },
    ]);
    term.type('search');
    await waitForRequests(mock, 1);
    // The call has started by now (the model answered); had the search blocked the main thread,
    // Ctrl-C would only be seen when it ended, 30 s later.
    await sleep(500);
    term.keys('C-c');
    await term.waitFor(/search_files .*the search was stopped[\s\S]*cancelled/, 10_000);
    term.type('are you there?');
    await term.waitFor('still here', 10_000);
    expect(term.capture()).not.toContain('EXITED');
  });

  it('/tools lists each MCP server with its tools, hidden and withdrawn ones too', async () => {
    const server = (name: string) =>
      `[[mcp]]\nname = "${name}"\ncommand = "node"\nargs = ["${EVERYTHING}", "stdio"]\n`;
    // The second server offers the same tool names as the first: all of its tools are hidden.
    const term = startSession(`${server('ev')}\n${server('ev2')}`);
    await term.waitFor('/help for commands', 30_000);
    term.type('/tools');
    let screen = await term.waitFor('MCP server ev2 [stdio]:');
    expect(screen).toMatch(/execute_cmd\s+Run a shell command/);
    expect(screen).toMatch(/MCP server ev \[stdio\]:\n( {2}.*\n)* {2}echo — /);
    expect(screen).toMatch(
      /MCP server ev2 \[stdio\]:\n( {2}.*\n)* {2}echo — .*hidden: name taken by the tool of MCP server "ev"/,
    );
    term.type('/info');
    screen = await term.waitFor(/ {2}ev: ready, \d+ tools, pid (\d+)/);
    const pid = Number(/ {2}ev: ready, \d+ tools, pid (\d+)/.exec(screen)![1]);
    process.kill(pid, 'SIGKILL');
    for (let i = 0; i < 200 && !/ev: crashed/.test(term.capture()); i++) {
      term.type('/info');
      await sleep(100);
    }
    term.type('/tools');
    await term.waitFor(/MCP server ev \[stdio\] \(crashed: tools withdrawn\):\n( {2}.*\n)* {2}echo — /);
    term.type('/exit');
    await term.waitFor('EXITED=0');
  });

  it('/info shows a remote server down once it is killed, and /tools its tools withdrawn', async () => {
    const server = await startEverything('streamableHttp');
    const host = new URL(server.url).host;
    const term = startSession(
      `[[mcp]]\nname = "web"\nurl = "${server.url}"\nallowed_domains = ["${host}"]\n`,
    );
    try {
      await term.waitFor('/help for commands', 30_000);
      term.type('/info');
      await term.waitFor(`  web: ready, 13 tools [streamable-http ${server.url}]`);
      await server.kill();
      for (let i = 0; i < 200 && !/ {2}web: down: /.test(term.capture()); i++) {
        term.type('/info');
        await sleep(100);
      }
      const screen = await term.waitFor(
        / {2}web: down: unreachable: cannot reach 127\.0\.0\.1:\d+: ECONNREFUSED/,
      );
      expect(screen).toContain(`[streamable-http ${server.url}]`);
      term.type('/tools');
      await term.waitFor(
        /MCP server web \[streamable-http .*\] \(down: tools withdrawn\):\n( {2}.*\n)* {2}echo — /,
      );
      // The run goes on, and the model is told before its next answer.
      mock.script([{ text: 'fine without it' }]);
      term.type('go on');
      await term.waitFor('fine without it');
      const notice = mock.requests
        .at(-1)!
        .body.messages.find(
          (m: { role: string; content: string }) => m.role === 'user' && m.content.startsWith('[rune]'),
        );
      expect(notice.content).toMatch(/^\[rune\] MCP server "web" is down \(unreachable: /);
      term.type('/exit');
      await term.waitFor('EXITED=0');
    } finally {
      await server.kill();
    }
  });

  it('logs in to an OAuth server from the session: the URL is shown, its tools join afterwards', async () => {
    const oauth = await startOAuthServer();
    const host = new URL(oauth.url).host;
    const term = startSession(
      `[[mcp]]\nname = "secure"\nurl = "${oauth.url}"\nallowed_domains = ["${host}"]\n`,
    );
    try {
      await term.waitFor('MCP server "secure" asks for a login: open this URL in a browser on this machine:');
      await term.waitFor('/help for commands');
      // The URL is wider than the terminal: read it with wrapped lines joined.
      const url = authorizationUrlIn(tmux('capture-pane', '-p', '-J', '-t', term.name, '-S', '-5000'));
      expect(url).toBeDefined();
      term.type('/info');
      await term.waitFor(/ {2}secure: login: waiting for the OAuth login in the browser/);
      expect(await playBrowser(url as string)).toBe(200);
      await term.waitFor('MCP server "secure" is connected (2 tools)');
      mock.script([
        { toolCalls: [{ name: 'echo', arguments: { message: 'after login' } }] },
        { text: 'echoed' },
      ]);
      term.type('use echo');
      await term.waitFor('echoed');
      const tool = mock.requests.at(-1)!.body.messages.find((m: { role: string }) => m.role === 'tool');
      expect(tool.content).toBe('Echo: after login');
      term.type('/exit');
      const screen = await term.waitFor('EXITED=0');
      for (const token of (await oauth.stats()).issued) expect(screen).not.toContain(token);
    } finally {
      await oauth.kill();
    }
  });

  it('--yes approves what confirm mode would ask, without asking', async () => {
    const term = startSession('[policy]\nmode = "confirm"\n', ['--model', 'm', '--yes']);
    await term.waitFor('/help for commands');
    mock.script([
      { toolCalls: [{ name: 'write_file', arguments: { path: 'out.txt', content: 'hello' } }] },
      { text: 'file written' },
    ]);
    term.type('write a file');
    const screen = await term.waitFor('file written');
    expect(screen).not.toContain('Execute?');
    expect(screen).toContain('allowed (flag.yes)');
    const tool = mock.requests[1]!.body.messages.find((m: { role: string }) => m.role === 'tool');
    expect(tool.content).toMatch(/wrote 5 bytes/);
  });

  it('--json and --output ndjson without a prompt are refused, not ignored by the session', async () => {
    for (const args of [['--json'], ['--output', 'ndjson']]) {
      const term = startSession('', ['--model', 'm', ...args]);
      const screen = await term.waitFor('EXITED=');
      expect(screen).toContain(`rune: ${args.join(' ')} needs a prompt`);
      expect(screen).toContain('EXITED=2');
    }
  });

  it('without a model it stops at once with a usage error, not after the first prompt', async () => {
    const term = startSession('', []);
    const screen = await term.waitFor('EXITED=');
    expect(screen).toContain('rune: no model is set: pass --model, set RUNE_MODEL');
    expect(screen).toContain('EXITED=2');
  });

  it('/compact replaces the conversation so far with a summary', async () => {
    const term = startSession();
    await term.waitFor('/help for commands');
    mock.script([
      { text: 'first answer' },
      { text: 'second answer' },
      { text: 'SUMMARY OF TALK' },
      { text: 'third' },
    ]);
    term.type('first question');
    await term.waitFor('first answer');
    term.type('second question');
    await term.waitFor('second answer');
    term.type('/compact');
    await term.waitFor(/compacted: about \d+ → \d+ tokens/);
    term.type('third question');
    await term.waitFor('third');
    await waitForRequests(mock, 4);
    const contents = mock.requests[3]!.body.messages.map((m: { content: string }) => m.content).join('\n');
    expect(contents).toContain('SUMMARY OF TALK');
    expect(contents).not.toContain('first question');
  });
});
