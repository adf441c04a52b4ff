// The JSON shapes of notes, files and approvals as the HTTP API sends them (docs/notes-api.md),
// inferred from their zod declarations (api-objects.ts). Imported by the server and, as types
// only, by the browser code in web/, so the two cannot drift apart.
import type { z } from '../config/zod.ts';
import type * as objects from './api-objects.ts';

export type Note = z.infer<typeof objects.Note>;
export type FileInfo = z.infer<typeof objects.FileInfo>;
export type Revision = z.infer<typeof objects.Revision>;
export type ChatMessage = z.infer<typeof objects.ChatMessage>;
export type Approval = z.infer<typeof objects.Approval>;
export type User = z.infer<typeof objects.User>;
export type SearchHit = z.infer<typeof objects.SearchHit>;
