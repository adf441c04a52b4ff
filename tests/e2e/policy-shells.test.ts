// The differential test of issue 34: a few thousand command lines built from the corners where a
// judge and a shell can disagree (tests/helpers/shell-corners.ts) go through the real policy gate
// with a list of ordinary programs; every line it auto-allows runs — as rune runs it, the text the
// gate returns — under dash and under bash as /bin/sh, with strace as the ground truth. Nothing may
// execute a program off the list, write outside the writable folder, or open the secret. And the
// model's own text must run the same programs with the same argv as rune's rewrite: the parser
// reads lines the way both shells do.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULTS } from '../../src/config/schema.ts';
import { silentLogger } from '../../src/core/logger.ts';
import { createPolicyGate } from '../../src/policy/gate.ts';
import { tempDir } from '../helpers/rune.ts';
import { cornerLines, LISTED, PWN } from '../helpers/shell-corners.ts';
import { readStraceLog, type TracedRun } from '../helpers/strace-log.ts';

const SHELLS = { dash: '/usr/bin/dash', bash: '/usr/bin/bash' } as const;
const PYTHON = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
const missing = ['strace', 'dash'].filter(
  (tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0,
);
const LINES = Number(process.env.RUNE_SHELL_LINES ?? 3000);
const CHUNKS = 8;

/** Runs each [shell, script] in order under strace; `/bin/true mark-N` between runs tells them apart. */
const DRIVER = `
import json, os, signal, subprocess, sys
runs = json.load(open(sys.argv[1]))
env = {"PATH": "/usr/bin:/bin", "HOME": sys.argv[2], "LANG": "C.UTF-8"}
for index, (shell, script) in enumerate(runs):
    subprocess.run(["/bin/true", "mark-%d" % index])
    child = subprocess.Popen(["sh", "-c", script], executable=shell, cwd=sys.argv[3], env=env,
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        child.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()
`;

interface World {
  root: string;
  work: string;
  home: string;
  out: string;
}

function makeWorld(): World {
  const root = tempDir('rune-policy-shells-');
  const work = join(root, 'work');
  const home = join(root, 'home');
  const out = join(work, 'out');
  mkdirSync(join(work, 'sub'), { recursive: true });
  mkdirSync(out);
  mkdirSync(join(home, '.ssh'), { recursive: true });
  writeFileSync(join(work, 'a.txt'), 'a 1\nb 2\nc 3\n');
  writeFileSync(join(work, 'b.txt'), 'b\n');
  writeFileSync(join(work, 'sub', 'c.txt'), 'c\n');
  writeFileSync(join(out, 'c.txt'), 'a\n');
  writeFileSync(join(home, '.ssh', 'id_rsa'), 'SECRET\n');
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], {
      cwd: work,
      stdio: 'ignore',
    });
  git('init', '-q');
  git('add', 'a.txt', 'b.txt', 'sub');
  git('commit', '-q', '-m', 'one');
  return { root, work, home, out };
}

/**
 * Runs every [shell, script] under strace, in a few parallel chunks: a traced fork waits on the
 * scheduler, so on a busy machine the chunks overlap their waits. Returns what each run did.
 */
async function trace(worlds: World[], runs: [string, string][]): Promise<Map<number, WorldRun>> {
  const syscalls =
    'execve,chdir,clone,clone3,fork,vfork,open,openat,creat,truncate,mkdir,mkdirat,unlink,unlinkat,rmdir,rename,renameat,renameat2,link,linkat,symlink,symlinkat';
  const size = Math.ceil(runs.length / CHUNKS);
  const chunks = Array.from({ length: CHUNKS }, (_, chunk) => runs.slice(chunk * size, (chunk + 1) * size));
  const traced = new Map<number, WorldRun>();
  await Promise.all(
    chunks.map(async (chunk, number) => {
      // Each chunk in a world of its own: git's index lock and the files lines write are not shared.
      const world = worlds[number]!;
      const driver = join(world.root, 'driver.py');
      writeFileSync(driver, DRIVER);
      const payload = join(world.root, `runs-${number}.json`);
      const log = join(world.root, `strace-${number}.log`);
      writeFileSync(payload, JSON.stringify(chunk));
      const args = [
        '--seccomp-bpf',
        '-f',
        '-qq',
        '-v',
        '-xx',
        '-y',
        '-s',
        '4096',
        '-e',
        `trace=${syscalls}`,
        '-o',
        log,
      ];
      const child = spawn('strace', [...args, PYTHON, driver, payload, world.home, world.work], {
        stdio: 'ignore',
      });
      const code = await new Promise<number | null>((done) => child.on('close', done));
      if (code !== 0) throw new Error(`strace exited with ${code}`);
      if (process.env.RUNE_SHELL_DEBUG) execFileSync('cp', [log, payload, process.env.RUNE_SHELL_DEBUG]);
      const runsOf = readStraceLog(readFileSync(log, 'latin1'), world.work, (path) =>
        Object.values(SHELLS).includes(path as never),
      );
      for (const [index, run] of runsOf) traced.set(number * size + index, { ...run, world: number });
    }),
  );
  return traced;
}

/** What a run did that the policy promised could not happen. */
function violations(world: World, run: TracedRun): string[] {
  const found: string[] = [];
  for (const exec of run.execs) {
    const name = basename(exec.path);
    // git runs its own helpers (git-core) for some subcommands; they are git.
    if (!LISTED.includes(name) && !exec.path.startsWith('/usr/lib/git-core/')) {
      found.push(`executed ${exec.argv.join(' ')}`);
    }
  }
  for (const path of run.writes) {
    const inside = (folder: string) => path === folder || path.startsWith(`${folder}/`);
    // git keeps its index and locks in the repository: its bookkeeping, not a file the line named.
    if (
      !inside(world.out) &&
      !inside(join(world.work, '.git')) &&
      !['/dev/null', '/dev/tty'].includes(path)
    ) {
      found.push(`wrote ${path}`);
    }
  }
  for (const path of run.reads) if (path.startsWith(join(world.home, '.ssh'))) found.push(`read ${path}`);
  return found;
}

type WorldRun = TracedRun & { world: number };

const argvs = (run: TracedRun | undefined) =>
  (run?.execs ?? []).map((exec) => JSON.stringify(exec.argv)).sort();

describe.skipIf(missing.length > 0)(
  `allowed command lines under dash and bash (strace) ${missing.length > 0 ? `— needs ${missing.join(', ')}` : ''}`,
  () => {
    let worlds: World[];
    beforeAll(() => {
      worlds = Array.from({ length: CHUNKS }, makeWorld);
    });

    it(`nothing ${LINES} corner lines auto-allow runs off the list, writes outside, or reads the secret; both shells read them as rune does`, async () => {
      const world = worlds[0]!;
      const config = {
        ...DEFAULTS,
        mcp: [],
        // No sandbox here: no private /tmp, no git guard; the policy must hold by itself.
        sandbox: { ...DEFAULTS.sandbox, mode: 'off' as const },
        policy: {
          ...DEFAULTS.policy,
          mode: 'allowlist' as const,
          allowed_commands: LISTED,
          allowed_paths_ro: [world.work],
          allowed_paths_rw: [world.out],
        },
      };
      const gate = createPolicyGate({
        config,
        cwd: world.work,
        env: { HOME: world.home, RUNE_HOME: join(world.root, 'rune') },
        interactive: false,
        yes: false,
        sessionId: 'shells',
        logger: silentLogger,
      });
      const judging = performance.now();
      const allowed: { line: string; script: string }[] = [];
      for (const line of cornerLines(LINES)) {
        const decision = await gate.check({
          tool: 'execute_cmd',
          args: { cmd: line },
          source: 'builtin',
          access: { kind: 'command' },
        });
        // A gate that returns no re-write (before ADR 0037) runs the model's text.
        if (decision.kind === 'allow') allowed.push({ line, script: String(decision.args?.cmd ?? line) });
      }
      console.log(`judged in ${Math.round(performance.now() - judging)} ms`);
      // Each allowed line four times: rune's text and the model's, under each shell.
      const runs: [string, string][] = allowed.flatMap(({ line, script }) =>
        Object.values(SHELLS).flatMap((shell) => [
          [shell, script] as [string, string],
          [shell, line] as [string, string],
        ]),
      );
      // Controls, traced like the rest: each must be caught, or the checks could not fail.
      const controls: [string, string][] = [
        [SHELLS.dash, `touch ${PWN}`],
        [SHELLS.bash, 'cat ~/.ssh/id_rsa'],
        [SHELLS.dash, 'echo x > ../escape'],
        [SHELLS.bash, 'ls a.txt'],
        [SHELLS.bash, 'ls b.txt'],
      ];
      const started = performance.now();
      const traced = await trace(worlds, [...runs, ...controls]);
      console.log(`traced in ${Math.round(performance.now() - started)} ms`);
      const problems: string[] = [];
      for (const [index, { line, script }] of allowed.entries()) {
        for (const [offset, shell] of Object.keys(SHELLS).entries()) {
          const ours = traced.get(index * 4 + offset * 2);
          const theirs = traced.get(index * 4 + offset * 2 + 1);
          if (!ours) problems.push(`${shell} did not run ${JSON.stringify(script)}`);
          for (const found of ours ? violations(worlds[ours.world]!, ours) : []) {
            problems.push(`${shell}: ${JSON.stringify(line)} ran as ${JSON.stringify(script)} and ${found}`);
          }
          // `./` before a word that starts with a glob is rune's on purpose; the rest must match.
          if (
            !/(^| )\.\/[*?[]/.test(script) &&
            JSON.stringify(argvs(ours)) !== JSON.stringify(argvs(theirs))
          ) {
            problems.push(
              `${shell} reads ${JSON.stringify(line)} differently: rune ran ${argvs(ours).join(' ')}, the text runs ${argvs(theirs).join(' ')}`,
            );
          }
        }
      }
      console.log(
        `policy-shells: ${LINES} lines, ${allowed.length} auto-allowed, ${runs.length} traced runs`,
      );
      expect(problems).toEqual([]);
      const control = (offset: number) => traced.get(runs.length + offset)!;
      const caught = [0, 1, 2].map((offset) => violations(worlds[control(offset).world]!, control(offset)));
      expect(caught[0]!.join()).toContain(`executed touch ${PWN}`);
      expect(caught[1]!.join()).toContain('read ');
      expect(caught[2]!.join()).toContain('wrote ');
      expect(argvs(control(3))).not.toEqual(argvs(control(4)));
      // The corners must reach the shells: a gate that allowed nothing would pass vacuously.
      expect(allowed.length).toBeGreaterThan(LINES / 10);
    }, 300_000);
  },
);
