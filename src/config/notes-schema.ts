// The `[notes]` table of rune.toml, part of its one schema (schema.ts): the server's address and
// storage, its accounts and login providers, and `[notes.limits]`, what one request or client may
// cost. Their built-in values are in DEFAULTS (schema.ts).
import { once, positiveInt, z } from './schema-kit.ts';

const accountList = once(() =>
  z().array(
    z()
      .string()
      .regex(/^[^:\s]+:.+$/, 'expected "name:password" or "name:scrypt$…"'),
  ),
);

/** What one request or one client may cost the notes server; every key has a safe default. */
export const notesLimitsSchema = once(() =>
  z().strictObject({
    max_file_kb: positiveInt().optional().describe('Largest text of one file, in KiB (saves and live edits)'),
    max_document_kb: positiveInt()
      .optional()
      .describe('Largest collaborative state (Yjs) of one file, history included, in KiB'),
    max_update_kb: positiveInt().optional().describe('Largest single collaborative update, in KiB'),
    collab_kb_per_second: positiveInt()
      .optional()
      .describe('Collaborative update KiB one editor may send per second (bursts of two seconds)'),
    max_streams: positiveInt().optional().describe('Open event streams of signed-in people in all'),
    max_streams_per_client: positiveInt()
      .optional()
      .describe('Open event streams of one person (anonymous: one client address)'),
    max_streams_per_note: positiveInt()
      .optional()
      .describe('Open event streams of signed-in people watching one note'),
    max_anonymous_streams: positiveInt()
      .optional()
      .describe('Open event streams of anonymous readers in all (apart from signed-in people)'),
    max_anonymous_streams_per_note: positiveInt()
      .optional()
      .describe('Open event streams of anonymous readers watching one note (apart from signed-in people)'),
    max_connections_per_client: positiveInt()
      .optional()
      .describe('Open connections of one client address (trusted proxies are not counted)'),
    send_timeout_secs: positiveInt()
      .optional()
      .describe(
        'A response whose client takes under 64 KiB of it in this time is cut (a reader that stopped)',
      ),
    body_timeout_secs: positiveInt()
      .optional()
      .describe("A request's headers and body must arrive within this time"),
    max_body_memory_mb: positiveInt()
      .optional()
      .describe('Request bodies being read into memory (JSON, forms), in all, in MiB'),
    max_uploads_in_flight_mb: positiveInt()
      .optional()
      .describe('Upload bytes being received, in all, in MiB'),
    max_uploads_in_flight_mb_per_user: positiveInt()
      .optional()
      .describe('Upload bytes being received for one person, in MiB'),
    export_cpu_ms_per_minute: positiveInt()
      .optional()
      .describe('CPU time exports may take per client (person or address) and minute, in ms'),
    files_per_minute: positiveInt().optional().describe('Files one person may create per minute'),
    revisions_per_minute: positiveInt()
      .optional()
      .describe('Saves, restores and new files of one person per minute (live edits apart)'),
    upload_mb_per_minute: positiveInt().optional().describe('Upload MiB of one person per minute'),
    presence_interval_ms: positiveInt()
      .optional()
      .describe('Presence changes of a note are sent together at most this often'),
    search_budget_ms: positiveInt().optional().describe('Time one search may take'),
    diff_budget_ms: positiveInt().optional().describe('Time one revision diff may take'),
    expensive_per_minute: positiveInt()
      .optional()
      .describe('Searches, diffs and exports per client address and minute'),
    login_attempts_per_account: positiveInt()
      .optional()
      .describe('Password logins tried per account within the window'),
    login_attempts_per_address: positiveInt()
      .optional()
      .describe('Password logins tried per client address within the window'),
    login_window_minutes: positiveInt().optional().describe('Window of the login limits'),
  }),
);

export const notesSchema = once(() =>
  z().strictObject({
    bind: z().string().min(1).describe('Address to listen on'),
    port: z().number().int().min(0).max(65535).describe('TCP port'),
    public_url: z().url().optional().describe('External URL, used for OAuth redirects and Secure cookies'),
    trusted_proxies: z()
      .array(z().string())
      .optional()
      .describe('Proxy addresses whose X-Forwarded-For is trusted'),
    model: z()
      .string()
      .min(1)
      .optional()
      .describe('Model for note chats unless an admin overrides it per note'),
    max_upload_mb: positiveInt().optional().describe('Largest attachment accepted'),
    synchronous: z()
      .enum(['full', 'normal'])
      .optional()
      .describe(
        "SQLite's synchronous level: normal (default) keeps every acknowledged write through any crash of the process, and a power cut may lose the last second of them; full also fsyncs before each answer, so they survive a power cut, at one disk fsync of latency per write",
      ),
    revision_every_secs: positiveInt()
      .optional()
      .describe('During continuous live editing, save a revision at least this often (default 30)'),
    limits: notesLimitsSchema()
      .optional()
      .describe('Cost limits per request and per client (see docs/notes-api.md)'),
    workspace: z()
      .string()
      .min(1)
      .optional()
      .describe(
        'Folder the note chats work in, one sub-folder per note (default $XDG_DATA_HOME/rune/notes-workspace); must lie outside RUNE_HOME and the secrets floor',
      ),
    local: z()
      .strictObject({
        admins: accountList().optional(),
        users: accountList().optional(),
        guests: accountList().optional(),
      })
      .optional()
      .describe('Local accounts by role'),
    oauth: z()
      .array(
        z().strictObject({
          name: z().string().min(1),
          issuer: z().url(),
          client_id: z().string().min(1),
          client_secret: z().string().optional(),
          scopes: z().array(z().string()).optional(),
          admins: z().array(z().string()).optional(),
          users: z().array(z().string()).optional(),
          guests: z().array(z().string()).optional(),
        }),
      )
      .optional()
      .describe('OAuth2/OIDC providers'),
    github: z()
      .strictObject({
        client_id: z().string().min(1),
        client_secret: z().string().min(1),
        admins: z().array(z().string()).optional(),
        users: z().array(z().string()).optional(),
        guests: z().array(z().string()).optional(),
      })
      .optional()
      .describe('GitHub OAuth app mapped to roles'),
  }),
);
