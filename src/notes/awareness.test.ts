import { describe, expect, it } from 'vitest';
import { parseAwareness } from './awareness.ts';

const position = 'AQbvrNwBBA==';

describe('parseAwareness', () => {
  it.each([
    [undefined, null],
    [null, null],
    [{}, { cursor: null }],
    [{ cursor: null }, { cursor: null }],
    [{ cursor: { anchor: position, head: position } }, { cursor: { anchor: position, head: position } }],
  ])('accepts %j', (input, expected) => {
    expect(parseAwareness(input)).toEqual(expected);
  });

  it.each([
    ['cursor', /expected an object/],
    [[1], /expected an object/],
    [{ cursor: position }, /awareness\.cursor: expected/],
    [{ cursor: { anchor: position } }, /awareness\.cursor\.head: expected a base64/],
    [{ cursor: { anchor: position, head: 'not base64!' } }, /awareness\.cursor\.head/],
    [{ cursor: { anchor: 'A'.repeat(97), head: position } }, /at most 96/],
    [{ cursor: { anchor: position, head: position, name: 'x' } }, /only "anchor" and "head"/],
    [{ cursor: null, user: { name: 'admin' } }, /unknown key "user"/],
  ])('refuses %j', (input, message) => {
    expect(() => parseAwareness(input)).toThrow(message);
  });
});
