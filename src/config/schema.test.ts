// RuneConfig is the output type of configSchema(); the loader fills DEFAULTS in without building
// the schema (ADR 0024). These check that the two agree, in type and in value.
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { z } from 'zod/v4';
import { loadConfig, mergeLayers, withDefaults } from './load.ts';
import {
  type CONFIG_PROVENANCE,
  type ConfigLayer,
  configSchema,
  DEFAULTS,
  type RuneConfig,
} from './schema.ts';

/** A loaded config as plain data: what the schema itself would give. */
function plain(config: RuneConfig): unknown {
  return JSON.parse(JSON.stringify(config));
}

const LAYERS: Record<string, ConfigLayer> = {
  empty: {},
  'top-level keys': { model: 'm', max_steps: 3, log_level: 'debug', trace: '/t' },
  tables: {
    policy: { mode: 'confirm', allowed_commands: ['ls'] },
    sandbox: { tmp_mb: 64, cpu_percent: 50 },
    checkpoints: { max_mb: 10 },
    notes: { port: 1, synchronous: 'normal', limits: { max_file_kb: 2 } },
    mcp: [{ name: 'fs', command: 'npx', args: ['x'] }],
  },
};

describe('RuneConfig and the schema', () => {
  it('is the schema output type, with the provenance rune adds', () => {
    expectTypeOf<Omit<RuneConfig, typeof CONFIG_PROVENANCE>>().toEqualTypeOf<
      z.output<ReturnType<typeof configSchema>>
    >();
    expectTypeOf(withDefaults({})).toEqualTypeOf<RuneConfig>();
    // Keys with a default are never undefined where they are read.
    expectTypeOf<RuneConfig['sandbox']['max_file_mb']>().toEqualTypeOf<number>();
    expectTypeOf<RuneConfig['sandbox']['tmp_mb']>().toEqualTypeOf<number>();
    expectTypeOf<RuneConfig['notes']['synchronous']>().toEqualTypeOf<'full' | 'normal'>();
    expectTypeOf<RuneConfig['sandbox']['cpu_percent']>().toEqualTypeOf<number | undefined>();
  });

  for (const [name, layer] of Object.entries(LAYERS)) {
    it(`fills in the same defaults as the schema does (${name})`, () => {
      const loaded = withDefaults(mergeLayers([layer]));
      expect(plain(loaded)).toEqual(
        configSchema().parse(JSON.parse(JSON.stringify(layer)), { jitless: true }),
      );
    });
  }

  it('declares every default on a key of the schema, and a loaded config holds each', () => {
    // configSchema() throws while building when DEFAULTS names a key the schema lacks.
    const parsed = configSchema().parse({}) as Record<string, unknown>;
    const { config } = loadConfig({ env: {}, readFile: () => '', file: '/x/rune.toml' });
    for (const [key, value] of Object.entries(DEFAULTS)) {
      if (typeof value === 'object' && !Array.isArray(value)) {
        for (const [inner, innerValue] of Object.entries(value)) {
          expect(
            (config as unknown as Record<string, Record<string, unknown>>)[key]?.[inner],
            `${key}.${inner}`,
          ).toEqual(innerValue);
          expect((parsed[key] as Record<string, unknown>)[inner], `${key}.${inner}`).toEqual(innerValue);
        }
      } else {
        expect((config as unknown as Record<string, unknown>)[key], key).toEqual(value);
        expect(parsed[key], key).toEqual(value);
      }
    }
  });
});
