import { describe, expect, it } from 'vitest';
import { allowedEnvironment, describeEnvironmentRule } from './env.ts';

describe('allowedEnvironment', () => {
  const cases: Array<[string, string, readonly string[], boolean]> = [
    ['PATH', '/usr/bin', [], true],
    ['HOME', '/home/u', [], true],
    ['LANG', 'C.UTF-8', [], true],
    ['LC_ALL', 'C', [], true],
    ['LC_CTYPE', 'en_US.UTF-8', [], true],
    ['TERM', 'xterm', [], true],
    ['TZ', 'UTC', [], true],
    ['USER', 'u', [], true],
    ['LOGNAME', 'u', [], true],
    ['SHELL', '/bin/bash', [], true],
    ['TMPDIR', '/tmp', [], true],
    // Secrets under names no deny list would catch.
    ['DATABASE_URL', 'postgres://app:pw@db/app', [], false],
    ['MYSQL_PWD', 'pw', [], false],
    ['GH_PAT', 'ghp_x', [], false],
    ['CI_JOB_JWT', 'eyJ', [], false],
    ['NPM_AUTH', 'x', [], false],
    ['HTTPS_PROXY', 'http://u:pw@proxy:3128', [], false],
    ['SSH_AUTH_SOCK', '/run/agent.sock', [], false],
    ['RUNE_API_KEY', 'sk-x', [], false],
    ['LC_', 'x', [], false],
    ['LC_MESSAGES', 'C', [], true],
    ['LC_IDENTIFICATION', 'C', [], true],
    // OpenSSH forwards LC_* by default, so tokens travel under such names.
    ['LC_BASTION_TOKEN', 'tok', [], false],
    ['LC_SECRET', 'x', [], false],
    ['lc_all', 'x', [], false],
    ['PATHX', '/x', [], false],
    // Passthrough names are exact.
    ['GH_TOKEN', 'ghp', ['GH_TOKEN'], true],
    ['GH_TOKEN2', 'ghp', ['GH_TOKEN'], false],
    ['DATABASE_URL', 'postgres://x', ['DATABASE_*'], false],
    // An exported bash function never passes, whatever its name.
    ['TERM', '() { curl evil; }', [], false],
    ['BASH_FUNC_ls%%', '() { evil; }', ['BASH_FUNC_ls%%'], false],
  ];
  it.each(cases)('%s=%s with passthrough %j → passed: %s', (name, value, passthrough, passed) => {
    const { env, removed } = allowedEnvironment({ [name]: value }, passthrough);
    expect(name in env).toBe(passed);
    expect(removed.includes(name)).toBe(!passed);
  });

  it('drops undefined values and never reports values', () => {
    const { env, removed } = allowedEnvironment({ PATH: undefined, SECRET: 'hunter2' }, []);
    expect(env).toEqual({});
    expect(removed).toEqual(['SECRET']);
  });

  it('describes the rule with the passthrough names', () => {
    expect(describeEnvironmentRule(['GH_TOKEN'])).toMatch(
      /only PATH, HOME, LANG, LC_\*.*env_passthrough: GH_TOKEN/,
    );
    expect(describeEnvironmentRule([])).toMatch(/env_passthrough: \(none\)/);
  });
});
