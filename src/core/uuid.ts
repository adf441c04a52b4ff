// Random UUIDs (version 4) for session ids. Read from the kernel's generator: node:crypto's
// randomUUID would load the whole crypto module (13 internal modules) into every pipe run.
import { randomUUID } from 'node:crypto';
import { closeSync, openSync, readSync } from 'node:fs';

function kernelRandom(size: number): Buffer | undefined {
  const bytes = Buffer.alloc(size);
  let fd: number | undefined;
  try {
    fd = openSync('/dev/urandom', 'r');
    return readSync(fd, bytes, 0, size, null) === size ? bytes : undefined;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

export function newUuid(random: (size: number) => Buffer | undefined = kernelRandom): string {
  const bytes = random(16);
  if (!bytes) return randomUUID();
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x40; // version 4
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80; // RFC 4122 variant
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
