import { describe, expect, it } from 'vitest';
import { planServerSandbox } from './plan.ts';

const runeEnv = {
  HOME: '/home/u',
  PATH: '/usr/bin:/bin',
  USER: 'u',
  RUNE_API_KEY: 'sk-secret-0123456789',
  OPENAI_API_KEY: 'sk-other',
  GITHUB_TOKEN: 'ghp_x',
  AWS_SECRET_ACCESS_KEY: 'aws',
  BASH_FUNC_x: '() { evil; }',
  TERM: '() { evil; }',
};

describe('planServerSandbox', () => {
  it('grants its own program and package, then only what the table lists', () => {
    const plan = planServerSandbox(
      {
        name: 'fs',
        command: 'node',
        args: ['/pkg/dist/index.js', '/'],
        allowed_paths_ro: ['/data', '/work'],
        allowed_paths_rw: ['/work'],
        allowed_domains: ['api.example.com'],
      },
      { program: '/usr/bin/node', ownPaths: ['/usr', '/pkg'] },
      '/project',
      runeEnv,
    );
    expect(plan).toEqual({
      argv: ['/usr/bin/node', '/pkg/dist/index.js', '/'],
      cwd: '/project',
      env: runeEnv,
      readOnlyPaths: ['/usr', '/pkg', '/data'],
      readWritePaths: ['/work'],
      allowedDomains: ['api.example.com'],
    });
  });

  it('gives no network and no extra paths when the table grants none', () => {
    const plan = planServerSandbox(
      { name: 's', command: 's' },
      { program: '/opt/s/s', ownPaths: ['/opt/s'] },
      '/p',
      {},
    );
    expect(plan.allowedDomains).toEqual([]);
    expect(plan.readWritePaths).toEqual([]);
    expect(plan.readOnlyPaths).toEqual(['/opt/s']);
    expect(plan.env).toEqual({});
    expect(plan.configuredEnv).toBeUndefined();
  });

  it("hands rune's environment to the executor's allow list and the table env apart, as configured", () => {
    const plan = planServerSandbox(
      { name: 's', command: 's', env: { API_BASE: 'https://x', GITHUB_TOKEN: 'given-on-purpose' } },
      { program: '/opt/s/s', ownPaths: ['/opt/s'] },
      '/p',
      runeEnv,
    );
    expect(plan.configuredEnv).toEqual({ API_BASE: 'https://x', GITHUB_TOKEN: 'given-on-purpose' });
    expect(plan.env).toEqual(runeEnv);
  });
});
