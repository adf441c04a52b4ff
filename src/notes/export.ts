// A note as an archive: a folder named after the note holding one file per note file (zip or tar).
import { zipSync } from 'fflate';

export interface ExportFile {
  name: string;
  content: string;
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

export function zipNote(folder: string, files: ExportFile[]): Uint8Array {
  const names = entryNames(folder, files);
  const entries: Record<string, [Uint8Array, { mtime: Date }]> = {};
  files.forEach((file, i) => {
    entries[names[i]!] = [Buffer.from(file.content, 'utf8'), { mtime: file.mtime }];
  });
  return zipSync(entries, { level: 6 });
}

function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, '0')}\0`;
}

/** ustar header; a name that does not fit its 100 bytes is carried by a PAX header before it. */
function tarHeader(name: string, size: number, mtime: Date, type: '0' | '5' | 'x'): Buffer {
  const header = Buffer.alloc(512, 0);
  header.write(name, 0, 100, 'utf8');
  header.write(octal(type === '5' ? 0o755 : 0o644, 8), 100, 'ascii');
  header.write(octal(0, 8), 108, 'ascii');
  header.write(octal(0, 8), 116, 'ascii');
  header.write(octal(size, 12), 124, 'ascii');
  header.write(octal(Math.floor(mtime.getTime() / 1000), 12), 136, 'ascii');
  header.write('        ', 148, 'ascii');
  header.write(type, 156, 'ascii');
  header.write('ustar\u000000', 257, 'binary');
  let sum = 0;
  for (const byte of header) sum += byte;
  header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
  return header;
}

/** The entry's header, after a PAX `path` record when the name is too long for ustar (file names
 * reach 120 characters, up to 480 bytes in UTF-8, and truncating them would merge or garble files). */
function tarEntry(name: string, size: number, mtime: Date, type: '0' | '5'): Buffer[] {
  if (Buffer.byteLength(name) <= 100) return [tarHeader(name, size, mtime, type)];
  const field = ` path=${name}\n`;
  // The record starts with its own length in decimal, which counts its own digits.
  const bytes = Buffer.byteLength(field);
  let length = bytes + 1;
  while (String(length).length + bytes !== length) length = String(length).length + bytes;
  const record = Buffer.from(`${length}${field}`, 'utf8');
  const pad = (512 - (record.length % 512)) % 512;
  const short = `PaxHeaders/${Buffer.from(name)
    .subarray(-80)
    .toString('utf8')
    .replace(/[^A-Za-z0-9._-]/g, '_')}`;
  return [
    tarHeader(short, record.length, mtime, 'x'),
    record,
    Buffer.alloc(pad),
    tarHeader(short, size, mtime, type),
  ];
}

export function tarNote(folder: string, files: ExportFile[]): Uint8Array {
  const names = entryNames(folder, files);
  const parts: Buffer[] = tarEntry(`${folder}/`, 0, new Date(), '5');
  files.forEach((file, i) => {
    const body = Buffer.from(file.content, 'utf8');
    parts.push(...tarEntry(names[i]!, body.length, file.mtime, '0'), body);
    const pad = (512 - (body.length % 512)) % 512;
    if (pad) parts.push(Buffer.alloc(pad));
  });
  parts.push(Buffer.alloc(1024));
  return Buffer.concat(parts);
}
