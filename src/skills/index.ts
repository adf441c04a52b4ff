// Skills: folders holding a SKILL.md (YAML front matter `name`, `description`, optional
// `tools_allow` / `tools_deny`, then Markdown instructions). A prompt names one with `@name`; the
// skill's text is then given to the model as a system message.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

export interface Skill {
  name: string;
  description: string;
  /** The Markdown after the front matter: the instructions given to the model. */
  body: string;
  toolsAllow?: string[];
  toolsDeny?: string[];
  /** The SKILL.md file. */
  path: string;
}

export interface SkillCatalog {
  skills: Map<string, Skill>;
  /** SKILL.md files that could not be used, each with the reason. */
  problems: string[];
}

const NAME = /^[A-Za-z][\w-]*$/;

function stringList(value: unknown, field: string, file: string, problems: string[]): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value as string[];
  if (typeof value === 'string') return value.split(/[\s,]+/).filter(Boolean);
  problems.push(`${file}: ${field} must be a list of tool names`);
  return undefined;
}

/** Parses one SKILL.md. Pure apart from the text it is given; problems are returned, not thrown. */
export async function parseSkill(
  text: string,
  file: string,
  folderName: string,
): Promise<{ skill?: Skill; problems: string[] }> {
  const problems: string[] = [];
  const match = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$/.exec(text);
  if (!match) return { problems: [`${file}: no front matter (a block between --- lines at the top)`] };
  let meta: unknown;
  try {
    // Loaded when a skill is used, not on every start-up.
    const { parse: parseYaml } = await import('yaml');
    meta = parseYaml(match[1] ?? '');
  } catch (error) {
    return {
      problems: [`${file}: front matter is not valid YAML: ${(error as Error).message.split('\n')[0]}`],
    };
  }
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) {
    return { problems: [`${file}: front matter must be a mapping of keys to values`] };
  }
  const fields = meta as Record<string, unknown>;
  const name = typeof fields.name === 'string' ? fields.name.trim() : folderName;
  if (!NAME.test(name)) return { problems: [`${file}: name "${name}" must be letters, digits, - or _`] };
  const description = typeof fields.description === 'string' ? fields.description.trim() : '';
  if (!description) problems.push(`${file}: description is missing`);
  const toolsAllow = stringList(fields.tools_allow, 'tools_allow', file, problems);
  const toolsDeny = stringList(fields.tools_deny, 'tools_deny', file, problems);
  const skill: Skill = { name, description, body: (match[2] ?? '').trim(), path: file };
  if (toolsAllow) skill.toolsAllow = toolsAllow;
  if (toolsDeny) skill.toolsDeny = toolsDeny;
  return { skill, problems };
}

/** Loads every skill under the folders, in order; a name found twice keeps its first folder's skill. */
export async function loadSkills(dirs: readonly string[]): Promise<SkillCatalog> {
  const skills = new Map<string, Skill>();
  const problems: string[] = [];
  for (const dir of dirs) {
    let entries: string[];
    try {
      entries = readdirSync(dir).sort();
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT') problems.push(`${dir}: cannot list skills: ${code}`);
      continue;
    }
    for (const entry of entries) {
      const file = join(dir, entry, 'SKILL.md');
      let text: string;
      try {
        if (!statSync(join(dir, entry)).isDirectory()) continue;
        text = readFileSync(file, 'utf8');
      } catch {
        continue;
      }
      const parsed = await parseSkill(text, file, entry);
      problems.push(...parsed.problems);
      if (parsed.skill && !skills.has(parsed.skill.name)) skills.set(parsed.skill.name, parsed.skill);
    }
  }
  return { skills, problems };
}

/** The `@name` references in a prompt, in order, without duplicates. Mail addresses do not count. */
export function findSkillRefs(prompt: string): string[] {
  const names: string[] = [];
  for (const match of prompt.matchAll(/(?<![\w@.])@([A-Za-z][\w-]*)/g)) {
    const name = match[1]!;
    if (!names.includes(name)) names.push(name);
  }
  return names;
}

export interface ResolvedSkills {
  used: Skill[];
  unknown: string[];
}

export function resolveSkillRefs(prompt: string, catalog: SkillCatalog): ResolvedSkills {
  const used: Skill[] = [];
  const unknown: string[] = [];
  for (const name of findSkillRefs(prompt)) {
    const skill = catalog.skills.get(name);
    if (skill) used.push(skill);
    else unknown.push(name);
  }
  return { used, unknown };
}

/** The tool names a run may offer once its skills' tools_allow / tools_deny are applied. */
export function filterToolsBySkills(names: readonly string[], skills: readonly Skill[]): string[] {
  const allowLists = skills.filter((s) => s.toolsAllow).map((s) => s.toolsAllow!);
  const deny = new Set(skills.flatMap((s) => s.toolsDeny ?? []));
  return names.filter(
    (name) => !deny.has(name) && (allowLists.length === 0 || allowLists.some((list) => list.includes(name))),
  );
}

/** The system message that brings a skill into the conversation. */
export function skillMessage(skill: Skill): string {
  return `# Skill: ${skill.name}\n${skill.description}\n\n${skill.body}`;
}
