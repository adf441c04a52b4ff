import { describe, expect, it } from 'vitest';
import { becomeStepOwner, type ProcessIdentity } from './step-user.ts';

function identity(uid: number): ProcessIdentity & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    getuid: () => uid,
    setgroups: (groups) => calls.push(`groups ${groups.join(',')}`),
    setgid: (gid) => calls.push(`gid ${gid}`),
    setuid: (id) => calls.push(`uid ${id}`),
  };
}

const owners: Record<string, { uid: number; gid: number }> = {
  '/tmp/build/root': { uid: 0, gid: 0 },
  '/tmp/build/user': { uid: 10001, gid: 10001 },
  '/tmp/build': { uid: 0, gid: 0 },
  '/home/rune': { uid: 10001, gid: 10001 },
  '/root': { uid: 0, gid: 0 },
};
const stat = (path: string) => {
  const owner = owners[path];
  if (!owner) throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
  return owner;
};

describe('becomeStepOwner', () => {
  it.each([
    ['in', ['/tmp/build/user'], {}, 10001, ['groups 10001', 'gid 10001', 'uid 10001']],
    ['out', ['/tmp/build/user'], {}, 10001, ['groups 10001', 'gid 10001', 'uid 10001']],
    ['in', ['/tmp/build/root'], {}, undefined, []],
    // A destination not made yet: its parent decides.
    ['in', ['/tmp/build/new/get'], {}, undefined, []],
    ['check', [], { HOME: '/home/rune' }, 10001, ['groups 10001', 'gid 10001', 'uid 10001']],
    ['check', [], { HOME: '/root' }, undefined, []],
    ['check', [], {}, undefined, []],
  ] as const)('%s %j %j as root → uid %s', (step, args, env, uid, calls) => {
    const id = identity(0);
    expect(becomeStepOwner(step, args, env, id, stat)?.uid).toBe(uid);
    expect(id.calls).toEqual(calls);
  });

  it('changes nothing for a step not started as root', () => {
    const id = identity(10001);
    expect(becomeStepOwner('in', ['/tmp/build/root'], {}, id, stat)).toBeUndefined();
    expect(id.calls).toEqual([]);
  });
});
