// Stand-ins for the `Headers`, `FormData` and `ReadableStream` globals inside the bundled openai SDK
// (wired in by scripts/esbuild-openai-globals.mjs, for the SDK's files only). Touching the first two
// makes Node 20 load all of undici (pipe-mode start-up pays it: bench/pipe.mjs), the third Node's
// web streams, although httpFetch needs neither.

const isTagged = (value: unknown, tag: string): boolean =>
  typeof value === 'object' && value !== null && Object.prototype.toString.call(value) === `[object ${tag}]`;

/** The Headers API the SDK uses: a case-insensitive multimap, iterated sorted by lower-case name. */
export class Headers {
  // Lower-cased name → values in the order they were added.
  private readonly map = new Map<string, string[]>();

  constructor(init?: Iterable<readonly [string, string]> | Record<string, string>) {
    if (!init) return;
    const pairs = Symbol.iterator in init ? init : Object.entries(init);
    for (const [name, value] of pairs as Iterable<readonly [string, string]>) this.append(name, value);
  }

  // Real Headers objects (undici's) count too, as the SDK's `instanceof Headers` expects.
  static [Symbol.hasInstance](value: unknown): boolean {
    return isTagged(value, 'Headers');
  }

  get [Symbol.toStringTag](): string {
    return 'Headers';
  }

  append(name: string, value: string): void {
    const key = name.toLowerCase();
    const text = String(value).trim();
    const list = this.map.get(key);
    if (list) list.push(text);
    else this.map.set(key, [text]);
  }

  set(name: string, value: string): void {
    this.map.set(name.toLowerCase(), [String(value).trim()]);
  }

  delete(name: string): void {
    this.map.delete(name.toLowerCase());
  }

  get(name: string): string | null {
    const list = this.map.get(name.toLowerCase());
    return list ? list.join(', ') : null;
  }

  has(name: string): boolean {
    return this.map.has(name.toLowerCase());
  }

  getSetCookie(): string[] {
    return [...(this.map.get('set-cookie') ?? [])];
  }

  *entries(): IterableIterator<[string, string]> {
    for (const name of [...this.map.keys()].sort()) {
      const list = this.map.get(name) as string[];
      if (name === 'set-cookie') for (const value of list) yield [name, value];
      else yield [name, list.join(', ')];
    }
  }

  *keys(): IterableIterator<string> {
    for (const [name] of this.entries()) yield name;
  }

  *values(): IterableIterator<string> {
    for (const [, value] of this.entries()) yield value;
  }

  forEach(callback: (value: string, name: string, headers: Headers) => void): void {
    for (const [name, value] of this.entries()) callback(value, name, this);
  }

  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries();
  }
}

/**
 * `body instanceof FormData` without loading undici; `new FormData()` (file uploads, which rune
 * does not use) still builds the real one.
 */
export const FormData = function FormData(this: unknown, ...args: unknown[]): object {
  const Real = globalThis.FormData as unknown as new (...a: unknown[]) => object;
  return new Real(...args);
} as unknown as typeof globalThis.FormData;
Object.defineProperty(FormData, Symbol.hasInstance, {
  value: (value: unknown) => isTagged(value, 'FormData'),
});

/** `body instanceof ReadableStream` without loading Node's web streams; construction is the real one. */
export const ReadableStream = function ReadableStream(this: unknown, ...args: unknown[]): object {
  const Real = globalThis.ReadableStream as unknown as new (...a: unknown[]) => object;
  return new Real(...args);
} as unknown as typeof globalThis.ReadableStream;
Object.defineProperty(ReadableStream, Symbol.hasInstance, {
  value: (value: unknown) => isTagged(value, 'ReadableStream'),
});
