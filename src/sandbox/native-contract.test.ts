// The contracts between rune and its C code are declared once, in C: the sandbox helper's flags and
// report words (native/src/helper_contract.h) and the kernel probe record (native/src/probe.h), each
// an X-macro table the C side expands. native-contract.ts, the TypeScript side, is generated from
// those tables here; this fails while the two disagree (regenerate it with
// `npx vitest run src/sandbox/native-contract.test.ts --update`), and checks the built helper and
// addon against the same tables.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sandboxHelperPath } from './helper.ts';
import { runeNative } from './native.ts';
import { HELPER_FLAGS, PROBE_FIELDS } from './native-contract.ts';

const ROOT = join(import.meta.dirname, '../..');
const header = (name: string) => readFileSync(join(ROOT, 'native/src', name), 'utf8');

/** The X(...) entries of the X-macro table `name`, each as its arguments' source text. */
function xTable(text: string, name: string): string[][] {
  const start = text.indexOf(`#define ${name}(X)`);
  if (start === -1) throw new Error(`no table ${name}`);
  const rows: string[][] = [];
  for (const line of text.slice(start).split('\n').slice(1)) {
    const entry = /^\s*X\((.*)\)\s*\\?\s*$/.exec(line);
    if (!entry) break;
    rows.push([...entry[1]!.matchAll(/"(?:[^"\\]|\\.)*"|[^,\s][^,]*/g)].map((m) => m[0].trim()));
  }
  return rows;
}

const text = (literal: string) => JSON.parse(literal) as string;
const comment = (doc: string) => `  /** ${doc.replaceAll('*/', '* /')} */`;

/** native-contract.ts as the headers declare it. */
function generate(contract: string, probe: string): string {
  const flags = xTable(contract, 'RUNE_HELPER_FLAGS').map(([, flag, values, , , metavar, doc]) => {
    const value = text(metavar!);
    return `${comment(`${value ? `${value}: ` : ''}${text(doc!)}`)}\n  '${text(flag!)}': ${values},`;
  });
  const subjects = xTable(contract, 'RUNE_REPORT_SUBJECTS');
  const names = (layer: string) =>
    subjects.filter((row) => row[2] === layer).map((row) => `  '${text(row[1]!)}',`);
  const states = xTable(contract, 'RUNE_REPORT_STATES').map((row) => `  '${text(row[1]!)}',`);
  const fields = xTable(probe, 'RUNE_PROBE_FIELDS');
  return [
    '// Generated from native/src/helper_contract.h and native/src/probe.h by',
    '// src/sandbox/native-contract.test.ts, which fails while they disagree: edit the headers, then run',
    '// `npx vitest run src/sandbox/native-contract.test.ts --update`. Not edited by hand.',
    '',
    "/** The sandbox helper's flags (native/src/args.c) and how many argv words follow each. */",
    'export const HELPER_FLAGS = {',
    ...flags,
    '} as const;',
    '',
    '/** The sandbox layers a report speaks of, in the order rune shows them. */',
    'export const LAYER_ORDER = [',
    ...names('1'),
    '] as const;',
    '',
    '/** Report lines about the helper itself rather than a layer: they only ever say "failed". */',
    'export const REPORT_STEPS = [',
    ...names('0'),
    '] as const;',
    '',
    "/** A report line's second field. */",
    'export const REPORT_STATES = [',
    ...states,
    '] as const;',
    '',
    '/** What native/src/probe.c measures: values > 0 or 0 mean available, negative values are -errno. */',
    'export interface KernelProbe {',
    ...fields.flatMap(([, js, doc]) => [comment(text(doc!)), `  ${text(js!)}: number;`]),
    '}',
    '',
    '/** Every field of KernelProbe, in the order of the record. */',
    'export const PROBE_FIELDS = [',
    ...fields.map(([, js]) => `  '${text(js!)}',`),
    '] as const satisfies readonly (keyof KernelProbe)[];',
    '',
  ].join('\n');
}

/** The text as `npm run format` leaves it, so the generated file passes `biome ci` as it is. */
function formatted(source: string): string {
  const biome = spawnSync(
    join(ROOT, 'node_modules/.bin/biome'),
    ['format', '--stdin-file-path=src/sandbox/native-contract.ts'],
    { input: source, encoding: 'utf8' },
  );
  if (biome.status !== 0) throw new Error(`biome format: ${biome.stderr}`);
  return biome.stdout;
}

describe('the C contracts and their TypeScript side', () => {
  it('native-contract.ts is what the headers declare (regenerate: npx vitest run src/sandbox/native-contract.test.ts --update)', async () => {
    const expected = formatted(generate(header('helper_contract.h'), header('probe.h')));
    await expect(expected).toMatchFileSnapshot('./native-contract.ts');
  });

  it('reads every entry of a table, commas inside strings included', () => {
    const table = [
      '#define T(X) \\',
      '  X(A, "--a", 1, MAX, 0, "IP[:PORT], or NAME", "one, two") \\',
      '  X(B, "--b", 0, 1, 1, "", "say \\"hi\\"")',
      '',
      '#define OTHER 1',
    ].join('\n');
    expect(xTable(table, 'T')).toEqual([
      ['A', '"--a"', '1', 'MAX', '0', '"IP[:PORT], or NAME"', '"one, two"'],
      ['B', '"--b"', '0', '1', '1', '""', '"say \\"hi\\""'],
    ]);
  });

  it('a flag or a probe field added in C alone changes the generated side', () => {
    const contract = header('helper_contract.h');
    const probe = header('probe.h');
    const generated = generate(contract, probe);
    const added = contract.replace(
      '  X(PROBE, "--probe"',
      '  X(NEW_LAYER, "--new-layer", 1, 1, 0, "N", "a layer added in C alone") \\\n  X(PROBE, "--probe"',
    );
    expect(generate(added, probe)).not.toBe(generated);
    expect(generate(added, probe)).toContain("'--new-layer': 1,");
    expect(generated).not.toContain('--new-layer');
    const field = probe.replace(
      '  X(userns,',
      '  X(new_field, "newField", "added in C alone") \\\n  X(userns,',
    );
    expect(generate(contract, field)).toContain('newField: number;');
  });

  it('the built helper parses exactly the declared flags and prints every probe field', () => {
    const usage = spawnSync(sandboxHelperPath(), ['--not-a-flag'], { encoding: 'utf8' });
    expect(usage.status).toBe(2);
    const listed = [...usage.stderr.matchAll(/\[(--[a-z-]+)/g)].map((m) => m[1]);
    expect(listed).toEqual(Object.keys(HELPER_FLAGS));
    const probe = spawnSync(sandboxHelperPath(), ['--probe'], { encoding: 'utf8' });
    expect(Object.keys(JSON.parse(probe.stdout))).toEqual([...PROBE_FIELDS]);
  });

  it('the built addon answers every probe field', () => {
    expect(Object.keys(runeNative().probe())).toEqual([...PROBE_FIELDS]);
  });
});
