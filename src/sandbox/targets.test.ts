import { describe, expect, it } from 'vitest';
import { allowAddrArg, describeTarget, guardTargets, literalAddresses } from './targets.ts';

describe('guardTargets', () => {
  it.each([
    [['api.example.com'], [{ entry: 'api.example.com', host: 'api.example.com' }]],
    [['API.Example.com:443'], [{ entry: 'API.Example.com:443', host: 'api.example.com', port: 443 }]],
    [['10.0.0.1:8080'], [{ entry: '10.0.0.1:8080', host: '10.0.0.1', port: 8080 }]],
    [['[::1]:9000'], [{ entry: '[::1]:9000', host: '::1', port: 9000 }]],
    [['*.example.com'], []],
    [['*.example.com:443'], []],
    [['https://x.com/'], []],
    [
      ['a.test:1', 'a.test:1', 'a.test:2'],
      [
        { entry: 'a.test:1', host: 'a.test', port: 1 },
        { entry: 'a.test:2', host: 'a.test', port: 2 },
      ],
    ],
  ])('%j → %j', (entries, expected) => {
    expect(guardTargets(entries)).toEqual(expected);
  });
});

describe('the helper argument', () => {
  it.each([
    ['10.0.0.1', undefined, '10.0.0.1'],
    ['10.0.0.1', 443, '10.0.0.1:443'],
    ['2606:2800::1', undefined, '2606:2800::1'],
    ['2606:2800::1', 443, '[2606:2800::1]:443'],
  ])('%s port %s → %s', (address, port, arg) => {
    expect(allowAddrArg(address, port)).toBe(arg);
  });

  it('takes IP literals as their own address and leaves names to DNS', () => {
    expect(literalAddresses('10.1.2.3')).toEqual(['10.1.2.3']);
    expect(literalAddresses('::1')).toEqual(['::1']);
    expect(literalAddresses('api.example.com')).toBeUndefined();
  });
});

describe('describeTarget', () => {
  it('says where each entry applies and which ports', () => {
    expect(describeTarget('api.example.com:443')).toBe(
      'api.example.com:443: fetch_url and sandboxed tools, TCP port 443 only',
    );
    expect(describeTarget('api.example.com')).toBe(
      'api.example.com: fetch_url and sandboxed tools, any TCP port',
    );
    expect(describeTarget('*.example.com')).toMatch(
      /fetch_url only \(any TCP port\); a wildcard cannot be resolved/,
    );
  });
});
