// The JSON shapes of notes and files as the HTTP API sends them (docs/notes-api.md). Imported by the
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
