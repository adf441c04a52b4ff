// A note as an archive: a folder named after the note holding one file per note file (zip or tar),
// streamed. Each file's text is read only when the archive reaches it and the next one only when
// the client has taken the previous, so a large note costs no memory; the compression runs in
// slices of 64 KiB with the event loop free between them, each slice's CPU time handed to `pace`
// (which charges the client's budget and waits while it is spent), so an export never holds the
// loop that answers everyone else. tar-stream writes the tar (PAX headers), fflate the zip.
import { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Zip, ZipDeflate } from 'fflate';
import { pack } from 'tar-stream';

export interface ExportFile {
  name: string;
  /** Read when the archive reaches the file. */
  content(): string;
  mtime: Date;
}

/** File names inside the archive: `..`-free and unique, `.md` added to names without an extension. */
function entryNames(folder: string, files: ExportFile[]): string[] {
  const seen = new Set<string>();
  return files.map((file) => {
    let base = file.name.replace(/[/\\]/g, '_');
    if (!/\.[A-Za-z0-9]+$/.test(base)) base += '.md';
    let name = base;
    for (let i = 2; seen.has(name); i++) name = base.replace(/(\.[^.]+)?$/, `-${i}$1`);
    seen.add(name);
    return `${folder}/${name}`;
  });
}

/**
 * Called after each slice of an export's work with the CPU milliseconds it took; resolves when the
 * next slice may run (at the earliest in the next turn of the event loop).
 */
export type Pace = (cpuMs: number) => Promise<void>;

/** Bytes of text compressed between two turns of the event loop. */
export const SLICE_BYTES = 64 * 1024;

const justYield: Pace = () => nextTurn();

export function zipNote(folder: string, files: ExportFile[], pace: Pace = justYield): Readable {
  const names = entryNames(folder, files);
  async function* chunks(): AsyncGenerator<Uint8Array> {
    const out: Uint8Array[] = [];
    let failure: Error | null = null;
    const zip = new Zip((error, chunk) => {
      if (error) failure = error;
      else out.push(chunk);
    });
    for (let i = 0; i < files.length; i++) {
      const file = files[i]!;
      const started = performance.now();
      const entry = new ZipDeflate(names[i]!, { level: 6 });
      entry.mtime = file.mtime;
      zip.add(entry);
      const bytes = Buffer.from(file.content(), 'utf8');
      let at = 0;
      do {
        const sliceStart = at === 0 ? started : performance.now();
        const end = Math.min(bytes.length, at + SLICE_BYTES);
        entry.push(bytes.subarray(at, end), end === bytes.length);
        at = end;
        if (failure) throw failure;
        const spent = performance.now() - sliceStart;
        yield* out.splice(0);
        await pace(spent);
      } while (at < bytes.length);
    }
    zip.end();
    if (failure) throw failure;
    yield* out.splice(0);
  }
  return Readable.from(chunks(), { objectMode: false });
}

export function tarNote(folder: string, files: ExportFile[], pace: Pace = justYield): Readable {
  const names = entryNames(folder, files);
  const tar = pack();
  const entry = (header: Parameters<typeof tar.entry>[0], body?: Buffer) =>
    new Promise<void>((resolve, reject) => {
      const done = (error?: Error | null) => (error ? reject(error) : resolve());
      if (body === undefined) tar.entry(header, done);
      else tar.entry(header, body, done);
    });
  void (async () => {
    await entry({ name: `${folder}/`, type: 'directory', mode: 0o755, mtime: new Date() });
    for (let i = 0; i < files.length; i++) {
      const file = files[i]!;
      const started = performance.now();
      // The callback of an entry comes once the reader took it: the next file waits until then.
      const written = entry(
        { name: names[i]!, type: 'file', mode: 0o644, mtime: file.mtime },
        Buffer.from(file.content(), 'utf8'),
      );
      await pace(performance.now() - started);
      await written;
    }
    tar.finalize();
  })().catch((error: Error) => tar.destroy(error));
  return Readable.from(tar, { objectMode: false });
}
