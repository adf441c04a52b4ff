// rune itself never acts on what a sandboxed command left behind (docs/adr/0034): its own code runs
// outside the sandbox with the person's rights, so after a call it must not follow a link the
// command planted, block on a FIFO, write through a Concourse destination, reach a granted folder
// the command replaced, or be raced into a folder never granted. Each class is tried as an attacker
// would, with a control that works, through the built binary: as the host runs rune and under the
// container runtime's seccomp profile (no namespaces), as root and as an unprivileged user. What is
// planted is a FIFO, a socket, a device node or a dangling link at every path rune touches after a
// call; nothing may block, nothing outside the grants may be created, read or removed, and the
// message must say what was refused.
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MockLlm, type MockToolCall, startMockLlm } from '../helpers/mock-llm.ts';
import { type RunResult, requireBinary } from '../helpers/rune.ts';
import {
  battleground,
  containerProblem,
  giveTreeTo,
  runVariant,
  type Variant,
  type VariantRun,
  variants,
} from './deputy-run.ts';
import { SYSTEM_PYTHON } from './harness.ts';

const KEY = 'sk-test-deputy-7f3e2d1c0b';
const RACER = join(import.meta.dirname, '../helpers/swap-racer.py');
const PASSWORD = 'hunter2-deputy-mycnf';
const KEY_TEXT = 'PRIVATE-KEY-deputy-0042';

const ground = battleground('rune-deputy-');
let mock: MockLlm;
beforeAll(async () => {
  requireBinary();
  mock = await startMockLlm();
});
afterAll(async () => {
  await mock?.close();
  ground.cleanup();
});

interface Fixture {
  base: string;
  home: string;
  proj: string;
  /** Never granted: nothing may appear, change or go here. */
  outside: string;
  /** rune's own TMPDIR (the call's temporary folder is made here without a view). */
  tmp: string;
  env: Record<string, string>;
}

function fixture(): Fixture {
  const base = mkdtempSync(join(ground.root, 'case-'));
  const f = {
    base,
    home: join(base, 'home'),
    proj: join(base, 'proj'),
    outside: join(base, 'outside'),
    tmp: join(base, 'tmp'),
  };
  for (const dir of [f.home, join(f.home, '.ssh'), f.proj, f.outside, join(f.outside, 'secret'), f.tmp])
    mkdirSync(dir, { recursive: true });
  writeFileSync(join(f.home, '.ssh', 'id_rsa'), `${KEY_TEXT}\n`, { mode: 0o600 });
  writeFileSync(join(f.home, '.my.cnf'), `[client]\n\tpassword = ${PASSWORD}\n`);
  writeFileSync(join(f.home, '.profile'), 'PROFILE-UNCHANGED\n');
  writeFileSync(join(f.outside, 'secret', 'keep'), 'KEEP\n');
  const env = {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: f.home,
    LANG: 'C.UTF-8',
    RUNE_HOME: join(f.home, '.rune'),
    TMPDIR: f.tmp,
    GIT_CONFIG_NOSYSTEM: '1',
  };
  return { ...f, env };
}

/** What is under a folder: every path with its kind and content (to prove nothing changed). */
function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (at: string, rel: string) => {
    for (const name of readdirSync(at)) {
      const path = join(at, name);
      const st = lstatSync(path);
      const key = rel ? `${rel}/${name}` : name;
      if (st.isDirectory()) {
        out[key] = 'dir';
        walk(path, key);
      } else out[key] = st.isSymbolicLink() ? `link:${readlinkSync(path)}` : readFileSync(path, 'latin1');
    }
  };
  walk(dir, '');
  return out;
}

/** Runs the binary (or `program`, a name linked to it) as the variant says, in the fixture's environment. */
function runAs(v: Variant, f: Fixture, run: Omit<VariantRun, 'env'> & { env?: VariantRun['env'] }) {
  return runVariant(v, { timeoutMs: 40_000, ...run, env: { ...f.env, ...run.env } });
}

function sandbox(v: Variant, f: Fixture, script: string): Promise<RunResult> {
  // A call takes a second or two; rune blocked on a FIFO is killed after this (and the case fails).
  return runAs(v, f, {
    args: ['sandbox', '--allow-write', f.proj, '--', '/bin/sh', '-c', script],
    cwd: f.proj,
    timeoutMs: 20_000,
  });
}

const call = (name: string, args: Record<string, unknown>): MockToolCall => ({ name, arguments: args });

/** A pipe-mode run of the agent against the scripted model; the tool results it was sent come back. */
async function agent(
  v: Variant,
  f: Fixture,
  steps: MockToolCall[][],
  toml = '',
  flags: string[] = [],
): Promise<{ result: RunResult; tools: string[] }> {
  mkdirSync(join(f.home, '.rune'), { recursive: true });
  writeFileSync(join(f.home, '.rune', 'rune.toml'), toml);
  giveTreeTo(f.base, v.who);
  mock.reset();
  mock.script([...steps.map((toolCalls) => ({ toolCalls })), { text: 'done' }]);
  const result = await runAs(v, f, {
    args: ['--base-url', mock.baseUrl, '--api-key', KEY, '--model', 'm', '--yes', ...flags, 'go'],
    cwd: f.proj,
    timeoutMs: 90_000,
  });
  const last = mock.requests.at(-1)?.body.messages as Array<{ role: string; content: string }> | undefined;
  return { result, tools: (last ?? []).filter((m) => m.role === 'tool').map((m) => m.content) };
}

/** Starts the swapping process (what a command could leave behind); resolves with its swap count. */
function racer(
  f: Fixture,
  pairs: Array<[string, string]>,
  seconds: number,
): { done: Promise<number>; stop(): void } {
  const stopFile = join(f.base, 'racer.stop');
  const child = spawn(SYSTEM_PYTHON, [RACER, stopFile, String(seconds), ...pairs.flat()], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => {
    out += c;
  });
  const done = new Promise<number>((resolve) => child.on('close', () => resolve(Number(out.trim()) || 0)));
  return { done, stop: () => writeFileSync(stopFile, '') };
}

/** A git repository at `dir` with a submodule-like work tree `sub` whose .git file points into it. */
function repoWithSubmodule(dir: string, sub: string): string {
  execFileSync('git', ['init', '-q', dir]);
  const modules = join(dir, '.git', 'modules', sub);
  execFileSync('git', ['init', '-q', '--bare', modules]);
  mkdirSync(join(dir, sub));
  const text = `gitdir: ../.git/modules/${sub}\n`;
  writeFileSync(join(dir, sub, '.git'), text);
  return text;
}

type Kind = 'fifo' | 'socket' | 'device' | 'dangling link';
const KINDS: Kind[] = ['fifo', 'socket', 'device', 'dangling link'];
const KIND_WORDS: Record<Kind, RegExp> = {
  fifo: /a FIFO/,
  socket: /a socket/,
  device: /a (character )?device/,
  'dangling link': /a symbolic link/,
};

/**
 * An entry of `kind` made by the test at `path`, for the command to move into place on the same
 * mount (a sandboxed command cannot make every kind itself): FIFO, socket, device node; a dangling
 * link is made by the command (ln -s) and leads to `target`. Returns the command's first words.
 */
function premade(kind: Kind, path: string, target: string): string {
  if (kind === 'fifo') execFileSync('mkfifo', [path]);
  else if (kind === 'socket')
    execFileSync(SYSTEM_PYTHON, [
      '-c',
      `import socket; socket.socket(socket.AF_UNIX).bind(${JSON.stringify(path)})`,
    ]);
  else if (kind === 'device') execFileSync('mknod', [path, 'c', '1', '3']);
  return kind === 'dangling link' ? `ln -s '${target}'` : `mv '${path}'`;
}

const noneOrFile = (path: string) => {
  const st = lstatSync(path, { throwIfNoEntry: false });
  return st === undefined || st.isFile();
};

describe.each(variants())('deputy ($label)', (v) => {
  const skip = v.mode === 'container' && containerProblem() !== undefined;

  describe.skipIf(Boolean(skip))('post-call repairs never follow a link or block on a FIFO', () => {
    it('a .git file swapped for a dangling link and a config linked to ~/.my.cnf: nothing created or copied; controls undone', async () => {
      const f = fixture();
      const subText = repoWithSubmodule(f.proj, 'sub');
      mkdirSync(join(f.proj, 'sub2'));
      const sub2Text = 'gitdir: ../.git/modules/sub\n';
      writeFileSync(join(f.proj, 'sub2', '.git'), sub2Text);
      const keys = join(f.home, '.ssh', 'authorized_keys');
      const before = tree(f.outside);
      giveTreeTo(f.base, v.who);
      const result = await sandbox(
        v,
        f,
        [
          // A work tree's .git file is bound read-only in the view: its folder is moved instead.
          `mv sub sub.old && mkdir sub && ln -s '${keys}' sub/.git`,
          // A repository the call creates: its config a link to the person's password file.
          `git init -q new && rm new/.git/config && ln -s '${join(f.home, '.my.cnf')}' new/.git/config`,
          // Controls: a .git file pointed elsewhere, a new repository's config that runs a program.
          'mv sub2 sub2.old && mkdir sub2 && echo "gitdir: /elsewhere" > sub2/.git',
          'git init -q ctl && printf "[core]\\n\\tpager = touch /tmp/evil\\n" > ctl/.git/config',
          'echo ran',
        ].join('; '),
      );
      expect(result.stdout).toContain('ran');
      expect(existsSync(keys)).toBe(false);
      expect(result.stderr).toMatch(
        /sub\/\.git: refused: it is a symbolic link \(to .*authorized_keys\); moved aside/,
      );
      expect(readFileSync(join(f.proj, 'sub', '.git'), 'utf8')).toBe(subText);
      expect(result.stderr).toMatch(/new\/\.git\/config: refused: it is a symbolic link \(to .*\.my\.cnf\)/);
      expect(JSON.stringify(tree(f.proj))).not.toContain(PASSWORD);
      expect(readFileSync(join(f.home, '.my.cnf'), 'utf8')).toContain(PASSWORD);
      // Controls: what the guard is for still happens.
      expect(result.stderr).toMatch(/sub2\/\.git: restored/);
      expect(readFileSync(join(f.proj, 'sub2', '.git'), 'utf8')).toBe(sub2Text);
      expect(result.stderr).toMatch(/ctl\/\.git\/config: removed core\.pager/);
      expect(tree(f.outside)).toEqual(before);
    });

    it.each(KINDS)(
      'a %s at .git, commondir and a new config: no hang, nothing outside, the message names it',
      async (kind) => {
        const f = fixture();
        repoWithSubmodule(f.proj, 'sub');
        mkdirSync(join(f.outside, 'created'));
        const targets = ['sub/.git', '.git/commondir', 'new/.git/config'];
        const planted = targets.map((target, i) =>
          // Made on the mount of its target: .git is a mount of its own in the view (pinned).
          premade(
            kind,
            join(f.proj, target.startsWith('.git/') ? '.git' : '.', `premade-${i}`),
            join(f.outside, 'created', `by-${i}`),
          ),
        );
        const before = tree(f.outside);
        giveTreeTo(f.base, v.who);
        const result = await sandbox(
          v,
          f,
          [
            'mv sub sub.old && mkdir sub',
            'git init -q new && rm new/.git/config',
            ...targets.map((target, i) => `${planted[i]} '${target}'`),
            'echo ran',
          ].join('; '),
        );
        expect(result.signal, 'rune was killed: it blocked').toBeNull();
        expect(result.stdout).toContain('ran');
        expect(tree(f.outside)).toEqual(before);
        const said = result.stderr;
        expect(said).toMatch(new RegExp(`sub/\\.git: refused: it is ${KIND_WORDS[kind].source}`));
        expect(said).toMatch(new RegExp(`\\.git/commondir: removed \\(it was ${KIND_WORDS[kind].source}`));
        expect(said).toMatch(new RegExp(`new/\\.git/config: refused: it is ${KIND_WORDS[kind].source}`));
        for (const target of targets) expect(noneOrFile(join(f.proj, target)), target).toBe(true);
      },
    );
  });

  describe.skipIf(Boolean(skip))('grants are resolved once per run and pinned', () => {
    // The project is writable, so a call can re-point the link a grant is named through; confirm
    // mode with --yes lets the commands run (the secrets floor still holds).
    const toml = 'mode = "confirm"\nallowed_paths_rw = [".", "data-link", "out"]\n';
    const setup = (f: Fixture) => {
      mkdirSync(join(f.proj, 'data'));
      symlinkSync(join(f.proj, 'data'), join(f.proj, 'data-link'));
      mkdirSync(join(f.proj, 'out'));
    };

    it('a granted folder named through a link the call re-pointed is refused for the next call; control writes', async () => {
      const f = fixture();
      setup(f);
      const before = tree(f.outside);
      const second = call('execute_cmd', { cmd: 'echo pwned > data-link/pwned && echo wrote' });
      const attack = await agent(
        v,
        f,
        [
          [call('execute_cmd', { cmd: `rm data-link && ln -s '${join(f.outside, 'secret')}' data-link` })],
          [second],
        ],
        `[policy]\n${toml}`,
      );
      expect(attack.result.code, attack.result.stderr).toBe(0);
      expect(attack.tools[1]).toMatch(
        /the granted folder .*data-link .* was replaced during the run \(it now leads to .*outside\/secret\): refused/,
      );
      expect(tree(f.outside)).toEqual(before);

      const g = fixture();
      setup(g);
      const control = await agent(
        v,
        g,
        [[call('execute_cmd', { cmd: 'true' })], [second]],
        `[policy]\n${toml}`,
      );
      expect(control.tools[1]).toContain('wrote');
      expect(readFileSync(join(g.proj, 'data', 'pwned'), 'utf8')).toBe('pwned\n');
    });

    it('a granted folder replaced by another folder: the file tools and the next call refuse it', async () => {
      const f = fixture();
      setup(f);
      const { tools } = await agent(
        v,
        f,
        [
          [call('execute_cmd', { cmd: 'mv out out.old && mkdir out && echo swapped' })],
          [call('write_file', { path: 'out/x', content: 'x' })],
          [call('execute_cmd', { cmd: 'echo y > out/y' })],
        ],
        `[policy]\n${toml}`,
      );
      if (tools[0]?.includes('swapped')) {
        // No view (or a grant that is not a mount point): the swap happened, and is refused.
        expect(tools[1]).toMatch(
          /granted folder .*\/out was replaced during the run \(another folder is there now\): refused/,
        );
        expect(tools[2]).toMatch(/replaced during the run/);
        expect(existsSync(join(f.proj, 'out', 'x'))).toBe(false);
      } else {
        // The view binds each grant at its place: the kernel refused to move it (EBUSY).
        expect(tools[0]).toMatch(/busy/i);
        expect(readFileSync(join(f.proj, 'out', 'x'), 'utf8')).toBe('x');
      }
    });
  });

  describe.skipIf(Boolean(skip))("rune's own files in the project: the trace and AGENTS.md", () => {
    const toml = '[policy]\nallowed_paths_rw = ["."]\n';
    const systemPrompt = () => {
      const first = mock.requests[0]?.body.messages as Array<{ role: string; content: string }> | undefined;
      return first?.find((m) => m.role === 'system')?.content ?? '';
    };

    it('--trace into a folder a call replaced by a link, AGENTS.md a link to ~/.my.cnf: nothing written or read outside; control', async () => {
      const f = fixture();
      // A repository can carry the link itself; a call of an earlier run could leave it too.
      symlinkSync(join(f.home, '.my.cnf'), join(f.proj, 'AGENTS.md'));
      const before = tree(f.outside);
      const { result } = await agent(
        v,
        f,
        [
          [
            call('execute_cmd', {
              cmd: `mv traces traces.old && ln -s '${f.outside}' traces && echo swapped`,
            }),
          ],
        ],
        toml,
        ['--trace', 'traces'],
      );
      expect(result.code, result.stderr).toBe(0);
      expect(systemPrompt()).not.toContain(PASSWORD);
      expect(tree(f.outside)).toEqual(before);
      // The trace went into the folder held since the run started, wherever the call moved it.
      expect(readdirSync(join(f.proj, 'traces.old'))).toEqual([expect.stringMatching(/^rune-.*\.json$/)]);

      const g = fixture();
      writeFileSync(join(g.proj, 'AGENTS.md'), 'Answer in French.\n');
      const control = await agent(v, g, [[call('execute_cmd', { cmd: 'true' })]], toml, [
        '--trace',
        'traces',
      ]);
      expect(control.result.code, control.result.stderr).toBe(0);
      expect(systemPrompt()).toContain('Answer in French.');
      expect(readdirSync(join(g.proj, 'traces'))).toEqual([expect.stringMatching(/^rune-.*\.json$/)]);
    });
  });

  describe.skipIf(Boolean(skip))('Concourse in writes only regular files in the destination it held', () => {
    const ANSWER_REF = `sha256:${createHash('sha256').update('THE-ANSWER', 'utf8').digest('hex')}`;
    const inStep = async (f: Fixture, plant: string | undefined) => {
      const resource = join(f.base, 'resource');
      mkdirSync(resource);
      symlinkSync(requireBinary(), join(resource, 'in'));
      const dest = join(f.base, 'dest');
      mkdirSync(dest);
      giveTreeTo(f.base, v.who);
      mock.reset();
      mock.script([
        ...(plant ? [{ toolCalls: [call('execute_cmd', { cmd: plant })] }] : []),
        { text: 'THE-ANSWER' },
      ]);
      const source = {
        api_key: KEY,
        base_url: mock.baseUrl,
        model: 'm',
        prompt: 'answer',
        policy: { mode: 'unrestricted', allowed_paths_rw: [dest] },
      };
      const result = await runAs(v, f, {
        program: join(resource, 'in'),
        args: [dest],
        cwd: f.base,
        env: { BUILD_ID: '1' },
        // The version of THE-ANSWER: a stateless get writes only the answer its version names.
        input: JSON.stringify({ source, version: { ref: ANSWER_REF } }),
        timeoutMs: 30_000,
      });
      return { result, dest };
    };

    it('response.txt planted as a link to ~/.profile: refused, nothing written through it; control writes', async () => {
      const f = fixture();
      const { result } = await inStep(f, `ln -s '${join(f.home, '.profile')}' response.txt`);
      expect(result.code).toBe(12);
      expect(result.stderr).toMatch(
        /in: cannot write .*response\.txt: .*response\.txt is a symbolic link: refused; nothing was written there/,
      );
      expect(readFileSync(join(f.home, '.profile'), 'utf8')).toBe('PROFILE-UNCHANGED\n');

      const g = fixture();
      const control = await inStep(g, undefined);
      expect(control.result.code, control.result.stderr).toBe(0);
      expect(readFileSync(join(control.dest, 'response.txt'), 'utf8')).toBe('THE-ANSWER');
    });

    it('payload.json planted as a FIFO: no hang, refused by name', async () => {
      const f = fixture();
      const { result } = await inStep(f, 'mkfifo payload.json');
      expect(result.signal, 'the step was killed: it blocked').toBeNull();
      expect(result.code).toBe(12);
      expect(result.stderr).toMatch(/payload\.json is a FIFO: refused; nothing was written there/);
    });
  });

  describe.skipIf(Boolean(skip))('the file tools, raced by a process that swaps a folder and a link', () => {
    const writes = (n: number) =>
      Array.from({ length: n }, (_, i) =>
        call('write_file', { path: 'd/authorized_keys', content: `key-${i}\n` }),
      );
    const reads = (n: number) => Array.from({ length: n }, () => call('read_file', { path: 'd/id_rsa' }));
    const setup = (f: Fixture) => {
      mkdirSync(join(f.proj, 'd'));
      writeFileSync(join(f.proj, 'd', 'id_rsa'), 'decoy\n');
      symlinkSync(join(f.home, '.ssh'), join(f.proj, 'l'));
    };

    it('write_file and read_file never reach ~/.ssh while d and a link to it swap; control works', async () => {
      const f = fixture();
      setup(f);
      const race = racer(f, [[join(f.proj, 'd'), join(f.proj, 'l')]], 60);
      // Eight rounds of ten calls, each round a model request apart: on a loaded machine the racer
      // can be off the CPU for all of one round's calls, so one round alone may see only one state.
      const rounds = [
        writes(10),
        writes(10),
        writes(10),
        writes(10),
        reads(10),
        reads(10),
        reads(10),
        reads(10),
      ];
      const { tools } = await agent(v, f, rounds, '[policy]\nallowed_paths_rw = ["."]\n');
      race.stop();
      expect(await race.done).toBeGreaterThan(0);
      expect(existsSync(join(f.home, '.ssh', 'authorized_keys'))).toBe(false);
      expect(tools.join('\n')).not.toContain(KEY_TEXT);
      expect(readFileSync(join(f.home, '.ssh', 'id_rsa'), 'utf8')).toBe(`${KEY_TEXT}\n`);
      // What was refused says so (the link on the way, or the floor the policy saw at that moment).
      const seen = [...new Set(tools.map((t) => t.slice(0, 160)))].join('\n');
      expect(
        tools.some((t) => /is a symbolic link: refused|secrets floor/.test(t)),
        seen,
      ).toBe(true);

      const g = fixture();
      setup(g);
      const control = await agent(v, g, [writes(1), reads(1)], '[policy]\nallowed_paths_rw = ["."]\n');
      expect(control.tools[0]).toMatch(/wrote 6 bytes/);
      expect(control.tools[1]).toContain('decoy');
    });
  });

  describe.skipIf(Boolean(skip) || v.mode === 'host')(
    'the call temporary folder is removed by descriptor',
    () => {
      // With namespaces a call's /tmp is private to its view: rune makes no host folder to remove.
      it('a raced sub-folder swapped for a link to a folder never granted: nothing there is deleted', async () => {
        const f = fixture();
        const precious = join(f.outside, 'precious');
        mkdirSync(precious);
        for (let i = 0; i < 1500; i++) writeFileSync(join(precious, `f${i}`), 'precious');
        const before = tree(f.outside);
        giveTreeTo(f.base, v.who);
        const race = racer(f, [[join(f.tmp, 'rune-call-*', 'sub'), join(f.tmp, 'rune-call-*', 'link')]], 60);
        const result = await sandbox(
          v,
          f,
          `mkdir "$TMPDIR/sub" && for i in $(seq 0 1499); do : > "$TMPDIR/sub/f$i"; done && ln -s '${precious}' "$TMPDIR/link"; echo ran`,
        );
        race.stop();
        await race.done;
        expect(result.stdout).toContain('ran');
        expect(tree(f.outside)).toEqual(before);
        // A racer that never stops can keep a name in the folder: what was left is said, not followed.
        if (readdirSync(f.tmp).some((n) => n.startsWith('rune-call-')))
          expect(result.stderr).toMatch(/the call's temporary folder was not removed entirely/);
      });

      it('a FIFO, socket, device and dangling link in it: removed, no hang, nothing outside touched', async () => {
        const f = fixture();
        const made = KINDS.map(
          (kind, i) =>
            `${premade(kind, join(f.proj, `tmp-${i}`), join(f.outside, `made-${i}`))} "$TMPDIR/e${i}"`,
        );
        const before = tree(f.outside);
        giveTreeTo(f.base, v.who);
        const result = await sandbox(
          v,
          f,
          `${made.join('; ')}; ln -s '${f.outside}' "$TMPDIR/out"; echo ran`,
        );
        expect(result.signal).toBeNull();
        expect(result.stdout).toContain('ran');
        expect(tree(f.outside)).toEqual(before);
        expect(readdirSync(f.tmp).filter((n) => n.startsWith('rune-call-'))).toEqual([]);
      });
    },
  );
});
