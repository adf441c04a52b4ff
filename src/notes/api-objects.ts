// The JSON objects of the notes HTTP API, declared once in zod (docs/notes-api.md, "Objects"):
// the server serializes its answers from them (fast-json-stringify) and the browser's types are
// inferred from them (api-types.ts), so the two cannot drift apart.
import { z } from '../config/zod.ts';
import { ROLES } from './roles.ts';

const text = z.string();
const stamp = z.string();
const maybe = <T extends z.ZodType>(t: T) => t.nullable();

export const Note = z.object({
  id: z.number(),
  name: text,
  public: z.boolean(),
  model: maybe(text),
  created_at: stamp,
  updated_at: stamp,
  deleted_at: maybe(stamp),
});

/** A file; in lists without `content`. */
export const FileInfo = z.object({
  id: z.number(),
  note_id: z.number(),
  name: text,
  public: z.boolean(),
  revision: z.number(),
  size: z.number(),
  updated_at: stamp,
  updated_by: maybe(text),
  deleted_at: maybe(stamp),
  content: text.optional(),
});

/** A revision; in lists without `content`. */
export const Revision = z.object({
  revision: z.number(),
  file_id: z.number(),
  author: maybe(text),
  created_at: stamp,
  size: z.number(),
  content: text.optional(),
});

export const Role = z.enum(ROLES);
export const User = z.object({ name: text, role: Role, provider: text });

export const ChatMessage = z.object({
  id: z.number(),
  note_id: z.number(),
  role: z.enum(['user', 'assistant', 'tool', 'system']),
  author: maybe(text),
  content: text,
  run_id: maybe(text),
  created_at: stamp,
});

const Grant = z.object({ list: text, value: text });

/** A question of a chat run that an admin answers (src/notes/approvals.ts). */
export const Approval = z.object({
  id: text,
  note_id: z.number(),
  run_id: text,
  tool: text,
  arguments: text,
  question: text,
  reason: text,
  suggestion: maybe(Grant),
  /** Exactly what approving allows this call, as allow-list entries (docs/adr/0033-run-outcomes.md). */
  grants: z.array(Grant),
  /** The answers it takes besides no: yes (once), session (the rest of this run), always (rune.toml). */
  scopes: z.array(z.enum(['once', 'session', 'always'])),
  status: z.enum(['pending', 'yes', 'no', 'session', 'always', 'expired']),
  /** What a refusing admin told the model to do instead. */
  instead: maybe(text),
  created_at: stamp,
  answered_by: maybe(text),
  answered_at: maybe(stamp),
});

export const Token = z.object({
  id: z.number(),
  name: text,
  role: Role,
  created_by: maybe(text),
  created_at: stamp,
  expires_at: maybe(stamp),
  last_used_at: maybe(stamp),
  revoked_at: maybe(stamp),
});

export const SearchHit = z.object({
  kind: z.enum(['file', 'chat']),
  note_id: z.number(),
  note: text,
  file_id: z.number().optional(),
  file: text.optional(),
  message_id: z.number().optional(),
  snippet: z.array(z.object({ text, match: z.boolean() })),
});

export const Ok = z.object({ ok: z.boolean() });
