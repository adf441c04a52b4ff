// `rune mount` through the built binary with a real FUSE mount: echo/cat round trips for built-in
// tools and an MCP tool of server-everything, shells of different sessions meeting inside their
// calls (so they ran at once) and each reading its own result, a refusal read back and audited
// with its caller, the sandbox layers of execute_cmd in its .log, and every way a mount ends
// (SIGTERM, --unmount of a background mount, SIGKILL with auto_unmount).
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, requireBinary, run, runRune, tempDir } from '../helpers/rune.ts';

const require = createRequire(import.meta.url);
const EVERYTHING = join(
  dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')),
  'dist/index.js',
);

beforeAll(() => {
  requireBinary();
});

interface Place {
  cwd: string;
  mnt: string;
  shared: string;
  runeHome: string;
  env: NodeJS.ProcessEnv;
}

/** A project folder with a file, a home with a secret and a config, an empty folder to mount on. */
function place(toml = ''): Place {
  const root = tempDir('rune-mount-');
  const home = join(root, 'home');
  const runeHome = join(home, '.rune');
  const cwd = join(root, 'project');
  const mnt = join(root, 'mnt');
  const shared = join(root, 'shared');
  for (const dir of [join(home, '.ssh'), runeHome, cwd, mnt, shared]) mkdirSync(dir, { recursive: true });
  writeFileSync(join(home, '.ssh', 'id_rsa'), 'MOUNT-TEST-SECRET\n');
  writeFileSync(join(cwd, 'hello.txt'), 'hello from a file\n');
  writeFileSync(join(runeHome, 'rune.toml'), toml);
  return { cwd, mnt, shared, runeHome, env: { ...cleanEnv(home), RUNE_HOME: runeHome } };
}

const children: ChildProcess[] = [];
const mounted: string[] = [];

function isMounted(path: string): boolean {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .some((line) => line.split(' ')[4] === path && line.includes(' - fuse.rune '));
}

async function until(what: string, check: () => boolean, ms = 20_000): Promise<void> {
  for (const end = Date.now() + ms; Date.now() < end; ) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Whether a process runs (a zombie nobody reaped yet has ended). */
function alive(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z';
  } catch {
    return false;
  }
}

/** `rune [args] mount MNT --foreground`, resolved once it serves. */
async function mountForeground(p: Place, args: string[] = []) {
  const child = spawn(requireBinary(), [...args, 'mount', p.mnt, '--foreground'], {
    cwd: p.cwd,
    env: p.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  mounted.push(p.mnt);
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  let done = false;
  void exited.then(() => {
    done = true;
  });
  await until('the mount to serve', () => done || stderr.includes(' serves '), 60_000);
  if (!stderr.includes(' serves ')) throw new Error(`rune mount did not start: ${stderr}`);
  return { child, exited, stderr: () => stderr };
}

/** A shell in a session of its own (setsid), as a terminal's shell is. */
function shell(p: Place, script: string) {
  return run('/bin/sh', ['-c', script], { cwd: p.cwd, env: p.env, detached: true, timeoutMs: 60_000 });
}

afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    // A clean stop shuts its MCP servers down too; SIGKILL only if it does not end.
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
  for (const path of mounted.splice(0)) {
    if (isMounted(path)) spawnSync('fusermount3', ['-u', '-z', path]);
  }
});

describe('rune mount: tools as files', () => {
  it('round trips read_file, list_dir, execute_cmd and an MCP tool; README lists them with their schema', async () => {
    const p = place('[policy]\nallowed_commands = ["echo", "ls"]\n');
    await mountForeground(p, ['--mcp-stdio', `node ${EVERYTHING}`]);
    const t = `${p.mnt}/tools`;
    const result = await shell(
      p,
      [
        `echo '{"path":"hello.txt"}' > ${t}/read_file && cat ${t}/read_file`,
        `echo hello.txt > ${t}/read_file && cat ${t}/read_file`,
        `echo . > ${t}/list_dir && cat ${t}/list_dir`,
        `echo 'echo from-the-sandbox; ls' > ${t}/execute_cmd && cat ${t}/execute_cmd`,
        `echo '{"message":"hi from mcp"}' > ${t}/server-everything/echo && cat ${t}/server-everything/echo`,
        `echo plain-text > ${t}/server-everything/echo && cat ${t}/server-everything/echo`,
      ].join(' && '),
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout.match(/hello from a file/g)).toHaveLength(2);
    expect(result.stdout).toContain('hello.txt  (18 bytes)');
    expect(result.stdout).toContain('exit code: 0\nstdout:\nfrom-the-sandbox\nhello.txt\n');
    expect(result.stdout).toContain('Echo: hi from mcp');
    expect(result.stdout).toContain('Echo: plain-text');
    const readme = readFileSync(join(p.mnt, 'README'), 'utf8');
    expect(readme).toContain('## tools/server-everything/echo (MCP server server-everything)');
    expect(readme).toMatch(/## tools\/read_file \(built-in\)[^#]*"required": \[\n\s*"path"/);
  });

  it('execute_cmd runs in every sandbox layer this machine offers, and its .log says which', async () => {
    const p = place('[policy]\nallowed_commands = ["echo"]\n');
    const doctor = JSON.parse((await runRune(['doctor', '--json'], { cwd: p.cwd, env: p.env })).stdout);
    const offered = (doctor.sandboxLayers as Array<{ layer: string; applied: boolean }>)
      .filter((layer) => layer.applied)
      .map((layer) => layer.layer)
      .sort();
    expect(offered.length).toBeGreaterThan(0);
    expect(doctor.fuse).toMatchObject({ usable: true, device: { ok: true } });
    expect(doctor.fuse.detail).toMatch(/^libfuse 3\.\d+/);
    await mountForeground(p);
    const t = `${p.mnt}/tools`;
    const result = await shell(
      p,
      `echo 'echo to-stderr >&2' > ${t}/execute_cmd; cat ${t}/execute_cmd > /dev/null; cat ${t}/execute_cmd.log`,
    );
    const log = result.stdout;
    expect(log).toMatch(/^call: tools\/execute_cmd \(tool execute_cmd\)\ncaller: pid \d+, session \d+\n/);
    expect(log).toContain('status: ok\ndecision: allow (rule allowed_commands)\n');
    expect(log).toMatch(/process 1: exit status 0, \d+ ms\n {2}layers:\n/);
    const applied = [...log.matchAll(/^ {4}(\w+) +applied /gm)].map((m) => m[1]).sort();
    expect(applied).toEqual(offered);
    expect(log).not.toContain('SKIPPED');
    expect(log).toContain('  stderr:\n    to-stderr\n');
  });

  it('shells of different sessions run their calls at once, and each reads its own result', async () => {
    const p = place();
    writeFileSync(
      join(p.runeHome, 'rune.toml'),
      `[policy]\nallowed_commands = ["echo", "cat"]\nallowed_paths_rw = ["${p.shared}"]\n`,
    );
    // Two FIFOs: each command opens one the other command holds the far end of, so neither call
    // can finish unless both run at the same time.
    execFileSync('mkfifo', [join(p.shared, 'ab'), join(p.shared, 'ba')]);
    await mountForeground(p);
    const t = `${p.mnt}/tools`;
    const [a, b] = await Promise.all([
      shell(
        p,
        `echo 'echo from-a > ${p.shared}/ab; cat ${p.shared}/ba' > ${t}/execute_cmd; cat ${t}/execute_cmd`,
      ),
      shell(
        p,
        `echo 'cat ${p.shared}/ab; echo from-b > ${p.shared}/ba' > ${t}/execute_cmd; cat ${t}/execute_cmd`,
      ),
    ]);
    expect(a.stdout).toBe('exit code: 0\nstdout:\nfrom-b\nstderr: (empty)\n');
    expect(b.stdout).toBe('exit code: 0\nstdout:\nfrom-a\nstderr: (empty)\n');
    // Each result was read once: a third session finds no call of its own.
    const third = await shell(p, `cat ${t}/execute_cmd`);
    expect(third.stdout).toMatch(/^no call of this session/);
    expect(third.stderr).toContain('No data available');
  });

  it('a refused call reads back its reason, fails the read (EACCES), and is audited with its caller', async () => {
    const p = place();
    await mountForeground(p);
    const t = `${p.mnt}/tools`;
    const result = await shell(
      p,
      `echo $$; echo '{"path":"~/.ssh/id_rsa"}' > ${t}/read_file; cat ${t}/read_file; echo "read: $?"; echo ${p.mnt}/README > ${t}/read_file; cat ${t}/read_file`,
    );
    const [pid, refusal, status, inMount] = result.stdout.split('\n');
    expect(refusal).toMatch(/^blocked by policy \(floor\): .*\.ssh\/id_rsa is a protected secret/);
    expect(status).toBe('read: 1');
    expect(result.stderr).toContain(`cat: ${t}/read_file: Permission denied`);
    expect(result.stdout).not.toContain('MOUNT-TEST-SECRET');
    // The mount's own folder is denied to its tools: no call reaches back into it.
    expect(inMount).toMatch(/^blocked by policy \(denied_paths\): .*mnt\/README is under denied path .*mnt$/);
    const audit = readFileSync(join(p.runeHome, 'audit.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(audit[0]).toMatchObject({
      tool: 'read_file',
      decision: 'deny',
      rule: 'floor',
      caller_pid: Number(pid),
      // The shell leads its own session (setsid), so its session id is its pid.
      caller_sid: Number(pid),
    });
    expect(audit[0].session).toMatch(/^mount-/);
  });

  it.each(['SIGTERM', 'SIGINT'] as const)(
    '%s unmounts cleanly: a reader waiting on a call is released, and rune exits 0',
    async (signal) => {
      const p = place('[policy]\nallowed_commands = ["sleep"]\n');
      const mount = await mountForeground(p);
      const t = `${p.mnt}/tools`;
      const started = join(p.shared, 'started');
      const waiting = shell(p, `echo 'sleep 60' > ${t}/execute_cmd; : > ${started}; cat ${t}/execute_cmd`);
      await until('the call to be written', () => existsSync(started));
      mount.child.kill(signal);
      expect(await mount.exited).toBe(0);
      expect(mount.stderr()).toContain(`unmounted (${signal})`);
      expect(isMounted(p.mnt)).toBe(false);
      const reader = await waiting;
      expect(reader.code).not.toBe(0);
    },
  );

  it('in the background: rune mount returns once it serves, --unmount ends it and the server exits', async () => {
    const p = place();
    const started = await runRune(['mount', 'mnt'], { cwd: dirname(p.mnt), env: p.env });
    mounted.push(p.mnt);
    expect(started.stderr).toMatch(/rune mount: mnt serves 9 tools \(process \d+, log .*mount\.log\)/);
    expect(started.code).toBe(0);
    const pid = Number(/process (\d+)/.exec(started.stderr)![1]);
    const call = await shell(
      p,
      `echo project/hello.txt > ${p.mnt}/tools/read_file; cat ${p.mnt}/tools/read_file`,
    );
    expect(call.stdout).toBe('hello from a file\n');
    const again = await runRune(['mount', 'mnt'], { cwd: dirname(p.mnt), env: p.env });
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('is a rune mount already');
    const stopped = await runRune(['mount', '--unmount', 'mnt'], { cwd: dirname(p.mnt), env: p.env });
    expect(stopped.code).toBe(0);
    expect(isMounted(p.mnt)).toBe(false);
    await until('the background server to exit', () => !alive(pid));
    expect(readFileSync(join(p.runeHome, 'mount.log'), 'utf8')).toContain('unmounted (unmounted)');
  });

  it('a rune killed by SIGKILL leaves no mount behind (auto_unmount through fusermount3)', async () => {
    const p = place();
    const mount = await mountForeground(p);
    expect(isMounted(p.mnt)).toBe(true);
    mount.child.kill('SIGKILL');
    await mount.exited;
    await until('fusermount3 to unmount', () => !isMounted(p.mnt));
  });
});
