// Test support shared by the policy's tests.
import definitions from '../tools/definitions.json' with { type: 'json' };
import type { ToolAccess } from './types.ts';

/** The access the built-in tool `name` declares (src/tools/definitions.json), as the agent passes it. */
export function toolAccess(name: string): ToolAccess {
  const entry = (definitions as { name: string; access: ToolAccess }[]).find((tool) => tool.name === name);
  if (!entry) throw new Error(`no built-in tool named ${name}`);
  return entry.access;
}
