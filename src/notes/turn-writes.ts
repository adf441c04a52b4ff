// One write per event stream per turn. The events a turn publishes (a save is a `collab.update` and
// a `file.saved`) reach each stream as one buffer, and streams that receive the same frames share
// that buffer: with a thousand streams, one socket write each is most of what a save costs, and
// building a buffer per stream would be the rest.

/** Frames of one turn, queued per recipient in order, written once per recipient. */
export class TurnWrites<T> {
  private readonly frames: Buffer[] = [];
  /** Each recipient's queued frames, as their indices joined by commas (a key shared buffers are found by). */
  private readonly queued = new Map<T, string>();

  /** Adds a frame that recipients can be given; returns its index. */
  add(frame: Buffer): number {
    return this.frames.push(frame) - 1;
  }

  /** Queues frame `index` for `to`, after what it has queued. */
  queue(to: T, index: number): void {
    const key = this.queued.get(to);
    this.queued.set(to, key === undefined ? `${index}` : `${key},${index}`);
  }

  /** What `to` has queued, removed from the turn (to be written before something out of turn). */
  take(to: T): Buffer | null {
    const key = this.queued.get(to);
    if (key === undefined) return null;
    this.queued.delete(to);
    return this.join(key);
  }

  /** Every recipient and its frames in one buffer, the same buffer for the same frames. */
  *drain(): Generator<[T, Buffer]> {
    const joined = new Map<string, Buffer>();
    for (const [to, key] of this.queued) {
      let bytes = joined.get(key);
      if (bytes === undefined) {
        bytes = this.join(key);
        joined.set(key, bytes);
      }
      yield [to, bytes];
    }
    this.queued.clear();
  }

  private join(key: string): Buffer {
    if (!key.includes(',')) return this.frames[Number(key)]!;
    return Buffer.concat(key.split(',').map((index) => this.frames[Number(index)]!));
  }
}
