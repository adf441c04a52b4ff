import { describe, expect, it } from 'vitest';
import { argumentsFrom, plainArgument } from './input.ts';

const readFile = {
  type: 'object',
  properties: { path: { type: 'string' }, offset: { type: 'integer' } },
  required: ['path'],
};
const writeFile = {
  type: 'object',
  properties: { path: { type: 'string' }, content: { type: 'string' } },
  required: ['path', 'content'],
};
const inspect = { type: 'object', properties: { pid: { type: 'integer' } } };
const sum = { type: 'object', properties: { a: { type: 'number' } }, required: ['a'] };

describe('plainArgument', () => {
  it.each([
    ['one required string', readFile, 'path'],
    ['two required', writeFile, undefined],
    ['none required', inspect, undefined],
    ['one required number', sum, undefined],
  ])('%s', (_name, parameters, expected) => {
    expect(plainArgument(parameters)).toBe(expected);
  });
});

describe('argumentsFrom', () => {
  it.each([
    ['JSON passes as written', '{"path":"a"}\n', readFile, '{"path":"a"}'],
    [
      'text fills the plain argument, without echo’s newline',
      'src/main.ts\n',
      readFile,
      '{"path":"src/main.ts"}',
    ],
    ['inner newlines stay', 'ls\npwd\n', { ...readFile }, '{"path":"ls\\npwd"}'],
    ['nothing written: no arguments', '', inspect, ''],
    ['text for a tool without a plain argument is left for the JSON check', 'x y', writeFile, 'x y'],
  ])('%s', (_name, input, parameters, expected) => {
    expect(argumentsFrom(input, parameters)).toBe(expected);
  });
});
