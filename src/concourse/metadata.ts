// What a step shows on the build page beside its version: the answer's first line, which prompt
// ran, and where the run can be read (the notes UI). Values are strings, one line each, clipped,
// and redacted: Concourse shows metadata to everyone who can see the pipeline.
import { redact } from '../core/redact.ts';
import type { Metadata } from './step-types.ts';

/** Concourse's build page shows metadata in a narrow table: longer values are cut here. */
const MAX_VALUE = 120;

/** The first line that holds something, clipped, for a one-line metadata value. */
export function firstLine(text: string, max = MAX_VALUE): string {
  const line = text.split('\n').find((candidate) => candidate.trim() !== '') ?? '';
  const trimmed = line.trim().replace(/\s+/g, ' ');
  return trimmed.length > max ? `${trimmed.slice(0, max - 1)}…` : trimmed;
}

/** `answer` and `prompt` rows (empty values left out: Concourse shows them as blank rows). */
export function answerMetadata(answer: string, promptName: string): Metadata {
  const rows: Metadata = [];
  const line = redact(firstLine(answer));
  if (line) rows.push({ name: 'answer', value: line });
  const prompt = redact(firstLine(promptName));
  if (prompt) rows.push({ name: 'prompt', value: prompt });
  return rows;
}

/** Where the notes UI shows a file of a note (its `#/n/<note>/<file>` route). */
export function noteFileUrl(baseUrl: string, note: string, file: string): string {
  return `${baseUrl}/#/n/${encodeURIComponent(note)}/${encodeURIComponent(file)}`;
}
