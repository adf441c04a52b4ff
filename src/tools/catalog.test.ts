import { describe, expect, it } from 'vitest';
import { BUILTIN_CATALOG, BUILTIN_LOADERS } from './catalog.ts';

describe('the built-in tool catalog', () => {
  it('holds what the tool modules declare (regenerate: npx vitest run src/tools/catalog.test.ts --update)', async () => {
    const declared = [];
    for (const load of Object.values(BUILTIN_LOADERS)) {
      const tool = await load();
      const { name, description, parameters } = tool.definition;
      declared.push({ name, description, parameters, readOnly: tool.readOnly, access: tool.access });
    }
    await expect(`${JSON.stringify(declared, null, 2)}\n`).toMatchFileSnapshot('./definitions.json');
  });

  it("declares an access that names one of the tool's own arguments", () => {
    // The policy reads the argument an access names (src/policy/decide.ts): `path` for a read or
    // write, `cmd` for a command, `url` for a fetch. A schema and an access edited apart fail here.
    const argument = { read: 'path', write: 'path', command: 'cmd', url: 'url' } as const;
    for (const { definition, access } of BUILTIN_CATALOG) {
      const properties = Object.keys((definition.parameters as { properties?: object }).properties ?? {});
      const named = access.kind in argument ? argument[access.kind as keyof typeof argument] : undefined;
      if (named) expect(properties, definition.name).toContain(named);
      else
        expect(
          properties.some((key) => Object.values(argument).includes(key as never)),
          definition.name,
        ).toBe(false);
    }
  });

  it('offers every loader once, in the loaders order', () => {
    expect(BUILTIN_CATALOG.map((entry) => entry.definition.name)).toEqual(Object.keys(BUILTIN_LOADERS));
  });

  it('loads the tool each entry describes', async () => {
    for (const entry of BUILTIN_CATALOG) {
      const tool = await entry.load();
      expect(tool.definition.name).toBe(entry.definition.name);
      expect(tool.readOnly).toBe(entry.readOnly);
      expect(tool.access).toEqual(entry.access);
    }
  });
});
