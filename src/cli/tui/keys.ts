// Terminal input as keys: the bytes a terminal sends for typed text, control keys, escape
// sequences (arrows, Shift+Tab, Shift+Enter in the CSI u and modifyOtherKeys forms) and bracketed
// pastes. Pure: the session feeds it what stdin delivered and acts on the keys.

export type KeyName =
  | 'enter'
  | 'newline'
  | 'tab'
  | 'shift-tab'
  | 'backspace'
  | 'delete'
  | 'escape'
  | 'up'
  | 'down'
  | 'left'
  | 'right'
  | 'home'
  | 'end'
  | 'page-up'
  | 'page-down'
  | 'word-left'
  | 'word-right'
  | 'delete-word'
  | `ctrl-${string}`;

export type Key =
  | { type: 'text'; text: string }
  | { type: 'paste'; text: string }
  | { type: 'key'; name: KeyName };

const PASTE_START = '\x1b[200~';
const PASTE_END = '\x1b[201~';

/** CSI sequences by their parameters and final byte. */
const CSI_KEYS: Record<string, KeyName> = {
  A: 'up',
  B: 'down',
  C: 'right',
  D: 'left',
  H: 'home',
  F: 'end',
  Z: 'shift-tab',
  '1~': 'home',
  '7~': 'home',
  '4~': 'end',
  '8~': 'end',
  '3~': 'delete',
  '5~': 'page-up',
  '6~': 'page-down',
  // Ctrl or Alt with an arrow: a word to the side.
  '1;5C': 'word-right',
  '1;5D': 'word-left',
  '1;3C': 'word-right',
  '1;3D': 'word-left',
  '1;2A': 'up',
  '1;2B': 'down',
  // Shift+Enter, Alt+Enter, Ctrl+Enter: kitty's CSI u and xterm's modifyOtherKeys forms.
  '13;2u': 'newline',
  '13;3u': 'newline',
  '13;5u': 'newline',
  '27;2;13~': 'newline',
  '27;3;13~': 'newline',
  '27;5;13~': 'newline',
};

const SS3_KEYS: Record<string, KeyName> = { A: 'up', B: 'down', C: 'right', D: 'left', H: 'home', F: 'end' };

const CONTROL_KEYS: Record<number, KeyName> = {
  13: 'enter',
  10: 'newline',
  9: 'tab',
  127: 'backspace',
  8: 'backspace',
  23: 'delete-word',
};

/** The end of a CSI sequence starting at `at` (ESC [), or -1 when it is not complete yet. */
function csiEnd(data: string, at: number): number {
  for (let i = at + 2; i < data.length; i++) {
    const c = data.charCodeAt(i);
    if (c >= 0x40 && c <= 0x7e) return i + 1;
    if (c < 0x20 || c > 0x3f) return i;
  }
  return -1;
}

/**
 * Decodes terminal input chunk by chunk. A sequence cut between two chunks waits for the next;
 * a lone ESC at the end of a chunk is the Escape key once `flush()` is called (after a short pause).
 */
export class KeyDecoder {
  #pending = '';
  #paste: string | undefined;

  /** Whether an ESC (or a paste) waits for more input. */
  get waiting(): boolean {
    return this.#pending !== '' || this.#paste !== undefined;
  }

  feed(chunk: string): Key[] {
    const keys: Key[] = [];
    const data = this.#pending + chunk;
    this.#pending = '';
    let text = '';
    const pushText = (): void => {
      if (text) keys.push({ type: 'text', text });
      text = '';
    };
    let i = 0;
    while (i < data.length) {
      if (this.#paste !== undefined) {
        const end = data.indexOf(PASTE_END, i);
        if (end === -1) {
          // Keep a possible start of the end marker for the next chunk.
          const keep = Math.min(PASTE_END.length - 1, data.length - i);
          this.#paste += data.slice(i, data.length - keep);
          this.#pending = data.slice(data.length - keep);
          return keys;
        }
        this.#paste += data.slice(i, end);
        keys.push({ type: 'paste', text: this.#paste.replace(/\r\n?/g, '\n') });
        this.#paste = undefined;
        i = end + PASTE_END.length;
        continue;
      }
      const c = data.charCodeAt(i);
      if (c === 0x1b) {
        pushText();
        const consumed = this.#escape(data, i, keys);
        if (consumed === -1) {
          this.#pending = data.slice(i);
          return keys;
        }
        i = consumed;
        continue;
      }
      if (c < 0x20 || c === 0x7f) {
        pushText();
        const name = CONTROL_KEYS[c] ?? (`ctrl-${String.fromCharCode(c + 0x60)}` as KeyName);
        keys.push({ type: 'key', name });
        i++;
        continue;
      }
      text += data[i];
      i++;
    }
    pushText();
    return keys;
  }

  /** After a pause: a lone ESC still waiting is the Escape key. */
  flush(): Key[] {
    if (this.#pending === '\x1b') {
      this.#pending = '';
      return [{ type: 'key', name: 'escape' }];
    }
    return [];
  }

  /** Decodes the sequence at `at` (an ESC) into `keys`; the index after it, or -1 to wait for more. */
  #escape(data: string, at: number, keys: Key[]): number {
    if (at + 1 >= data.length) return -1;
    const next = data[at + 1]!;
    if (next === '[') {
      if (data.startsWith(PASTE_START, at)) {
        this.#paste = '';
        return at + PASTE_START.length;
      }
      if (PASTE_START.startsWith(data.slice(at))) return -1;
      const end = csiEnd(data, at);
      if (end === -1) return -1;
      const name = CSI_KEYS[data.slice(at + 2, end)];
      if (name) keys.push({ type: 'key', name });
      return end;
    }
    if (next === 'O') {
      if (at + 2 >= data.length) return -1;
      const name = SS3_KEYS[data[at + 2]!];
      if (name) keys.push({ type: 'key', name });
      return at + 3;
    }
    // Alt (Meta) with a key: ESC then the key.
    if (next === '\r' || next === '\n') keys.push({ type: 'key', name: 'newline' });
    else if (next === '\x7f' || next === '\x08') keys.push({ type: 'key', name: 'delete-word' });
    else if (next === 'b') keys.push({ type: 'key', name: 'word-left' });
    else if (next === 'f') keys.push({ type: 'key', name: 'word-right' });
    else if (next === '\x1b') {
      keys.push({ type: 'key', name: 'escape' });
      return at + 1;
    }
    return at + 2;
  }
}
