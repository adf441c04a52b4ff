import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { highlightCode, htmlToAnsi } from './highlight.ts';
import { renderMarkdown } from './markdown.ts';
import { MarkdownStream } from './markdown-stream.ts';

const plain = { style: { color: false }, width: 60 };
const colour = { style: { color: true }, width: 60, highlight: highlightCode };
const strip = (text: string): string => text.replace(/\x1b\[[0-9;]*m/g, '');

const SAMPLE = `# Fixing \`add\`

The bug is in **calc.py**: it *subtracts* ~~adds~~. See [the docs](https://docs.python.org).

1. Open the file
2. Change \`a - b\`
   - nested
- [x] done

> quoted
> text

| name | value |
|------|------:|
| a    | 1     |

\`\`\`python
def add(a, b):
    return a + b
\`\`\`

---
Tom &amp; Jerry <b>kept</b>`;

describe('renderMarkdown', () => {
  it('renders every construct without Markdown syntax, in plain text', () => {
    const out = renderMarkdown(SAMPLE, plain).join('\n');
    expect(out).toBe(
      [
        'Fixing add',
        '══════════',
        '',
        'The bug is in calc.py: it subtracts adds. See the docs (https://docs.python.org).',
        '',
        '1. Open the file',
        '2. Change a - b',
        '   • nested',
        '',
        '• [x] done',
        '',
        '│ quoted',
        '│ text',
        '',
        '┌──────┬───────┐',
        '│ name │ value │',
        '├──────┼───────┤',
        '│ a    │     1 │',
        '└──────┴───────┘',
        '',
        '    def add(a, b):',
        '        return a + b',
        '',
        '────────────────────────────────────────────────────────────',
        '',
        'Tom & Jerry <b>kept</b>',
      ].join('\n'),
    );
    expect(out).not.toMatch(/\*\*|```|\|---|^#/m);
  });

  it('colours with SGR only, and the text under the colours is the plain rendering but for markers', () => {
    const out = renderMarkdown(SAMPLE, colour).join('\n');
    expect(out).toMatch(/\x1b\[1mcalc\.py\x1b\[22m/);
    expect(out).toMatch(/\x1b\[35mdef\x1b\[0m/);
    expect(strip(out)).toContain('The bug is in calc.py: it subtracts adds.');
    expect(out.replace(/\x1b\[[0-9;]*m/g, '')).not.toMatch(/\x1b/);
  });

  it('fits a table wider than the terminal by narrowing its widest column', () => {
    const long = 'x'.repeat(100);
    const out = renderMarkdown(`| a | b |\n|---|---|\n| 1 | ${long} |`, { ...plain, width: 40 });
    for (const line of out) expect([...line].length).toBeLessThanOrEqual(40);
    expect(out.join('\n')).toContain('…');
  });
});

describe('htmlToAnsi', () => {
  it('turns nested spans into colours that restore the outer one, and decodes entities', () => {
    expect(
      htmlToAnsi('<span class="hljs-string">&quot;a<span class="hljs-subst">#{b}</span>c&quot;</span>x'),
    ).toBe('\x1b[32m"a\x1b[39m#{b}\x1b[0m\x1b[32mc"\x1b[0mx');
  });
});

describe('MarkdownStream', () => {
  it('prints what the whole text renders, however the text is cut into pieces and whenever they come', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 60 }),
        fc.array(fc.integer({ min: 0, max: 60 })),
        (cuts, gaps) => {
          let clock = 0;
          let gap = 0;
          const stream = new MarkdownStream(
            plain,
            () => (clock += gaps[gap++ % Math.max(1, gaps.length)] ?? 0),
          );
          const out: string[] = [];
          let at = 0;
          for (const size of cuts) {
            out.push(...stream.push(SAMPLE.slice(at, at + size)));
            at += size;
          }
          out.push(...stream.push(SAMPLE.slice(at)), ...stream.finish());
          expect(out).toEqual(renderMarkdown(SAMPLE, plain));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('prints a block once the next begins, and the lines of an open code block one by one', () => {
    // Each piece comes well after the last (a slow stream): each one is lexed.
    let clock = 0;
    const stream = new MarkdownStream(plain, () => (clock += 100));
    expect(stream.push('First **paragraph**\n')).toEqual([]);
    expect(stream.preview()).toEqual(['First paragraph']);
    expect(stream.push('\n```sh\nls\n')).toEqual(['First paragraph', '', '    ls']);
    expect(stream.push('pwd\n')).toEqual(['    pwd']);
    expect(stream.push('```\nafter')).toEqual([]);
    expect(stream.finish()).toEqual(['', 'after']);
  });

  it('renders a 2,000-line list streamed a few characters at a time (it stays one open block)', () => {
    const lines = Array.from({ length: 2000 }, (_, i) => `- item ${i} with **bold** text`);
    const text = lines.join('\n');
    const stream = new MarkdownStream(plain);
    const out: string[] = [];
    for (let i = 0; i < text.length; i += 7) out.push(...stream.push(text.slice(i, i + 7)));
    out.push(...stream.finish());
    expect(out).toHaveLength(2000);
    expect(out[1999]).toBe('• item 1999 with bold text');
  });
});
