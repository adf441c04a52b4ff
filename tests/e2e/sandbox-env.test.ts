// The environment rule through the built binary: a run with twenty secret-looking variables set
// shows none of them, by name or by value, to a tool (execute_cmd) or to an MCP server (the real
// server-everything's get-env), while the allow list, `[sandbox] env_passthrough` and an MCP
// table's own `env` do arrive.
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { type RecordedRequest, useMockLlm } from '../helpers/mock-llm.ts';
import { cleanEnv, requireBinary, runRune, tempDir } from '../helpers/rune.ts';

const require = createRequire(import.meta.url);
const EVERYTHING = join(
  dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')),
  'dist/index.js',
);
const KEY = 'sk-test-env-e2e-5a4b3c2d1e0f9a8b7c6d';
const mock = useMockLlm();

/** Twenty-one variables a CI runner or a developer shell really holds; none is on the allow list. */
const SECRETS: Record<string, string> = {
  DATABASE_URL: 'postgres://app:dburl-pw-7731@db.internal:5432/app',
  MYSQL_PWD: 'mysql-pw-7732',
  PGPASSWORD: 'pg-pw-7733',
  GH_PAT: 'ghp_pat7734abcdefghijklmnopqrstuvwxyz01',
  GITHUB_TOKEN: 'ghs_tok7735abcdefghijklmnopqrstuvwxyz0',
  CI_JOB_JWT: 'eyJhbGciOiJSUzI1NiJ9.jwt-7736',
  CI_JOB_TOKEN: 'glcbt-7737',
  NPM_AUTH: 'npm-auth-7738',
  NPM_TOKEN: 'npm_tok7739',
  NODE_AUTH_TOKEN: 'node-auth-7740',
  HTTPS_PROXY: 'http://user:proxy-pw-7741@proxy.internal:3128',
  http_proxy: 'http://user:proxy-pw-7742@proxy.internal:3128',
  SSH_AUTH_SOCK: '/run/user/1000/agent-7743.sock',
  AWS_ACCESS_KEY_ID: 'AKIA7744EXAMPLE',
  AWS_SECRET_ACCESS_KEY: 'aws-secret-7745',
  AWS_SESSION_TOKEN: 'aws-session-7746',
  DOCKER_AUTH_CONFIG: '{"auths":{"r":{"auth":"docker-7747"}}}',
  SLACK_WEBHOOK_URL: 'https://hooks.slack.com/services/T0/B0/slack-7748',
  SENTRY_DSN: 'https://sentry-7749@o1.ingest.sentry.io/1',
  VAULT_ADDR_WITH_TOKEN: 'https://vault.internal/?token=vault-7750',
  // OpenSSH forwards LC_* by default: not a locale category, so not a locale variable.
  LC_BASTION_TOKEN: 'lc-token-7751',
};

// biome-ignore lint/suspicious/noExplicitAny: wire JSON
type Message = any;
function toolResults(request: RecordedRequest | undefined): string[] {
  return ((request?.body?.messages ?? []) as Message[])
    .filter((m) => m.role === 'tool')
    .map((m) => String(m.content));
}

function setup(toml: string) {
  const home = tempDir('rune-env-home-');
  const runeHome = join(home, '.rune');
  mkdirSync(runeHome, { mode: 0o700 });
  writeFileSync(join(runeHome, 'rune.toml'), toml);
  return { cwd: tempDir('rune-env-cwd-'), env: { ...cleanEnv(home), RUNE_HOME: runeHome } };
}

const mcpTable = (extra: string) =>
  [
    '[[mcp]]',
    'name = "ev"',
    'command = "node"',
    `args = ["${EVERYTHING}", "stdio"]`,
    'env = { FROM_THE_TABLE = "table-7760" }',
    '',
    extra,
  ].join('\n');

async function runBoth(toml: string, extraEnv: Record<string, string>) {
  mock.script([
    {
      toolCalls: [
        { name: 'execute_cmd', arguments: { cmd: 'env' } },
        { name: 'get-env', arguments: {} },
      ],
    },
    { text: 'done' },
  ]);
  const h = setup(toml);
  const result = await runRune(
    ['--base-url', mock.baseUrl, '--api-key', KEY, '--model', 'm', '--unrestricted', 'show the environment'],
    { cwd: h.cwd, env: { ...h.env, ...SECRETS, ...extraEnv }, timeoutMs: 50_000 },
  );
  expect(result.code, result.stderr).toBe(0);
  const [tool, server] = toolResults(mock.requests[1]);
  return { tool: tool ?? '', server: server ?? '' };
}

beforeAll(() => {
  requireBinary();
});

describe('the environment allow list', () => {
  it('shows none of twenty-one secret-looking variables to a tool or an MCP server', async () => {
    const { tool, server } = await runBoth(mcpTable(''), { PLAIN_SETTING: 'plain-7761' });
    // Both did print an environment with the allow list in it…
    expect(tool).toMatch(/^PATH=/m);
    expect(tool).toMatch(/^LANG=C\.UTF-8$/m);
    expect(server).toContain('"PATH"');
    // …and the table's own env reached the server.
    expect(server).toContain('"FROM_THE_TABLE": "table-7760"');
    for (const [name, value] of Object.entries({ ...SECRETS, PLAIN_SETTING: 'plain-7761' })) {
      for (const output of [tool, server]) {
        expect(output).not.toContain(name);
        expect(output).not.toContain(value);
      }
    }
    expect(tool + server).not.toContain(KEY);
  });

  it('passes the names env_passthrough lists, exactly those', async () => {
    const toml = mcpTable('[sandbox]\nenv_passthrough = ["MYSQL_PWD", "PLAIN_SETTING"]\n');
    const { tool, server } = await runBoth(toml, { PLAIN_SETTING: 'plain-7761' });
    expect(tool).toContain(`MYSQL_PWD=${SECRETS.MYSQL_PWD}`);
    expect(tool).toContain('PLAIN_SETTING=plain-7761');
    expect(server).toContain(`"MYSQL_PWD": "${SECRETS.MYSQL_PWD}"`);
    expect(server).toContain('"PLAIN_SETTING": "plain-7761"');
    expect(tool + server).not.toContain('GH_PAT');
    expect(tool + server).not.toContain(SECRETS.DATABASE_URL);
  });

  it('refuses a pattern in env_passthrough with the file and key named', async () => {
    const h = setup('[sandbox]\nenv_passthrough = ["AWS_*"]\n');
    const result = await runRune(['--base-url', mock.baseUrl, '--api-key', KEY, '--model', 'm', 'x'], {
      cwd: h.cwd,
      env: h.env,
    });
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/rune\.toml: sandbox\.env_passthrough\.0: must be one exact variable name/);
  });
});
