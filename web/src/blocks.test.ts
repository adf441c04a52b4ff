// The live preview renders block by block; this checks, on hand-picked and on generated documents,
// that doing so gives exactly the HTML of rendering the whole document at once.
import { describe, expect, it } from 'vitest';
import { type Block, mayUseReferences, resplit, splitBlocks } from './blocks.ts';
import { blockHtml, type Links, lexBlock, marked } from './markdown.ts';

function byBlocks(source: string): string {
  const blocks = splitBlocks(source);
  const links: Links = {};
  for (const block of blocks) {
    for (const [label, link] of Object.entries(lexBlock(block.text).links)) links[label] ??= link;
  }
  return squeeze(blocks.map((block) => blockHtml(lexBlock(block.text, links).tokens)).join('\n'));
}

/**
 * Newlines that show nowhere may differ: between blocks (raw HTML keeps its trailing blank lines)
 * and at the end of a fence left open at the end of the document (it keeps them too).
 */
const squeeze = (html: string) =>
  html
    .replace(/\n+/g, '\n')
    .replace(/\n<\/code>/g, '</code>')
    .trim();
const whole = (source: string) => squeeze(marked.parse(source, { async: false }));
const lines = (blocks: Block[]) => blocks.map((block) => [block.line, block.lines]);

const SNIPPETS = [
  '# Heading',
  'Setext heading\n===',
  'A paragraph with *emphasis*, `code` and a [link](https://example.com).',
  'two lines\nof one paragraph',
  '- one\n- two\n  - nested',
  '- loose\n\n- list\n\n  continued paragraph',
  '1. first\n2. second\n\n3. third',
  '10) ten\n\n    indented code in the item',
  '```js\nconst a = 1;\n\n\nconst b = 2;\n```',
  '~~~~\n~~~\nstill code\n\n~~~~',
  '````md\n```\ninner\n```\n\n````',
  '    indented code\n\n    after a blank',
  '> quoted\n> more\n\n> second quote',
  '| a | b |\n| - | - |\n| 1 | 2 |',
  '<pre>\nraw\n\nstill raw\n</pre>',
  '<!-- a comment\n\nspanning blank lines -->',
  '<div>\nhtml block\n</div>',
  '$$\nx^2\n\n+ y\n$$',
  '$$ e = mc^2 $$',
  'inline $a+b$ math',
  'See [the docs][docs] and [docs].',
  '[docs]: https://example.com/docs "Docs"',
  '---',
  '* [ ] task\n* [x] done',
  '```\nunclosed fence\n\nruns to the end',
  '- item\n  ```\n  code in item\n\n  more code\n  ```',
  'text\n```\nfence right after text\n\nwith a blank\n```',
  '<script>\nalert(1)\n\n</script>',
  '<span>\n```\nnot a fence inside a lone-tag HTML block',
  '<span>inline html</span> starts a paragraph',
  '<details>\n<summary>more</summary>\n\ninside\n\n</details>',
  '<?php echo 1;\n\n?>',
  '  ```\n  indented fence\n\n  ```',
  '    ```\n    not a fence (indented code)',
  '> ```\n> fenced in a quote\n\nafter',
  'para\n$$\nmath interrupting\n\n$$',
  'Term with trailing spaces  \nhard break',
  '> quote\n$$\nlazy math?\n\n$$',
  '| a |\n| - |\n| 1 |\n$$\nrow or math\n\n$$',
  '| a |\n| - |\n```\nfence after a table\n\n```',
  '<div>\n$$\nmath in html\n\n$$',
  '- item\nlazy\n```\nfence after a lazy line\n\n```',
  '## Example\n```bash\necho $$\n\necho done\n```',
  'text\n---',
  '<!-- one line -->',
  '\ttab indented',
  '[multi]:\n  https://example.com/multi\n  "Title"',
  'see [multi]',
  'windows\r\nline ends\r\n\r\n```\r\ncode\r\n\r\n```',
  '<custom-element>\n\ntext',
];

describe('splitBlocks', () => {
  it.each([
    ['', []],
    ['a', [[0, 1]]],
    [
      'a\nb\n\n\nc',
      [
        [0, 2],
        [4, 1],
      ],
    ],
    [
      '\n\n# h\n\ntext\n',
      [
        [2, 1],
        [4, 1],
      ],
    ],
    // A list around blank lines is one (loose) list; an indented line continues the item.
    [
      '- a\n\n- b\n\n  more\n\nafter',
      [
        [0, 5],
        [6, 1],
      ],
    ],
    // Blank lines inside fences, display math and raw HTML do not end the block.
    [
      '```\na\n\nb\n```\n\nc',
      [
        [0, 5],
        [6, 1],
      ],
    ],
    [
      '$$\na\n\nb\n$$\nc\n\nd',
      [
        [0, 6],
        [7, 1],
      ],
    ],
    [
      '<pre>\n\n</pre>\n\nx',
      [
        [0, 3],
        [4, 1],
      ],
    ],
  ])('%j', (source, expected) => {
    expect(lines(splitBlocks(source))).toEqual(expected);
  });

  it('keeps the text of each block as it is in the source', () => {
    const source = 'one\n\n```\ncode\n\n```\n\nlast';
    expect(splitBlocks(source).map((block) => block.text)).toEqual(['one\n', '```\ncode\n\n```\n', 'last']);
  });

  it.each(SNIPPETS.map((snippet) => [snippet]))('renders %j the same alone and whole', (snippet) => {
    const doc = `intro paragraph\n\n${snippet}\n\nclosing paragraph\n`;
    expect(byBlocks(doc)).toBe(whole(doc));
  });

  it('renders generated documents the same by blocks as whole', () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let round = 0; round < 600; round++) {
      const parts: string[] = [];
      const count = 2 + Math.floor(random() * 8);
      for (let i = 0; i < count; i++) {
        parts.push(SNIPPETS[Math.floor(random() * SNIPPETS.length)]!);
        parts.push(random() < 0.7 ? '\n\n' : random() < 0.5 ? '\n' : '\n\n\n');
      }
      const doc = parts.join('');
      expect(byBlocks(doc), doc).toBe(whole(doc));
    }
  });
});

describe('resplit', () => {
  it('after any edit, gives exactly the blocks of splitting the new text from scratch', () => {
    let seed = 3;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]!;
    const EDITS = [
      'x',
      '\n',
      '\n\n',
      '```',
      '```\n',
      '$$',
      '- ',
      '    ',
      '<pre>',
      '</pre>',
      '> ',
      '# ',
      '',
      '|',
    ];
    for (let round = 0; round < 1500; round++) {
      const parts: string[] = [];
      for (let i = 0; i < 3 + Math.floor(random() * 8); i++)
        parts.push(pick(SNIPPETS), pick(['\n\n', '\n', '\n\n\n']));
      let text = parts.join('');
      let blocks = splitBlocks(text);
      for (let step = 0; step < 5; step++) {
        const at = Math.floor(random() * (text.length + 1));
        const cut = random() < 0.3 ? Math.floor(random() * 12) : 0;
        const next = text.slice(0, at) + pick(EDITS) + text.slice(Math.min(text.length, at + cut));
        const expected = splitBlocks(next);
        blocks = resplit(text, blocks, next);
        expect(blocks, JSON.stringify({ text, next })).toEqual(expected);
        text = next;
      }
    }
  });
});

describe('mayUseReferences', () => {
  it.each([
    ['[a][b]', true],
    ['[a][]', true],
    ['[a]', true],
    ['[a]: https://x', true],
    ['[a](https://x)', false],
    ['no brackets', false],
  ])('%j → %s', (text, expected) => {
    expect(mayUseReferences(text)).toBe(expected);
  });
});
