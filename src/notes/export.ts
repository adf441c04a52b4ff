// A note as an archive: a folder named after the note holding one file per note file (zip or tar),
// streamed. Each file's text is read only when the archive reaches it and the next one only when
// the client has taken the previous, so a large note costs neither memory nor one long block of
// the event loop. tar-stream writes the tar (PAX headers for long names), fflate the zip.
import { Readable } from 'node:stream';
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

export function zipNote(folder: string, files: ExportFile[]): Readable {
  const names = entryNames(folder, files);
  function* chunks(): Generator<Uint8Array> {
    const out: Uint8Array[] = [];
    let failure: Error | null = null;
    const zip = new Zip((error, chunk) => {
      if (error) failure = error;
      else out.push(chunk);
    });
    for (let i = 0; i < files.length; i++) {
      const file = files[i]!;
      const entry = new ZipDeflate(names[i]!, { level: 6 });
      entry.mtime = file.mtime;
      zip.add(entry);
      entry.push(Buffer.from(file.content(), 'utf8'), true);
      if (failure) throw failure;
      yield* out.splice(0);
    }
    zip.end();
    if (failure) throw failure;
    yield* out.splice(0);
  }
  return Readable.from(chunks(), { objectMode: false });
}

export function tarNote(folder: string, files: ExportFile[]): Readable {
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
      // The callback of an entry comes once the reader took it: the next file waits until then.
      await entry(
        { name: names[i]!, type: 'file', mode: 0o644, mtime: file.mtime },
        Buffer.from(file.content(), 'utf8'),
      );
    }
    tar.finalize();
  })().catch((error: Error) => tar.destroy(error));
  return Readable.from(tar, { objectMode: false });
}
