// Keeps two views of the same text (the editor and the preview) at the same source line: the one
// the user scrolls leads, the other follows on the next frame. Each side maps its scroll position
// to a fractional source line and back; programmatic scrolls are recognised and not echoed.

export interface LineScroller {
  /** The element whose scrollTop moves. */
  readonly scroller: HTMLElement;
  /** The source line (fractional) at the top of the visible area. */
  topLine(): number;
  /** The scrollTop that puts `line` at the top. */
  topFor(line: number): number;
}

export class ScrollSync {
  private leader: LineScroller;
  private frame = 0;
  /** The scrollTop we set on each side, to tell our own scroll events from the user's. */
  private readonly expected = new Map<LineScroller, number>();
  private readonly listeners: Array<() => void> = [];

  constructor(
    private readonly a: LineScroller,
    private readonly b: LineScroller,
  ) {
    this.leader = a;
    for (const side of [a, b]) {
      const onScroll = () => this.onScroll(side);
      side.scroller.addEventListener('scroll', onScroll, { passive: true });
      this.listeners.push(() => side.scroller.removeEventListener('scroll', onScroll));
    }
  }

  /** Brings the follower to the leader's line again (after the content of either changed). */
  refresh(): void {
    this.schedule();
  }

  destroy(): void {
    cancelAnimationFrame(this.frame);
    for (const remove of this.listeners) remove();
  }

  private onScroll(side: LineScroller): void {
    const expected = this.expected.get(side);
    if (expected !== undefined && Math.abs(side.scroller.scrollTop - expected) <= 1) return;
    this.expected.delete(side);
    this.leader = side;
    this.schedule();
  }

  private schedule(settle = 3): void {
    cancelAnimationFrame(this.frame);
    this.frame = requestAnimationFrame(() => {
      // Content laid out only when it comes into view (the preview's pages) can move the target
      // once the follower has scrolled there: look again on the next frames until it holds.
      if (this.follow() && settle > 0) this.schedule(settle - 1);
    });
  }

  /** Moves the follower to the leader's line; true when it had to move. */
  private follow(): boolean {
    const leader = this.leader;
    const follower = leader === this.a ? this.b : this.a;
    const from = leader.scroller;
    const to = follower.scroller;
    if (from.clientHeight === 0 || to.clientHeight === 0) return false;
    let top: number;
    if (from.scrollTop <= 0) top = 0;
    else if (from.scrollTop + from.clientHeight >= from.scrollHeight - 1)
      top = to.scrollHeight - to.clientHeight;
    else top = follower.topFor(leader.topLine());
    top = Math.max(0, Math.min(Math.round(top), to.scrollHeight - to.clientHeight));
    if (Math.abs(to.scrollTop - top) <= 1) return false;
    to.scrollTop = top;
    this.expected.set(follower, to.scrollTop);
    return true;
  }
}
