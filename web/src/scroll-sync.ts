// Keeps two views of the same text (the editor and the preview) at the same source line. The side
// the person last used (wheel, touch, pointer, keys) leads, the other follows on the next frame.
// Scroll events on the follower (ours, or the browser keeping content in place while the preview's
// pages are laid out) never take the lead. Each side maps its scroll position to a fractional
// source line and back.

export interface LineScroller {
  /** The element whose scrollTop moves. */
  readonly scroller: HTMLElement;
  /** The source line (fractional) at the top of the visible area. */
  topLine(): number;
  /** The scrollTop that puts `line` at the top. */
  topFor(line: number): number;
}

/** Frames to keep checking after a move: the preview lays out pages only as they come into view. */
const SETTLE_FRAMES = 20;
const INPUT = ['wheel', 'touchstart', 'pointerdown', 'keydown'] as const;

export class ScrollSync {
  private leader: LineScroller;
  private frame = 0;
  private readonly listeners: Array<() => void> = [];

  constructor(
    private readonly a: LineScroller,
    private readonly b: LineScroller,
  ) {
    this.leader = a;
    for (const side of [a, b]) {
      const lead = () => {
        this.leader = side;
      };
      const onScroll = () => {
        if (side === this.leader) this.schedule();
      };
      for (const name of INPUT) side.scroller.addEventListener(name, lead, { passive: true, capture: true });
      side.scroller.addEventListener('scroll', onScroll, { passive: true });
      this.listeners.push(() => {
        for (const name of INPUT) side.scroller.removeEventListener(name, lead, { capture: true });
        side.scroller.removeEventListener('scroll', onScroll);
      });
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

  private schedule(frames = SETTLE_FRAMES): void {
    cancelAnimationFrame(this.frame);
    this.frame = requestAnimationFrame(() => {
      // Pages that come into view are laid out a frame or two later and move the target: keep
      // looking for a while after the last move (a few rectangle reads per frame).
      const moved = this.follow();
      if (moved) this.schedule(SETTLE_FRAMES);
      else if (frames > 0) this.schedule(frames - 1);
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
    return true;
  }
}
