// Change counters for what public pages and reads show: one for the list of notes (their names
// and visibility), one per note for its files (names, visibility, text, live edits included).
// Whatever is rendered from a note is cached under both (read-cache.ts) and served again while they
// stand still, without a query. Store bumps them in every method that changes notes or files;
// live documents bump their note on every change of the text.
export class Versions {
  private list = 0;
  private readonly notes = new Map<number, number>();
  private readonly listeners: Array<() => void> = [];

  /** `listener` runs at every change (the search indexer schedules itself). */
  listen(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** Something about note `noteId` changed (its files, their text); null: the list of notes. */
  touch(noteId: number | null): void {
    for (const listener of this.listeners) listener();
    if (noteId === null) {
      this.list++;
      return;
    }
    this.notes.set(noteId, (this.notes.get(noteId) ?? 0) + 1);
  }

  /** A note itself changed (name, visibility, trash): the list and the note. */
  touchNote(noteId: number): void {
    this.list++;
    this.touch(noteId);
  }

  /** The version of what a page about `noteId` (null: only the list) shows. */
  of(noteId: number | null): string {
    return noteId === null ? `${this.list}` : `${this.list}.${this.notes.get(noteId) ?? 0}`;
  }
}
