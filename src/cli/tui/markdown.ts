// Markdown for the terminal: marked's lexer (GFM) parses, this renders its tokens as text with
// rune's colours — headings, emphasis, lists, task items, quotes, tables, links, rules and fenced
// code with syntax highlighting. Without colour it prints readable plain text (no `**` or `|---|`).
import { lexer, type Token, type Tokens } from 'marked';
import { paint, type Style } from '../format.ts';
import { textWidth } from './width.ts';

export interface MarkdownOptions {
  style: Style;
  /** Terminal columns, for tables and rules. */
  width: number;
  /** Highlights code; undefined (unknown language, highlighter not loaded) leaves it plain. */
  highlight?: (code: string, language: string) => string[] | undefined;
}

/** The rendered lines of `markdown`. */
export function renderMarkdown(markdown: string, options: MarkdownOptions): string[] {
  return renderBlocks(lexer(markdown), options);
}

/** Blocks one after another, a blank line between them (none with `gap` false: a tight list item). */
export function renderBlocks(tokens: readonly Token[], options: MarkdownOptions, gap = true): string[] {
  const lines: string[] = [];
  let first = true;
  for (const token of tokens) {
    if (token.type === 'space' || token.type === 'def') continue;
    if (!first && gap) lines.push('');
    lines.push(...renderBlock(token, options));
    first = false;
  }
  return lines;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", nbsp: ' ' };
/** marked escapes &, <, >, " and ' in text tokens as it would for HTML; the terminal shows them as they are. */
const fromHtml = (text: string): string =>
  text.replace(/&(#?\w+);/g, (m, name: string) => ENTITIES[name] ?? m);

export function renderBlock(token: Token, options: MarkdownOptions): string[] {
  const { style } = options;
  switch (token.type) {
    case 'space':
    case 'def':
      return [];
    case 'heading': {
      const t = token as Tokens.Heading;
      const text = inline(t.tokens, options);
      if (!style.color)
        return t.depth <= 2
          ? [text, (t.depth === 1 ? '═' : '─').repeat(Math.min(textWidth(text), options.width))]
          : [text];
      return [paint(style, 'bold', paint(style, t.depth <= 2 ? 'magenta' : 'cyan', text))];
    }
    case 'paragraph':
      return inline((token as Tokens.Paragraph).tokens, options).split('\n');
    case 'text': {
      const t = token as Tokens.Text;
      return (t.tokens ? inline(t.tokens, options) : fromHtml(t.text)).split('\n');
    }
    case 'code':
      return codeLines(token as Tokens.Code, options);
    case 'blockquote':
      return renderBlocks((token as Tokens.Blockquote).tokens, options).map(
        (line) => `${paint(style, 'dim', '│')} ${line}`,
      );
    case 'list':
      return listLines(token as Tokens.List, options);
    case 'table':
      return tableLines(token as Tokens.Table, options);
    case 'hr':
      return [paint(style, 'dim', '─'.repeat(Math.max(3, Math.min(options.width, 80))))];
    case 'html':
      return fromHtml((token as Tokens.HTML).text)
        .replace(/\n+$/, '')
        .split('\n');
    default:
      return 'raw' in token ? token.raw.replace(/\n$/, '').split('\n') : [];
  }
}

export function codeLines(token: Pick<Tokens.Code, 'text' | 'lang'>, options: MarkdownOptions): string[] {
  const code = token.text.replace(/\n$/, '');
  const highlighted = options.style.color && token.lang ? options.highlight?.(code, token.lang) : undefined;
  const lines = highlighted ?? code.split('\n');
  const gutter = options.style.color ? '  ' : '    ';
  return lines.map((line) => `${gutter}${line}`);
}

function listLines(list: Tokens.List, options: MarkdownOptions): string[] {
  const lines: string[] = [];
  const start = typeof list.start === 'number' ? list.start : 1;
  const last = start + list.items.length - 1;
  list.items.forEach((item, index) => {
    const bullet = list.ordered ? `${String(start + index).padStart(String(last).length)}.` : '•';
    const task = item.task ? `${item.checked ? '[x]' : '[ ]'} ` : '';
    const body = renderBlocks(
      item.tokens.filter((t) => t.type !== 'checkbox'),
      options,
      list.loose,
    );
    const marker = paint(options.style, 'cyan', bullet);
    const indent = ' '.repeat(textWidth(bullet) + 1);
    body.forEach((line, i) => {
      lines.push(i === 0 ? `${marker} ${task}${line}` : line === '' ? '' : `${indent}${line}`);
    });
    if (list.loose && index < list.items.length - 1) lines.push('');
  });
  return lines;
}

function tableLines(table: Tokens.Table, options: MarkdownOptions): string[] {
  const { style } = options;
  const header = table.header.map((cell) => inline(cell.tokens, options));
  const rows = table.rows.map((row) => row.map((cell) => inline(cell.tokens, options)));
  const columns = header.length;
  const widths = header.map((cell, i) =>
    Math.max(textWidth(cell), ...rows.map((row) => textWidth(row[i] ?? ''))),
  );
  // Too wide for the terminal: the widest columns give up room first, never below 8.
  const room = options.width - (3 * columns + 1);
  while (widths.reduce((a, b) => a + b, 0) > room) {
    const widest = widths.indexOf(Math.max(...widths));
    if (widths[widest]! <= 8) break;
    widths[widest]! -= 1;
  }
  const fitCell = (text: string, width: number, align: string | null): string => {
    const cut = cutTo(text, width);
    const pad = width - textWidth(cut);
    if (align === 'right') return ' '.repeat(pad) + cut;
    if (align === 'center') return ' '.repeat(Math.floor(pad / 2)) + cut + ' '.repeat(Math.ceil(pad / 2));
    return cut + ' '.repeat(pad);
  };
  const bar = (left: string, mid: string, right: string): string =>
    paint(style, 'dim', `${left}${widths.map((w) => '─'.repeat(w + 2)).join(mid)}${right}`);
  const line = (cells: string[], bold: boolean): string => {
    const sep = paint(style, 'dim', '│');
    const body = widths.map((w, i) => {
      const text = fitCell(cells[i] ?? '', w, table.align[i] ?? null);
      return ` ${bold ? paint(style, 'bold', text) : text} `;
    });
    return `${sep}${body.join(sep)}${sep}`;
  };
  return [
    bar('┌', '┬', '┐'),
    line(header, true),
    bar('├', '┼', '┤'),
    ...rows.map((row) => line(row, false)),
    bar('└', '┴', '┘'),
  ];
}

/** `text` cut to `width` columns with an ellipsis, colour sequences kept whole and reset at the cut. */
function cutTo(text: string, width: number): string {
  if (textWidth(text) <= width) return text;
  let out = '';
  let used = 0;
  for (const part of text.split(/(\x1b\[[0-9;]*m)/)) {
    if (part.startsWith('\x1b[')) {
      out += part;
      continue;
    }
    for (const ch of part) {
      const w = textWidth(ch);
      if (used + w > width - 1) return `${out}…${text.includes('\x1b') ? '\x1b[0m' : ''}`;
      out += ch;
      used += w;
    }
  }
  return out;
}

/** Inline tokens as one string (newlines where the text breaks lines). */
export function inline(tokens: readonly Token[] | undefined, options: MarkdownOptions): string {
  const { style } = options;
  let out = '';
  for (const token of tokens ?? []) {
    switch (token.type) {
      case 'strong':
        out += paint(style, 'bold', inline((token as Tokens.Strong).tokens, options));
        break;
      case 'em':
        out += paint(style, 'italic', inline((token as Tokens.Em).tokens, options));
        break;
      case 'del':
        out += paint(style, 'strike', inline((token as Tokens.Del).tokens, options));
        break;
      case 'codespan':
        out += paint(style, 'yellow', fromHtml((token as Tokens.Codespan).text));
        break;
      case 'link': {
        const t = token as Tokens.Link;
        const text = inline(t.tokens, options);
        const plain = text.replace(/\x1b\[[0-9;]*m/g, '');
        out +=
          plain === t.href || `mailto:${plain}` === t.href
            ? paint(style, 'underline', paint(style, 'blue', text))
            : `${paint(style, 'blue', text)} ${paint(style, 'dim', `(${t.href})`)}`;
        break;
      }
      case 'image': {
        const t = token as Tokens.Image;
        out += paint(style, 'dim', `[image: ${t.text || t.href}] (${t.href})`);
        break;
      }
      case 'br':
        out += '\n';
        break;
      case 'text': {
        const t = token as Tokens.Text;
        out += t.tokens ? inline(t.tokens, options) : fromHtml(t.text);
        break;
      }
      case 'escape':
        out += fromHtml((token as Tokens.Escape).text);
        break;
      case 'html':
        out += fromHtml((token as Tokens.HTML).text);
        break;
      default:
        out += 'raw' in token ? token.raw : '';
    }
  }
  return out;
}
