import { describe, expect, it } from 'vitest';
import { BUILTIN_CATALOG, BUILTIN_LOADERS } from './catalog.ts';

describe('the built-in tool catalog', () => {
  it('holds what the tool modules declare (regenerate: npx vitest run src/tools/catalog.test.ts --update)', async () => {
    const declared = [];
    for (const load of Object.values(BUILTIN_LOADERS)) {
      const tool = await load();
      const { name, description, parameters } = tool.definition;
      declared.push({ name, description, parameters, readOnly: tool.readOnly });
    }
    await expect(`${JSON.stringify(declared, null, 2)}\n`).toMatchFileSnapshot('./definitions.json');
  });

  it('offers every loader once, in the loaders order', () => {
    expect(BUILTIN_CATALOG.map((entry) => entry.definition.name)).toEqual(Object.keys(BUILTIN_LOADERS));
  });

  it('loads the tool each entry describes', async () => {
    for (const entry of BUILTIN_CATALOG) {
      const tool = await entry.load();
      expect(tool.definition.name).toBe(entry.definition.name);
      expect(tool.readOnly).toBe(entry.readOnly);
    }
  });
});
