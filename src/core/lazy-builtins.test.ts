import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { DEFERRED_BUILTINS, lazyBuiltinRequire } from './lazy-builtins.ts';

const realRequire = createRequire(import.meta.url);

/** A require that records what it really loaded. */
function recording() {
  const loaded: string[] = [];
  const load = (id: string) => {
    loaded.push(id);
    return realRequire(id);
  };
  return { loaded, require: lazyBuiltinRequire(load) };
}

describe('lazyBuiltinRequire', () => {
  it('loads a deferred builtin on first use, once, with or without node:', () => {
    const { loaded, require } = recording();
    const crypto = require('node:crypto') as typeof import('node:crypto');
    // biome-ignore lint/style/useNodejsImportProtocol: the bare name must map to the same stand-in
    expect(require('crypto')).toBe(crypto);
    expect(loaded).toEqual([]);
    expect(crypto.createHash('sha256').update('x').digest('hex')).toHaveLength(64);
    expect(crypto.randomBytes(4)).toHaveLength(4);
    expect(loaded).toEqual(['node:crypto']);
  });

  it("answers esbuild's __esModule question without loading", () => {
    const { loaded, require } = recording();
    expect((require('node:child_process') as { __esModule?: unknown }).__esModule).toBeUndefined();
    expect(loaded).toEqual([]);
  });

  it('passes other modules straight through', () => {
    const { loaded, require } = recording();
    expect(require('node:events')).toBe(realRequire('node:events'));
    expect(loaded).toEqual(['node:events']);
  });

  it('behaves as the module for keys, spreading and the in operator (a default import)', () => {
    const { require } = recording();
    const zlib = require('node:zlib') as Record<string, unknown>;
    const real = realRequire('node:zlib') as Record<string, unknown>;
    expect(Object.keys(zlib)).toEqual(Object.keys(real));
    expect({ ...zlib }.gzipSync).toBe(real.gzipSync);
    expect('gunzipSync' in zlib).toBe(true);
    expect(Object.getPrototypeOf(zlib)).toBe(Object.getPrototypeOf(real));
  });

  it('defers only plain-object modules', () => {
    for (const id of DEFERRED_BUILTINS) {
      const real = realRequire(`node:${id}`);
      expect(typeof real, id).toBe('object');
    }
  });
});
