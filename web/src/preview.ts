// The live preview of the file being edited. The text is split into top-level blocks (blocks.ts);
// a block whose text did not change keeps its DOM node, so an edit re-renders one block, images
// do not reload, diagrams are not redrawn and nothing flickers, even in a 10,000-line file. New
// blocks are rendered in slices of a few milliseconds, so opening a long file never blocks typing.
// Each block knows its source lines, which is what keeps the preview's scroll in step.
import { type Block, mayUseReferences, resplit, splitBlocks } from './blocks.ts';
import { blockHtml, type Links, lexBlock } from './markdown.ts';
import { Pages } from './preview-pages.ts';
import { enhance, sanitize } from './render.ts';

interface Shown extends Block {
  element: HTMLElement;
  /** The link definitions this block makes (from lexing it alone). */
  defs: Links | null;
  /** The document's link definitions it was rendered with; null: not rendered yet. */
  renderedWith: string | null;
}

/** Main-thread time one slice of rendering may take before it yields to input. */
const SLICE_MS = 8;

const nextTask = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

const hasDefinition = (text: string) => text.includes(']:');

export class LivePreview {
  private source = '';
  private shown: Shown[] = [];
  private links: Links = {};
  private linksKey = '{}';
  private version = 0;
  /** The last update rendered everything it had to (none was cut short by a newer one). */
  private complete = false;
  private readonly pages: Pages;

  constructor(readonly element: HTMLElement) {
    element.classList.add('markdown');
    this.pages = new Pages(element);
  }

  /** Shows `source`: unchanged blocks stay as they are. Resolves when everything is drawn. */
  async update(source: string): Promise<void> {
    const version = ++this.version;
    const previous = this.shown;
    // Only the blocks around the edit are split again; the others come back as they were.
    const blocks = (
      previous.length === 0 ? splitBlocks(source) : resplit(this.source, previous, source)
    ) as Array<Block & Partial<Shown>>;
    this.source = source;
    const carried = new Set<HTMLElement>();
    for (const block of blocks) if (block.element) carried.add(block.element);
    // Blocks of the edited span whose text is back unchanged keep their element (and rendering).
    const spare = new Map<string, Shown[]>();
    const dropped: Shown[] = [];
    for (const block of previous) {
      if (carried.has(block.element)) continue;
      dropped.push(block);
      const list = spare.get(block.text);
      if (list) list.push(block);
      else spare.set(block.text, [block]);
    }
    const fresh: Shown[] = [];
    const next: Shown[] = blocks.map((block) => {
      if (block.element) return block as Shown;
      const old = spare.get(block.text)?.shift();
      if (old) return { ...old, line: block.line, lines: block.lines, offset: block.offset };
      const element = document.createElement('div');
      element.className = 'md-block';
      const shown: Shown = { ...block, element, defs: null, renderedWith: null };
      fresh.push(shown);
      return shown;
    });
    this.shown = next;
    this.pages.place(next, carried);
    // The document's link definitions (first one of a label wins, as CommonMark has it) change
    // only when a block with a definition came or went.
    const definitionsChanged =
      previous.length === 0 ||
      fresh.some((b) => hasDefinition(b.text)) ||
      dropped.some((b) => hasDefinition(b.text));
    if (definitionsChanged) {
      const links: Links = {};
      for (const block of next) {
        if (!hasDefinition(block.text)) continue;
        block.defs ??= lexBlock(block.text).links;
        for (const [label, link] of Object.entries(block.defs)) links[label] ??= link;
      }
      this.links = links;
      this.linksKey = JSON.stringify(links);
    }
    const { links, linksKey } = this;
    // The new blocks; after an update cut short or a change of definitions, every block not
    // rendered yet or rendered with other definitions it may refer to.
    const todo =
      this.complete && !definitionsChanged
        ? fresh
        : next.filter(
            (b) => b.renderedWith === null || (b.renderedWith !== linksKey && mayUseReferences(b.text)),
          );
    this.complete = false;
    let sliceStart = performance.now();
    for (const block of todo) {
      if (performance.now() - sliceStart > SLICE_MS) {
        await nextTask();
        if (version !== this.version) return;
        sliceStart = performance.now();
      }
      this.render(block, links);
      block.renderedWith = linksKey;
    }
    this.complete = true;
    this.element.dataset['ready'] = '1';
  }

  private render(block: Shown, links: Links): void {
    const { tokens } = lexBlock(block.text, links);
    block.element.replaceChildren(sanitize(blockHtml(tokens)));
    if (block.element.querySelector('.math, pre.mermaid-src')) {
      void enhance(block.element).catch(() => {});
    }
  }

  /** The source line (fractional) at the top of the preview's visible area. */
  topLine(): number {
    return this.pages.topLine();
  }

  /** The scrollTop that puts source line `line` (fractional) at the top. */
  topFor(line: number): number {
    return this.pages.topFor(line);
  }
}
