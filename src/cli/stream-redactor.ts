// Model text streamed to a terminal or an ndjson reader passes the redactor a word at a time.
import { redact } from '../core/redact.ts';

/**
 * Streams model text through the redactor a word at a time: a key never holds whitespace, so text
 * up to the last whitespace can be scrubbed and shown while the unfinished word waits. A key split
 * across deltas is therefore still seen whole.
 */
export class StreamRedactor {
  #pending = '';
  push(delta: string): string {
    this.#pending += delta;
    const cut = Math.max(
      this.#pending.lastIndexOf(' '),
      this.#pending.lastIndexOf('\n'),
      this.#pending.lastIndexOf('\t'),
    );
    if (cut < 0) return '';
    const ready = this.#pending.slice(0, cut + 1);
    this.#pending = this.#pending.slice(cut + 1);
    return redact(ready);
  }
  flush(): string {
    const rest = this.#pending;
    this.#pending = '';
    return redact(rest);
  }
}
