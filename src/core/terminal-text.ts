// Text from tools, models, MCP servers and remote errors made safe to show on a terminal: no
// escape sequence of theirs (OSC 52 clipboard writes, hyperlinks, cursor moves, screen clearing,
// colours, DCS/APC/PM/SOS strings), no C1 control, no carriage return or backspace that could
// overwrite what is on the line. Colours on rune's screen come only from rune's own renderer.

const ESC = 0x1b;
const BEL = 0x07;
const CAN = 0x18;
const SUB = 0x1a;
/** C1 string terminator (ST), also written ESC \. */
const ST8 = 0x9c;

/** What follows ESC (or is its C1 form) and opens a string ended by ST (or BEL): OSC, DCS, SOS, PM, APC. */
const STRING_OPENERS = new Set([0x5d, 0x50, 0x58, 0x5e, 0x5f]);
const C1_STRINGS = new Set([0x9d, 0x90, 0x98, 0x9e, 0x9f]);
const C1_CSI = 0x9b;

export interface TerminalTextOptions {
  /** Keep SGR sequences (`ESC [ … m`, colours): only for text rune itself painted. */
  keepColours?: boolean;
}

/** The end of a control string starting at `from` (just after its opener): past its ST, BEL, CAN or SUB. */
function stringEnd(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === BEL || c === ST8 || c === CAN || c === SUB) return i + 1;
    if (c === ESC && text.charCodeAt(i + 1) === 0x5c) return i + 2;
  }
  // Unterminated: a terminal would swallow the rest too.
  return text.length;
}

/** The end of a control sequence whose parameters start at `from`: past its final byte. */
function csiEnd(text: string, from: number): number {
  let i = from;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c >= 0x40 && c <= 0x7e) return i + 1;
    // Parameters 0x30–0x3F and intermediates 0x20–0x2F go on; anything else aborts the sequence.
    if (c < 0x20 || c > 0x3f) return i;
    i++;
  }
  return i;
}

/** A visible stand-in for a C0 control (U+2400 block): shown, never obeyed. */
function picture(code: number): string {
  return code === 0x7f ? '\u2421' : String.fromCharCode(0x2400 + code);
}

/**
 * `text` without any escape sequence or control character a terminal would act on. Newlines and
 * tabs stay; CR LF becomes LF and a lone CR a newline (so nothing overwrites a line); other C0
 * controls and DEL become visible symbols (␈, ␇, …); C1 controls and every ESC sequence go.
 * With `keepColours`, SGR sequences (colours, bold) are kept: for rune's own painted text only.
 */
export function terminalText(text: string, options: TerminalTextOptions = {}): string {
  // The common case, plain printable text, is returned as it is.
  if (!/[\x00-\x08\x0b-\x1f\x7f-\x9f]/.test(text)) return text;
  let out = '';
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === ESC) {
      const next = text.charCodeAt(i + 1);
      if (next === 0x5b) {
        const end = csiEnd(text, i + 2);
        if (options.keepColours && text[end - 1] === 'm' && /^[0-9;:]*$/.test(text.slice(i + 2, end - 1)))
          out += text.slice(i, end);
        i = end;
      } else if (STRING_OPENERS.has(next)) {
        i = stringEnd(text, i + 2);
      } else if (next >= 0x20 && next <= 0x7e) {
        // nF (intermediates then a final byte), Fp, Fe, Fs: two or more bytes, e.g. ESC c (reset).
        let j = i + 1;
        while (j < text.length && text.charCodeAt(j) >= 0x20 && text.charCodeAt(j) <= 0x2f) j++;
        i = j < text.length && text.charCodeAt(j) >= 0x30 && text.charCodeAt(j) <= 0x7e ? j + 1 : j;
      } else {
        i++;
      }
      continue;
    }
    if (c >= 0x80 && c <= 0x9f) {
      if (c === C1_CSI) i = csiEnd(text, i + 1);
      else if (C1_STRINGS.has(c)) i = stringEnd(text, i + 1);
      else i++;
      continue;
    }
    if (c === 0x0d) {
      out += '\n';
      i += text.charCodeAt(i + 1) === 0x0a ? 2 : 1;
      continue;
    }
    if ((c < 0x20 && c !== 0x0a && c !== 0x09) || c === 0x7f) {
      out += picture(c);
      i++;
      continue;
    }
    out += text[i];
    i++;
  }
  return out;
}

/** One line of it: newlines and tabs become spaces too, for a one-line summary. */
export function terminalLine(text: string): string {
  return terminalText(text).replace(/[\n\t]/g, ' ');
}
