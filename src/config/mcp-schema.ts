// The `[[mcp]]` tables of rune.toml, part of its one schema (schema.ts): the keys of a stdio or a
// remote server, and the check that keeps the two kinds apart and every credential out of the file.
// Concourse's `source.mcp` reuses the keys and the check.
import type { z as Z } from 'zod/v4';
import { CREDENTIAL_HEADERS } from '../core/command-credentials.ts';
import { redact } from '../core/redact.ts';
import { domainList, once, pathList, positiveInt, z } from './schema-kit.ts';

/**
 * Built-in values of one `[[mcp]]` table (or `--mcp-stdio`/`--mcp-http` server) where it leaves a key
 * out: list entries have no place in DEFAULTS (schema.ts), so they are declared here, with the table.
 */
export const MCP_SERVER_DEFAULTS = { timeout_secs: 60 } as const;

export const MCP_TRANSPORTS = ['streamable-http', 'sse'] as const;
export type McpTransportName = (typeof MCP_TRANSPORTS)[number];

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const headerName = once(() => z().string().regex(HEADER_NAME, 'is not a valid HTTP header name'));
const envName = once(() =>
  z()
    .string()
    .regex(ENV_NAME, 'must be the name of an environment variable (letters, digits, _), not its value')
    // A token pasted where its variable's name belongs (ghp_…, sk-…) would sit in the file in clear.
    .refine(
      (name) => redact(name) === name,
      'looks like a token: name the environment variable that holds it',
    ),
);

/** Keys of an `[[mcp]]` table; shared with Concourse's `source.mcp`, which adds `bearer_token`. */
export const mcpServerShape = once(() => ({
  name: z().string().min(1).describe('Name shown in /tools and used in `server.*` allowlist patterns'),
  command: z().string().min(1).optional().describe('Program that starts a stdio server'),
  args: z().array(z().string()).optional().describe('Arguments of the command'),
  env: z()
    .record(z().string(), z().string())
    .optional()
    .describe('Environment of a stdio server; nothing else is passed'),
  url: z()
    .string()
    .min(1)
    .optional()
    .describe(
      'Endpoint of a remote server (Streamable HTTP, or legacy SSE), e.g. https://mcp.example.com/mcp',
    ),
  transport: z()
    .enum(MCP_TRANSPORTS)
    .optional()
    .describe('Remote transport; default: Streamable HTTP, falling back to SSE when the server refuses it'),
  headers: z()
    .record(
      headerName(),
      z()
        .string()
        .regex(/^[^\r\n]*$/, 'must be one line'),
    )
    .optional()
    .describe('Extra HTTP headers sent to a remote server (no credentials: see env_headers)'),
  env_headers: z()
    .record(headerName(), envName())
    .optional()
    .describe(
      'HTTP headers whose values come from environment variables, e.g. { "X-Api-Key" = "SEARCH_KEY" }',
    ),
  bearer_token_env_var: envName()
    .optional()
    .describe('Environment variable holding a bearer token for a remote server (instead of OAuth)'),
  required: z().boolean().optional().describe('Stop rune when this server cannot start'),
  timeout_secs: positiveInt()
    .optional()
    .describe(`Per-call timeout in seconds (default ${MCP_SERVER_DEFAULTS.timeout_secs})`),
  allowed_paths_ro: pathList().optional().describe('Folders a stdio server process may read'),
  allowed_paths_rw: pathList().optional().describe('Folders a stdio server process may write'),
  allowed_domains: domainList()
    .optional()
    .describe(
      'Hosts the server may reach: a stdio server process, or a remote server and its OAuth endpoints',
    ),
}));

const STDIO_ONLY = ['args', 'env', 'allowed_paths_ro', 'allowed_paths_rw'] as const;
const REMOTE_ONLY = ['transport', 'headers', 'env_headers', 'bearer_token_env_var', 'bearer_token'] as const;

function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  return bare === 'localhost' || bare.endsWith('.localhost') || bare === '::1' || /^127\./.test(bare);
}

/**
 * A table is either a stdio server (`command`) or a remote one (`url`); keys of the other kind are
 * refused rather than ignored, and a credential can never be written into the file itself.
 * `secretHeaders`: the table comes from a credential store (Concourse's source), so its headers may
 * hold credentials (they are treated as secrets there).
 */
export function checkMcpTable(
  table: Record<string, unknown>,
  ctx: Z.RefinementCtx,
  secretHeaders = false,
): void {
  const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
  const hasCommand = table.command !== undefined;
  const hasUrl = table.url !== undefined;
  if (hasCommand === hasUrl) {
    issue(
      hasCommand ? 'url' : 'command',
      hasCommand
        ? 'give either command (a stdio server) or url (a remote server), not both'
        : 'give command (a stdio server) or url (a remote server)',
    );
    return;
  }
  const wrong = (hasUrl ? STDIO_ONLY : REMOTE_ONLY).filter((key) => table[key] !== undefined);
  for (const key of wrong) {
    issue(
      key,
      hasUrl ? `is for stdio servers (command), not for url` : `is for remote servers (url), not for command`,
    );
  }
  const headers = secretHeaders ? {} : ((table.headers as Record<string, string> | undefined) ?? {});
  for (const [name, value] of Object.entries(headers)) {
    // A credential header's value belongs in the environment (env_headers), never in a file.
    if (CREDENTIAL_HEADERS.has(name.toLowerCase())) {
      issue(
        'headers',
        `"${name}" carries a credential: name an environment variable in bearer_token_env_var or env_headers instead of writing the secret here`,
      );
    } else if (redact(value) !== value) {
      issue(
        'headers',
        `the value of "${name}" looks like a key: put it in an environment variable and name it in env_headers`,
      );
    }
  }
  if (!hasUrl) return;
  let url: URL;
  try {
    url = new URL(String(table.url));
  } catch {
    issue('url', 'is not a valid URL, e.g. https://mcp.example.com/mcp');
    return;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    issue('url', `must be an http:// or https:// URL, not ${url.protocol}`);
  } else if (url.username || url.password) {
    issue('url', 'must not hold a user name or password: use bearer_token_env_var or OAuth');
  } else if (
    url.protocol === 'http:' &&
    !isLoopbackHost(url.hostname) &&
    (table.bearer_token_env_var !== undefined ||
      table.bearer_token !== undefined ||
      table.env_headers !== undefined)
  ) {
    issue('url', `plain http would send the credential to ${url.host} unencrypted; use https://`);
  }
}

export const mcpServerSchema = once(() =>
  z()
    .strictObject(mcpServerShape())
    .superRefine((table, ctx) => checkMcpTable(table, ctx)),
);

/**
 * One MCP server. `bearer_token` is never read from a file (the schema refuses it there): only
 * Concourse's `source.mcp`, whose values come from a credential manager, sets it.
 */
export type McpServerConfig = Z.infer<ReturnType<typeof mcpServerSchema>> & { bearer_token?: string };
export type StdioMcpConfig = McpServerConfig & { command: string };
export type RemoteMcpConfig = McpServerConfig & { url: string };

export function isRemoteMcp(server: McpServerConfig): server is RemoteMcpConfig {
  return server.url !== undefined;
}
