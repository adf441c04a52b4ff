import { describe, expect, it } from 'vitest';
import { describeCapabilities, type KernelProbe, type SystemFacts } from './capabilities.ts';
import { OPEN_PROBE } from './probe-fixtures.ts';

const EPERM = -1;
const ENOSPC = -28;
const ECANCELED = -125;

const open: KernelProbe = OPEN_PROBE;
const refused = { userns: EPERM, netns: ECANCELED, mountns: ECANCELED, pidns: ECANCELED };

const facts: SystemFacts = {
  cgroup2Controllers: [],
  cgroup2Writable: false,
  cgroupV1Present: false,
  pid1Comm: 'bash',
  uid: 10001,
  usernsSysctls: { unprivilegedUsernsClone: 1, maxUserNamespaces: 63000 },
};

describe('describeCapabilities: why user namespaces are missing', () => {
  const cases: {
    name: string;
    probe: Partial<KernelProbe>;
    facts?: Partial<SystemFacts>;
    blames: RegExp;
    clears: RegExp[];
  }[] = [
    {
      name: "a container runtime's filter (unshare itself refused) is named, not the sysctls",
      probe: { ...refused, currentSeccomp: 2, unshareNoop: EPERM },
      blames: /seccomp filter stacked on rune refuses unshare .*Seccomp: 2/,
      clears: [/unprivileged_userns_clone/, /max_user_namespaces/, /AppArmor/],
    },
    {
      name: 'a filter that lets unshare(0) through is still named, as the likely cause, when no sysctl refuses',
      probe: { ...refused, currentSeccomp: 2, unshareNoop: 0 },
      blames: /seccomp filter is stacked on rune .*no sysctl refuses/,
      clears: [/unprivileged_userns_clone is 0/],
    },
    {
      name: "Debian's switch set to 0 is named with its value",
      probe: refused,
      facts: { usernsSysctls: { unprivilegedUsernsClone: 0, maxUserNamespaces: 63000 } },
      blames: /kernel\.unprivileged_userns_clone is 0/,
      clears: [/seccomp/],
    },
    {
      name: "Debian's switch does not bind root, so it is not blamed for root",
      probe: refused,
      facts: { uid: 0, usernsSysctls: { unprivilegedUsernsClone: 0 } },
      blames: /refused here \(kernel\.unprivileged_userns_clone, user\.max_user_namespaces/,
      clears: [/is 0/],
    },
    {
      name: "Ubuntu's AppArmor restriction is named",
      probe: refused,
      facts: { usernsSysctls: { apparmorRestrictUserns: 1 } },
      blames: /apparmor_restrict_unprivileged_userns is 1/,
      clears: [/seccomp/],
    },
    {
      name: 'both a sysctl and a refusing filter are named when both are in the way',
      probe: { ...refused, currentSeccomp: 2, unshareNoop: EPERM },
      facts: { usernsSysctls: { unprivilegedUsernsClone: 0 } },
      blames: /unprivileged_userns_clone is 0.*; a seccomp filter stacked on rune refuses unshare/,
      clears: [],
    },
    {
      name: 'user.max_user_namespaces = 0 gives ENOSPC and is named',
      probe: { ...refused, userns: ENOSPC },
      facts: { usernsSysctls: { maxUserNamespaces: 0 } },
      blames: /ENOSPC: user\.max_user_namespaces is 0/,
      clears: [/seccomp/],
    },
    {
      name: 'nothing known in the way: the candidates are listed',
      probe: refused,
      blames: /refused here \(kernel\.unprivileged_userns_clone, .*seccomp filter\)/,
      clears: [/is 0/],
    },
  ];
  for (const test of cases) {
    it(test.name, () => {
      const caps = describeCapabilities({ ...open, ...test.probe }, { ...facts, ...test.facts });
      expect(caps.userNamespaces.available).toBe(false);
      expect(caps.userNamespaces.detail).toMatch(test.blames);
      for (const clear of test.clears) expect(caps.userNamespaces.detail).not.toMatch(clear);
      // The namespaces that were not tried carry the same cause, not "an earlier namespace".
      for (const ns of [caps.netNamespaces, caps.mountNamespaces, caps.pidNamespaces]) {
        expect(ns.available).toBe(false);
        expect(ns.detail).toBe(`needs a user namespace first: ${caps.userNamespaces.detail}`);
      }
    });
  }

  it('a later namespace that failed on its own is named by its own errno', () => {
    const caps = describeCapabilities({ ...open, netns: EPERM, mountns: ECANCELED, pidns: ECANCELED }, facts);
    expect(caps.userNamespaces.available).toBe(true);
    expect(caps.netNamespaces.detail).toBe('unshare(CLONE_NEWNET) failed with EPERM');
    expect(caps.mountNamespaces.detail).toBe('not tried: an earlier namespace could not be created');
  });

  it('says when rune already runs under a seccomp filter, and that its own is stacked on it', () => {
    expect(describeCapabilities(open, facts).seccomp.detail).toBe('filter mode');
    expect(describeCapabilities({ ...open, currentSeccomp: 2 }, facts).seccomp.detail).toMatch(
      /^filter mode, stacked on a filter/,
    );
  });
});
