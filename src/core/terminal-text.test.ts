import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { terminalLine, terminalText } from './terminal-text.ts';

const E = '\x1b';

describe('terminalText', () => {
  it.each([
    ['plain text', 'hello, world\n\tindented', 'hello, world\n\tindented'],
    ['unicode stays', 'naïve ✓ 中文 🎉', 'naïve ✓ 中文 🎉'],
    ['OSC 52 clipboard write (BEL)', `a${E}]52;c;cm0gLXJmIH4K\x07b`, 'ab'],
    ['OSC 52 clipboard write (ST)', `a${E}]52;c;cm0gLXJmIH4K${E}\\b`, 'ab'],
    ['OSC 8 hyperlink', `${E}]8;;https://evil.example/${E}\\click${E}]8;;${E}\\`, 'click'],
    ['OSC 0 window title', `${E}]0;pwned\x07ok`, 'ok'],
    ['unterminated OSC swallows the rest', `ok${E}]52;c;AAAA`, 'ok'],
    ['clear screen and home', `${E}[2J${E}[3J${E}[Hfake prompt`, 'fake prompt'],
    ['cursor up and erase line', `real${E}[1A${E}[2K${E}[999D`, 'real'],
    ['SGR colours are removed', `${E}[31mred${E}[0m`, 'red'],
    ['private mode (alternate screen, hide cursor)', `${E}[?1049h${E}[?25lx`, 'x'],
    ['DCS string', `${E}P1$r0m${E}\\after`, 'after'],
    ['APC string', `${E}_Gf=100;AAAA${E}\\after`, 'after'],
    ['PM and SOS strings', `${E}^private${E}\\${E}Xsos${E}\\z`, 'z'],
    ['ESC c full reset', `${E}cafter`, 'after'],
    ['ESC 7 / ESC 8 save and restore cursor', `${E}7x${E}8y`, 'xy'],
    ['nF sequence (ESC ( B)', `${E}(Bx`, 'x'],
    ['lone ESC at the end', `x${E}`, 'x'],
    ['ESC before a newline', `x${E}\ny`, 'x\ny'],
    ['C1 CSI (U+009B)', 'a\u009b2Jb', 'ab'],
    ['C1 OSC (U+009D) ended by C1 ST', 'a\u009d52;c;AAAA\u009cb', 'ab'],
    ['other C1 controls', 'a\u0085b\u008dc', 'abc'],
    ['CR LF becomes LF', 'one\r\ntwo', 'one\ntwo'],
    ['a lone CR cannot overwrite the line', 'safe text\rEVIL', 'safe text\nEVIL'],
    ['backspaces are shown', 'rm -rf /\b\b\b\b\b\b\b\bls', 'rm -rf /␈␈␈␈␈␈␈␈ls'],
    ['bell and other C0', 'a\x07b\x00c\x0bd\x0ce', 'a␇b␀c␋d␌e'],
    ['DEL', 'a\x7fb', 'a␡b'],
    ['CSI aborted by a control byte', `${E}[12\nx`, '\nx'],
  ])('%s', (_name, input, expected) => {
    expect(terminalText(input)).toBe(expected);
  });

  it('keeps SGR colours only when asked, never other sequences', () => {
    expect(terminalText(`${E}[1;32mok${E}[39m${E}[2J`, { keepColours: true })).toBe(`${E}[1;32mok${E}[39m`);
    expect(terminalText(`${E}[38:5:196mx${E}[0m`, { keepColours: true })).toBe(`${E}[38:5:196mx${E}[0m`);
    expect(terminalText(`${E}[?25mx`, { keepColours: true })).toBe('x');
  });

  it('terminalLine flattens to one line', () => {
    expect(terminalLine('a\nb\tc\rd')).toBe('a b c d');
  });

  it('never lets ESC, CR, BS or a C1 control through, whatever the input', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.string(),
            fc.constantFrom(E, '\r', '\b', '\x07', '\u009b', '\u009d', '\u009c', '[', ']', '\\', '52;c;'),
          ),
        ),
        (parts) => {
          const out = terminalText(parts.join(''));
          expect(out).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
        },
      ),
      { numRuns: 2000 },
    );
  });
});
