// Checkpoints through the built binary and the scripted model, in pipe mode: `rune --checkpoint`
// prints the session id, `rune undo ID` puts back what a shell command did (an edit, a new file, a
// deleted file, a rename, a binary file) and what write_file did; a file changed outside rune
// since is a conflict (nothing is written without an answer); a run killed (-9) in the middle of a
// call leaves a checkpoint that still restores; ~/.ssh and .env never reach the store.
import { spawn } from 'node:child_process';
import {
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type MockLlm, startMockLlm } from '../helpers/mock-llm.ts';
import { cleanEnv, requireBinary, runRune } from '../helpers/rune.ts';

const KEY = 'sk-test-checkpoints-e2e-91a8b7c6';
let mock: MockLlm;
// Outside /tmp: a tool's view has a private /tmp.
const root = mkdtempSync('/var/tmp/rune-checkpoints-e2e-');
const home = join(root, 'home');
const runeHome = join(home, '.rune');
const cwd = join(root, 'project');

const COMMAND =
  "echo more >> edited.txt && echo fresh > new.txt && rm gone.txt && mv old.txt renamed.txt && printf '\\000\\001\\002\\377' > blob.bin";

beforeAll(async () => {
  requireBinary();
  mock = await startMockLlm();
});
afterAll(async () => {
  await mock.close();
  rmSync(root, { recursive: true, force: true });
});

beforeEach(() => {
  rmSync(root, { recursive: true, force: true });
  mkdirSync(join(home, '.ssh'), { recursive: true });
  writeFileSync(join(home, '.ssh', 'id_ed25519'), 'SSH-KEY-MATERIAL-e2e-4711\n', { mode: 0o600 });
  mkdirSync(runeHome, { recursive: true, mode: 0o700 });
  mkdirSync(cwd, { recursive: true });
  writeFileSync(join(cwd, 'edited.txt'), 'original line\n');
  writeFileSync(join(cwd, 'gone.txt'), 'deleted by the command\n');
  writeFileSync(join(cwd, 'old.txt'), 'renamed by the command\n');
  writeFileSync(join(cwd, 'notes.md'), 'written by write_file\n');
  writeFileSync(join(cwd, '.env'), 'API_TOKEN=dotenv-secret-e2e-1234\n');
  writeFileSync(
    join(runeHome, 'rune.toml'),
    `[policy]\nallowed_commands = ["echo", "rm", "mv", "printf", "touch", "sleep", "cat"]\nallowed_paths_rw = ["${cwd}", "${home}"]\n`,
  );
});

const env = () => ({ ...cleanEnv(home), RUNE_HOME: runeHome });
const args = (...rest: string[]) => ['--base-url', mock.baseUrl, '--api-key', KEY, '--model', 'm', ...rest];

function expectOriginal(): void {
  expect(readFileSync(join(cwd, 'edited.txt'), 'utf8')).toBe('original line\n');
  expect(readFileSync(join(cwd, 'gone.txt'), 'utf8')).toBe('deleted by the command\n');
  expect(readFileSync(join(cwd, 'old.txt'), 'utf8')).toBe('renamed by the command\n');
  expect(readFileSync(join(cwd, 'notes.md'), 'utf8')).toBe('written by write_file\n');
  for (const made of ['new.txt', 'renamed.txt', 'blob.bin'])
    expect(existsSync(join(cwd, made)), made).toBe(false);
}

function sessionIdIn(stderr: string): string {
  const id = /rune: session ([0-9a-f-]{36})/.exec(stderr)?.[1];
  expect(id, stderr).toBeDefined();
  return id!;
}

describe('rune --checkpoint and rune undo', () => {
  it('undoes what a command and write_file changed', async () => {
    mock.script([
      {
        toolCalls: [
          { name: 'execute_cmd', arguments: { cmd: COMMAND } },
          { name: 'write_file', arguments: { path: 'notes.md', content: 'replaced\n' } },
        ],
      },
      { text: 'done' },
    ]);
    const run = await runRune(args('--checkpoint', 'change things'), { cwd, env: env() });
    expect(run.code, run.stderr).toBe(0);
    const id = sessionIdIn(run.stderr);
    expect(readFileSync(join(cwd, 'edited.txt'), 'utf8')).toBe('original line\nmore\n');
    expect(readFileSync(join(cwd, 'blob.bin'))).toEqual(Buffer.from([0, 1, 2, 255]));

    const diff = await runRune(['diff', id.slice(0, 8)], { cwd, env: env() });
    expect(diff.code, diff.stderr).toBe(0);
    expect(diff.stdout).toContain('+more');
    expect(diff.stdout).toContain('binary file: 0 → 4 bytes');

    const undo = await runRune(['undo', id], { cwd, env: env() });
    expect(undo.code, undo.stderr).toBe(0);
    expect(undo.stdout).toContain('undid turn 1');
    expectOriginal();
    // The stored conversation went back with it: nothing of the turn is left to resume.
    const stored = JSON.parse(readFileSync(join(runeHome, 'sessions', `${id}.json`), 'utf8'));
    expect(stored.messages).toEqual([]);
    // Nothing left to undo.
    const again = await runRune(['undo', id], { cwd, env: env() });
    expect(again.code).toBe(13);
  });

  it('asks nothing and writes nothing when a file changed outside rune since, until told', async () => {
    mock.script([{ toolCalls: [{ name: 'execute_cmd', arguments: { cmd: COMMAND } }] }, { text: 'done' }]);
    const run = await runRune(args('--checkpoint', 'change things'), { cwd, env: env() });
    const id = sessionIdIn(run.stderr);
    writeFileSync(join(cwd, 'edited.txt'), 'edited by the person\n');
    const refused = await runRune(['undo', id], { cwd, env: env() });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('changed since the checkpoint');
    expect(refused.stderr).toContain('edited.txt');
    expect(existsSync(join(cwd, 'new.txt'))).toBe(true);

    const both = await runRune(['undo', id, '--on-conflict', 'both'], { cwd, env: env() });
    expect(both.code, both.stderr).toBe(0);
    expect(readFileSync(join(cwd, 'edited.txt'), 'utf8')).toBe('edited by the person\n');
    expect(readFileSync(join(cwd, 'edited.txt.rune-undo'), 'utf8')).toBe('original line\n');
    expect(existsSync(join(cwd, 'new.txt'))).toBe(false);
    expect(readFileSync(join(cwd, 'gone.txt'), 'utf8')).toBe('deleted by the command\n');
  });

  it('undoes back to a turn with --turn, over resumed runs', async () => {
    mock.script([
      { toolCalls: [{ name: 'execute_cmd', arguments: { cmd: 'echo one >> edited.txt' } }] },
      { text: 'one' },
    ]);
    const first = await runRune(args('--checkpoint', 'first'), { cwd, env: env() });
    const id = sessionIdIn(first.stderr);
    mock.script([
      { toolCalls: [{ name: 'execute_cmd', arguments: { cmd: 'echo two >> edited.txt' } }] },
      { text: 'two' },
    ]);
    const second = await runRune(args('--checkpoint', '--resume', id, 'second'), { cwd, env: env() });
    expect(second.code, second.stderr).toBe(0);
    expect(readFileSync(join(cwd, 'edited.txt'), 'utf8')).toBe('original line\none\ntwo\n');
    const last = await runRune(['undo', id], { cwd, env: env() });
    expect(last.code, last.stderr).toBe(0);
    expect(readFileSync(join(cwd, 'edited.txt'), 'utf8')).toBe('original line\none\n');
    const stat = await runRune(['diff', id, '--stat'], { cwd, env: env() });
    expect(stat.stdout).toMatch(/1\s+\S+\s+1 file\s+first/);
    expect(stat.stdout).not.toMatch(/second/);
    const back = await runRune(['undo', id, '--turn', '1'], { cwd, env: env() });
    expect(back.code, back.stderr).toBe(0);
    expect(readFileSync(join(cwd, 'edited.txt'), 'utf8')).toBe('original line\n');
  });
});

describe('a command that writes what an approval granted', () => {
  it('has the granted file rune made for it in its checkpoint: the undo removes it', async () => {
    const elsewhere = join(root, 'elsewhere');
    mkdirSync(elsewhere);
    writeFileSync(
      join(runeHome, 'rune.toml'),
      `[policy]\nmode = "confirm"\nallowed_commands = ["echo"]\nallowed_paths_rw = ["${cwd}"]\n`,
    );
    const proof = join(elsewhere, 'proof.txt');
    mock.script([
      { toolCalls: [{ name: 'execute_cmd', arguments: { cmd: `echo granted > ${proof}` } }] },
      { text: 'done' },
    ]);
    const run = await runRune(args('--checkpoint', '--yes', 'write the proof'), { cwd, env: env() });
    expect(run.code, run.stderr).toBe(0);
    expect(readFileSync(proof, 'utf8'), run.stderr).toBe('granted\n');
    const undo = await runRune(['undo', sessionIdIn(run.stderr)], { cwd, env: env() });
    expect(undo.code, undo.stderr).toBe(0);
    expect(existsSync(proof)).toBe(false);
  });
});

describe('an MCP tool whose server may write', () => {
  it("is checkpointed over the server's writable folders, and undone", async () => {
    const filesystem = join(
      dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/server-filesystem/package.json')),
      'dist/index.js',
    );
    writeFileSync(
      join(runeHome, 'rune.toml'),
      [
        '[policy]',
        'allowed_mcp_tools = ["fs.*"]',
        '[[mcp]]',
        'name = "fs"',
        'command = "node"',
        `args = ["${filesystem}", "${cwd}"]`,
        `allowed_paths_rw = ["${cwd}"]`,
        '',
      ].join('\n'),
    );
    mock.script([
      {
        toolCalls: [
          {
            name: 'move_file',
            arguments: { source: join(cwd, 'old.txt'), destination: join(cwd, 'moved.txt') },
          },
        ],
      },
      { text: 'moved' },
    ]);
    const run = await runRune(args('--checkpoint', 'move it'), { cwd, env: env(), timeoutMs: 50_000 });
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(join(cwd, 'moved.txt')), run.stderr).toBe(true);
    const undo = await runRune(['undo', sessionIdIn(run.stderr)], { cwd, env: env() });
    expect(undo.code, undo.stderr).toBe(0);
    expect(readFileSync(join(cwd, 'old.txt'), 'utf8')).toBe('renamed by the command\n');
    expect(existsSync(join(cwd, 'moved.txt'))).toBe(false);
  });
});

describe('a checkpoint that cannot be kept whole', () => {
  it('is reported on stderr, and the rest of it still undoes', async () => {
    writeFileSync(join(cwd, 'big.bin'), Buffer.alloc(2 * 1024 * 1024, 1));
    writeFileSync(
      join(runeHome, 'rune.toml'),
      `${readFileSync(join(runeHome, 'rune.toml'), 'utf8')}[checkpoints]\nmax_file_mb = 1\n`,
    );
    mock.script([
      {
        toolCalls: [
          { name: 'execute_cmd', arguments: { cmd: 'echo more >> edited.txt && echo x >> big.bin' } },
        ],
      },
      { text: 'done' },
    ]);
    const run = await runRune(args('--checkpoint', 'grow it'), { cwd, env: env() });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(
      `${join(cwd, 'big.bin')}: not kept whole (it is larger than checkpoints.max_file_mb)`,
    );
    const undo = await runRune(['undo', sessionIdIn(run.stderr)], { cwd, env: env() });
    expect(undo.code, undo.stderr).toBe(12);
    expect(undo.stderr).toContain('big.bin: its content was not kept');
    expect(readFileSync(join(cwd, 'edited.txt'), 'utf8')).toBe('original line\n');
  });
});

describe('a run killed in the middle of a call', () => {
  it('leaves a checkpoint that still restores', async () => {
    mock.script([
      {
        toolCalls: [
          {
            name: 'execute_cmd',
            arguments: { cmd: `${COMMAND} && touch started && sleep 30` },
          },
        ],
      },
      { text: 'never reached' },
    ]);
    const child = spawn(requireBinary(), args('--checkpoint', 'change and hang'), {
      cwd,
      env: env(),
      stdio: ['ignore', 'ignore', 'pipe'],
      detached: true,
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const deadline = Date.now() + 30_000;
    while (!existsSync(join(cwd, 'started')) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    expect(existsSync(join(cwd, 'started')), stderr).toBe(true);
    const exited = new Promise((r) => child.on('exit', r));
    // The whole group: rune and the command it runs.
    process.kill(-child.pid!, 'SIGKILL');
    await exited;
    const id = sessionIdIn(stderr);
    rmSync(join(cwd, 'started'));
    const undo = await runRune(['undo', id], { cwd, env: env() });
    expect(undo.code, undo.stderr).toBe(0);
    expect(undo.stderr).toContain('rune stopped during execute_cmd');
    expectOriginal();
  });
});

describe('the checkpoint store', () => {
  it('holds nothing of ~/.ssh or .env', async () => {
    mock.script([
      {
        toolCalls: [
          {
            name: 'execute_cmd',
            arguments: { cmd: `${COMMAND} && cat .env && echo changed >> key-link` },
          },
        ],
      },
      { text: 'done' },
    ]);
    // A hard link to the key inside the project is the key; a link to ~/.ssh leads into the floor.
    linkSync(join(home, '.ssh', 'id_ed25519'), join(cwd, 'key-link'));
    symlinkSync(join(home, '.ssh'), join(cwd, 'ssh'));
    const run = await runRune(args('--checkpoint', 'change things'), { cwd, env: env() });
    expect(run.code, run.stderr).toBe(0);
    const store = join(runeHome, 'checkpoints', sessionIdIn(run.stderr));
    const files = readdirSync(store);
    expect(files).toContain('pack');
    const bytes = files.map((name) => readFileSync(join(store, name), 'latin1')).join('\n');
    expect(statSync(join(store, 'pack')).size).toBeGreaterThan(0);
    expect(bytes).toContain('original line');
    // The home folder was looked at (it is granted), its secrets were not.
    expect(bytes).toContain(`{"t":"based","r":"${home}"}`);
    expect(bytes).not.toContain('SSH-KEY-MATERIAL');
    expect(bytes).not.toContain('dotenv-secret');
    expect(bytes).not.toContain('id_ed25519');
    expect(bytes).not.toContain('key-link');
    expect(bytes).not.toMatch(/"\.env"|\/\.env"/);
  });
});
