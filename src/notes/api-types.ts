// The JSON shapes of notes, files and approvals as the HTTP API sends them (docs/notes-api.md). Imported by the
// server and, as types only, by the browser code in web/, so the two cannot drift apart.

export interface Note {
  id: number;
  name: string;
  public: boolean;
  model: string | null;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

export interface FileInfo {
  id: number;
  note_id: number;
  name: string;
  public: boolean;
  revision: number;
  size: number;
  updated_at: string;
  updated_by: string | null;
  deleted_at: string | null;
  content?: string;
}

/** A question of a chat run that an admin answers (src/notes/approvals.ts). */
export interface Approval {
  id: string;
  note_id: number;
  run_id: string;
  tool: string;
  arguments: string;
  question: string;
  reason: string;
  suggestion: { list: string; value: string } | null;
  /** Exactly what approving allows this call, as allow-list entries (docs/adr/0033-run-outcomes.md). */
  grants: { list: string; value: string }[];
  /** The answers it takes besides no: yes (once), session (the rest of this run), always (rune.toml). */
  scopes: ('once' | 'session' | 'always')[];
  status: 'pending' | 'yes' | 'no' | 'session' | 'always' | 'expired';
  /** What a refusing admin told the model to do instead. */
  instead: string | null;
  created_at: string;
  answered_by: string | null;
  answered_at: string | null;
}
