import { describe, expect, it } from 'vitest';
import { type SaveFacts, saveLabel } from './save-state.ts';

const base: SaveFacts = { readOnly: false, queued: 0, offline: false, refused: null, revision: null };

describe('saveLabel', () => {
  it.each([
    [{}, 'saved', 'saved'],
    [{ revision: 4 }, 'saved · rev 4', 'saved'],
    [{ queued: 3, revision: 4 }, 'saving…', 'saving'],
    [{ queued: 1, offline: true }, 'offline · 1 change queued', 'offline'],
    [{ queued: 12, offline: true }, 'offline · 12 changes queued', 'offline'],
    [{ offline: true }, 'offline', 'offline'],
    [
      { queued: 2, refused: 'file is too large', offline: true },
      'not saved: file is too large (2 changes kept here)',
      'error',
    ],
    [{ readOnly: true, queued: 5, revision: 2 }, 'read-only · rev 2', 'readonly'],
  ] as const)('%j → %s', (facts, text, kind) => {
    expect(saveLabel({ ...base, ...facts })).toEqual({ text, kind });
  });
});
