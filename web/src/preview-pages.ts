// The preview's blocks, grouped into pages of a few dozen. Pages out of view are neither laid out
// nor painted (`content-visibility: auto`), which keeps a 10,000-line preview cheap to change; a
// page rather than each block carries it, because the browser tracks every such element on every
// frame. Pages only split when they grow, so an edit moves no other block between pages. The
// source-line ↔ scroll-offset mapping for scroll sync searches pages first, so it lays out at most
// the page it lands in.

export interface Placed {
  element: HTMLElement;
  /** 0-based first source line, and how many lines the block spans. */
  line: number;
  lines: number;
}

interface Page {
  element: HTMLElement;
  items: Placed[];
  /** The class of the height guessed for it, as last set. */
  guess?: string;
}

const PAGE = 32;

/** Height guesses come in steps of √2 from 6 em; each step is a class (no style attributes). */
const GUESSES = 30;
let guessSheet: CSSStyleSheet | null = null;

function guessClass(em: number): string {
  if (!guessSheet) {
    guessSheet = new CSSStyleSheet();
    guessSheet.replaceSync(
      Array.from(
        { length: GUESSES },
        (_, k) =>
          `.md-page.guess-${k} { contain-intrinsic-size: auto ${Math.round(6 * Math.SQRT2 ** k)}em; }`,
      ).join('\n'),
    );
    document.adoptedStyleSheets = [...document.adoptedStyleSheets, guessSheet];
  }
  return `guess-${Math.min(GUESSES - 1, Math.max(0, Math.round(2 * Math.log2(em / 6))))}`;
}

export class Pages {
  private pages: Page[] = [];
  private items: Placed[] = [];

  constructor(private readonly root: HTMLElement) {}

  /**
   * Shows `items` in order. `inPlace` are the elements already shown in this order (the blocks an
   * edit did not touch); every other item is inserted after the one before it.
   */
  place(items: Placed[], inPlace: Set<HTMLElement>): void {
    const keep = new Set(items.map((item) => item.element));
    for (const page of this.pages) {
      for (const item of page.items) if (!keep.has(item.element)) item.element.remove();
    }
    // Anything else in the root (a placeholder text) goes too.
    const pageElements = new Set(this.pages.map((page) => page.element));
    for (const child of [...this.root.childNodes])
      if (!pageElements.has(child as HTMLElement)) child.remove();
    let last: HTMLElement | null = null;
    for (const item of items) {
      if (!inPlace.has(item.element)) {
        if (last) last.after(item.element);
        else this.firstPage().prepend(item.element);
      }
      last = item.element;
    }
    // Pages as they are now, in order, dropping empty ones and splitting big ones.
    const known = new Map<Element, Page>(this.pages.map((page) => [page.element, page]));
    const byElement = new Map<Element, Page>();
    const pages: Page[] = [];
    for (const item of items) {
      const parent = item.element.parentElement!;
      let page = byElement.get(parent);
      if (!page) {
        page = known.get(parent) ?? { element: parent as HTMLElement, items: [] };
        page.items = [];
        byElement.set(parent, page);
        pages.push(page);
      }
      page.items.push(item);
    }
    for (const page of this.pages) if (!byElement.has(page.element)) page.element.remove();
    this.pages = [];
    for (const page of pages) {
      this.pages.push(page);
      if (page.items.length <= 2 * PAGE) continue;
      // Each block moves once, into a new page right after the one before.
      const all = page.items;
      page.items = all.slice(0, PAGE);
      let after = page.element;
      for (let i = PAGE; i < all.length; i += PAGE) {
        const chunk = all.slice(i, i + PAGE);
        const element = this.newPage();
        after.after(element);
        element.append(...chunk.map((item) => item.element));
        this.pages.push({ element, items: chunk });
        after = element;
      }
    }
    // Until a page has been shown once, its height is a guess from its source lines; a better
    // guess keeps the scrollbar and scroll sync steadier on the way there.
    for (const page of this.pages) {
      const guess = guessClass(page.items.reduce((sum, item) => sum + item.lines, 0) * 1.5);
      if (page.guess === guess) continue;
      page.guess = guess;
      page.element.className = `md-page ${guess}`;
    }
    this.items = items;
  }

  /** The source line (fractional) at the top of the visible area. */
  topLine(): number {
    const items = this.items;
    const top = this.root.scrollTop;
    if (items.length === 0) return 0;
    const page =
      this.pages[this.lastIndex(this.pages.length, (i) => this.top(this.pages[i]!.element) <= top)]!;
    this.lay(page);
    const within = page.items;
    const index = this.lastIndex(within.length, (i) => this.top(within[i]!.element) <= top);
    const item = within[index]!;
    const start = this.top(item.element);
    const height = item.element.offsetHeight;
    if (top < start) return (item.line * top) / Math.max(start, 1);
    const next = items[items.indexOf(item) + 1];
    if (top < start + height || !next) {
      return item.line + (Math.min(top - start, height) / Math.max(height, 1)) * item.lines;
    }
    // In the gap between two blocks (margins, blank lines).
    const gap = Math.max(this.top(next.element) - (start + height), 1);
    const end = item.line + item.lines;
    return end + ((top - start - height) / gap) * (next.line - end);
  }

  /** The scrollTop that puts source line `line` (fractional) at the top. */
  topFor(line: number): number {
    const items = this.items;
    const first = items[0];
    if (!first) return 0;
    if (line <= first.line) return (this.top(first.element) * line) / Math.max(first.line, 1);
    const page = this.pages[this.lastIndex(this.pages.length, (i) => this.pages[i]!.items[0]!.line <= line)]!;
    this.lay(page);
    const within = page.items;
    const item = within[this.lastIndex(within.length, (i) => within[i]!.line <= line)]!;
    const start = this.top(item.element);
    const height = item.element.offsetHeight;
    const end = item.line + item.lines;
    const next = items[items.indexOf(item, items.indexOf(within[0]!)) + 1];
    if (line < end || !next) return start + (Math.min(line - item.line, item.lines) / item.lines) * height;
    return (
      start +
      height +
      ((line - end) / Math.max(next.line - end, 1)) * (this.top(next.element) - start - height)
    );
  }

  /**
   * Makes the browser lay out a page it skips (out of view) before its blocks are measured: the
   * positions of blocks in a skipped page are stale. The page is about to be shown anyway (scroll
   * sync moves there); once it has been painted, `auto` takes over again.
   */
  private lay(page: Page): void {
    // The page itself is always "visible"; whether its contents are skipped shows on a child.
    const child = page.element.firstElementChild;
    if (!child || child.checkVisibility({ contentVisibilityAuto: true })) return;
    page.element.classList.add('md-page-laid');
    requestAnimationFrame(() => requestAnimationFrame(() => page.element.classList.remove('md-page-laid')));
  }

  /** Offset of an element's top from the top of the scrolled content. */
  private top(element: HTMLElement): number {
    return element.getBoundingClientRect().top - this.root.getBoundingClientRect().top + this.root.scrollTop;
  }

  /** The last index in [0, length) for which `ok` holds (0 when none does); `ok` must be monotone. */
  private lastIndex(length: number, ok: (index: number) => boolean): number {
    let lo = 0;
    let hi = length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (ok(mid)) lo = mid;
      else hi = mid - 1;
    }
    return Math.max(lo, 0);
  }

  private firstPage(): HTMLElement {
    const existing = this.pages[0]?.element;
    if (existing?.isConnected) return existing;
    const page = this.newPage();
    this.root.prepend(page);
    this.pages.unshift({ element: page, items: [] });
    return page;
  }

  private newPage(): HTMLElement {
    const page = document.createElement('div');
    page.className = 'md-page';
    return page;
  }
}
