import { cpSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { filterToolsBySkills, findSkillRefs, loadSkills, parseSkill, resolveSkillRefs } from './index.ts';

// Every built-in tool, so a tool added later is checked against the examples too.
const ALL = (
  JSON.parse(readFileSync(join(import.meta.dirname, '../tools/definitions.json'), 'utf8')) as {
    name: string;
  }[]
).map((tool) => tool.name);

describe('skills', () => {
  it('the shipped examples load without problems and restrict tools as they say', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rune-skills-'));
    cpSync(join(import.meta.dirname, '../../skills-example'), dir, { recursive: true });
    const catalog = await loadSkills([dir]);
    expect(catalog.problems).toEqual([]);
    expect([...catalog.skills.keys()].sort()).toEqual(['code-review', 'explain-folder']);
    const review = catalog.skills.get('code-review')!;
    expect(filterToolsBySkills(ALL, [review])).toEqual(['read_file', 'list_dir']);
    const explain = catalog.skills.get('explain-folder')!;
    // It may not change anything: only the tools that read are offered.
    expect(filterToolsBySkills(ALL, [explain]).sort()).toEqual([
      'find_files',
      'list_dir',
      'read_file',
      'search_files',
    ]);
  });

  it('finds @references but not mail addresses, and reports unknown names', () => {
    expect(findSkillRefs('@a do @b-c, mail x@y.com and @a again')).toEqual(['a', 'b-c']);
    const resolved = resolveSkillRefs('@known @unknown', {
      skills: new Map([['known', { name: 'known', description: 'd', body: 'b', path: 'p' }]]),
      problems: [],
    });
    expect(resolved.used.map((s) => s.name)).toEqual(['known']);
    expect(resolved.unknown).toEqual(['unknown']);
  });

  it('reports broken front matter instead of failing', async () => {
    expect((await parseSkill('no front matter', 'f', 'x')).problems[0]).toMatch(/no front matter/);
    expect((await parseSkill('---\nname: [\n---\n', 'f', 'x')).problems[0]).toMatch(/not valid YAML/);
    const fallback = await parseSkill('---\ndescription: d\n---\nbody', 'f', 'folder-name');
    expect(fallback.skill?.name).toBe('folder-name');
  });
});
