import { describe, expect, it } from 'vitest';
import { buildUrl } from './build-url.ts';

const job = {
  ATC_EXTERNAL_URL: 'https://ci.example.com/',
  BUILD_ID: '4242',
  BUILD_NAME: '17',
  BUILD_JOB_NAME: 'review commit',
  BUILD_PIPELINE_NAME: 'rune',
  BUILD_TEAM_NAME: 'main',
};

describe('buildUrl', () => {
  const cases: [string, NodeJS.ProcessEnv, string | undefined][] = [
    [
      "a job's build: team, pipeline, job and build name, each escaped",
      job,
      'https://ci.example.com/teams/main/pipelines/rune/jobs/review%20commit/builds/17',
    ],
    [
      'an instanced pipeline: its vars as JSON in the query, nested keys dotted',
      { ...job, BUILD_PIPELINE_INSTANCE_VARS: '{"branch":"feature/x","env":{"region":"eu"},"n":2}' },
      'https://ci.example.com/teams/main/pipelines/rune/jobs/review%20commit/builds/17?vars.branch=%22feature%2Fx%22&vars.env.region=%22eu%22&vars.n=2',
    ],
    [
      'a one-off build (no job): by id',
      { ATC_EXTERNAL_URL: 'https://ci.example.com', BUILD_ID: '9' },
      'https://ci.example.com/builds/9',
    ],
    [
      'the Concourse variables win over a BUILD_URL',
      { ...job, BUILD_URL: 'https://elsewhere/1' },
      'https://ci.example.com/teams/main/pipelines/rune/jobs/review%20commit/builds/17',
    ],
    [
      'no Concourse variables: a BUILD_URL as is',
      { BUILD_URL: 'https://elsewhere/1' },
      'https://elsewhere/1',
    ],
    ['check has no build: nothing', { ATC_EXTERNAL_URL: 'https://ci.example.com' }, undefined],
    [
      'an ATC_EXTERNAL_URL that is not http(s) is not a link',
      { ...job, ATC_EXTERNAL_URL: 'javascript:alert(1)' },
      undefined,
    ],
    [
      'broken instance vars are left out, the link stays',
      { ...job, BUILD_PIPELINE_INSTANCE_VARS: '{oops' },
      'https://ci.example.com/teams/main/pipelines/rune/jobs/review%20commit/builds/17',
    ],
  ];
  for (const [name, env, url] of cases) it(name, () => expect(buildUrl(env)).toBe(url));
});
