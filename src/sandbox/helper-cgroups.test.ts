// The helper moves the call into its cgroups while the call builds its view (native/src/cgroups.c):
// the command starts only after the move, and a move that fails is a failed layer.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { sandboxHelperPath } from './helper.ts';
import { SYSTEM_READ_ONLY } from './plan.ts';

const SYSTEM = SYSTEM_READ_ONLY.flatMap((folder) => ['--sys', folder]);

function helper(args: string[]) {
  const result = spawnSync(sandboxHelperPath(), ['--report', '3', ...args], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
  });
  return { status: result.status, stdout: result.stdout, report: String(result.output[3] ?? '') };
}

describe('joining the call cgroups', () => {
  for (const namespaces of [true, false]) {
    const ns = namespaces ? [] : ['--no-namespaces'];
    it(`strict mode: a cgroup that cannot be joined stops the call before the command (${namespaces ? 'view' : 'no namespaces'})`, () => {
      const r = helper([
        ...SYSTEM,
        '--strict',
        ...ns,
        '--cgroup',
        '/nonexistent-rune-cgroup',
        '--',
        '/bin/echo',
        'RAN',
      ]);
      expect(r.status).toBe(125);
      expect(r.stdout).not.toContain('RAN');
      expect(r.report).toMatch(/^cgroups\tfailed\tjoining \/nonexistent-rune-cgroup/m);
    });

    it(`auto mode: the command runs and the report says the cgroup was skipped (${namespaces ? 'view' : 'no namespaces'})`, () => {
      const r = helper([...SYSTEM, ...ns, '--cgroup', '/nonexistent-rune-cgroup', '--', '/bin/echo', 'RAN']);
      expect(r.status).toBe(0);
      expect(r.stdout).toBe('RAN\n');
      expect(r.report).toMatch(/^cgroups\tskipped\tjoining \/nonexistent-rune-cgroup/m);
    });
  }

  it('refuses more cgroups than it can join instead of leaving one out', () => {
    const many = Array.from({ length: 9 }, (_, i) => ['--cgroup', `/nonexistent-rune-cgroup-${i}`]).flat();
    const r = helper([...SYSTEM, ...many, '--', '/bin/echo', 'RAN']);
    expect(r.status).toBe(2);
    expect(r.stdout).not.toContain('RAN');
  });
});
