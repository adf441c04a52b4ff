// The few routes of the notes HTTP API (docs/notes-api.md) the resource uses, with the bearer token.
// Errors name the route and the server's {code, message}; the token never appears in them.
import { formatSeconds, startDeadline } from '../core/deadline.ts';
import { isRuneError, RuneError } from '../core/errors.ts';

export interface NoteFile {
  id: number;
  name: string;
  revision: number;
  deleted_at?: string | null;
}

export interface Revision {
  revision: number;
  file_id: number;
  author: string;
  created_at: string;
  size: number;
  content?: string;
}

export type FetchFn = typeof fetch;

/** How long one request (its answer included) may take when source.notes.timeout_secs is not set. */
export const DEFAULT_TIMEOUT_SECS = 30;

export class NotesClient {
  readonly #base: string;
  readonly #token: string;
  readonly #fetch: FetchFn;
  readonly #signal: AbortSignal | undefined;
  readonly #timeoutMs: number;
  readonly note: string;

  constructor(options: {
    url: string;
    token: string;
    note: string;
    timeout_secs?: number;
    fetch?: FetchFn;
    signal?: AbortSignal;
  }) {
    this.#base = options.url.replace(/\/+$/, '');
    this.#token = options.token;
    this.#fetch = options.fetch ?? fetch;
    this.#signal = options.signal;
    this.#timeoutMs = (options.timeout_secs ?? DEFAULT_TIMEOUT_SECS) * 1000;
    this.note = options.note;
  }

  /** The server's address as people open it: the base URL without a trailing slash. */
  get baseUrl(): string {
    return this.#base;
  }

  #notePath(suffix = ''): string {
    return `/api/notes/${encodeURIComponent(this.note)}${suffix}`;
  }

  /** Whether the note exists (for this token). */
  async noteExists(): Promise<boolean> {
    try {
      await this.#request('GET', this.#notePath());
      return true;
    } catch (error) {
      if (isRuneError(error) && error.code === 'NOT_FOUND') return false;
      throw error;
    }
  }

  async createNote(): Promise<void> {
    await this.#request('POST', '/api/notes', { name: this.note, public: false });
  }

  async listFiles(): Promise<NoteFile[]> {
    const body = (await this.#request('GET', this.#notePath('/files'))) as { files?: NoteFile[] };
    return body.files ?? [];
  }

  async createFile(name: string, content: string): Promise<NoteFile> {
    return (await this.#request('POST', this.#notePath('/files'), {
      name,
      content,
      public: false,
    })) as NoteFile;
  }

  /** Newest first, as the API lists them. */
  async revisions(file: string | number): Promise<Revision[]> {
    const path = this.#notePath(`/files/${encodeURIComponent(String(file))}/revisions`);
    const body = (await this.#request('GET', path)) as { revisions?: Revision[] };
    return body.revisions ?? [];
  }

  async revision(file: string | number, revision: number): Promise<Revision & { content: string }> {
    const path = this.#notePath(`/files/${encodeURIComponent(String(file))}/revisions/${revision}`);
    const body = (await this.#request('GET', path)) as Revision;
    if (typeof body.content !== 'string') {
      throw new RuneError('IO', `notes server: GET ${path} returned no content`);
    }
    return body as Revision & { content: string };
  }

  async #request(method: string, path: string, body?: unknown): Promise<unknown> {
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.#token}`,
      accept: 'application/json',
    };
    if (body !== undefined) headers['content-type'] = 'application/json';
    // One deadline for the answer and its body: a server that accepts and never answers (or stops
    // half-way) ends the step at it, whatever the garbage collector does (src/core/deadline.ts).
    const deadline = startDeadline(this.#timeoutMs, this.#signal);
    let response: Response;
    let text: string;
    try {
      response = await this.#fetch(`${this.#base}${path}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: deadline.signal,
      });
      text = await response.text();
    } catch (error) {
      if (this.#signal?.aborted) throw new RuneError('TERMINATED', `stopped during ${method} ${path}`);
      if (deadline.expired) {
        throw new RuneError(
          'IO',
          `notes server ${this.#base} did not answer ${method} ${path} within ${formatSeconds(deadline.ms)} (source.notes.timeout_secs)`,
          { cause: error },
        );
      }
      const cause = (error as { cause?: { message?: string } }).cause?.message;
      throw new RuneError(
        'IO',
        `notes server ${this.#base} unreachable (${method} ${path}): ${cause ?? (error as Error).message}`,
        { cause: error },
      );
    } finally {
      deadline.clear();
    }
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : {};
    } catch {
      parsed = undefined;
    }
    if (response.ok) {
      if (parsed === undefined) {
        throw new RuneError(
          'IO',
          `notes server: ${method} ${path} answered ${response.status} with non-JSON`,
        );
      }
      return parsed;
    }
    const info = (parsed ?? {}) as { code?: string; message?: string };
    const what =
      `notes server: ${method} ${path} → ${response.status} ${info.code ?? ''} ${info.message ?? ''}`
        .replace(/\s+/g, ' ')
        .trim();
    if (response.status === 404) throw new RuneError('NOT_FOUND', what);
    const hint =
      response.status === 401
        ? ' (check source.notes.token)'
        : response.status === 403
          ? ' (the token’s role may not do this)'
          : '';
    throw new RuneError('IO', `${what}${hint}`);
  }
}
