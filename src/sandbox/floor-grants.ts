// `rune sandbox` grants checked against the policy's secrets floor: a grant *into* a secret
// (`--allow-read ~/.ssh`, `allowed_paths_ro = ["~/.aws"]`) is refused unless the run is unrestricted,
// as the agent's policy refuses such a read. A grant *around* one (`--allow-read ~`) is fine: the
// view hides the secret folders under it. Pure: paths arrive absolute, in both lexical and real form.
import { floorEntryFor } from '../policy/paths.ts';

export interface Grant {
  /** How the person gave it, for the message: `--allow-read`, `policy.allowed_paths_ro`. */
  source: string;
  /** As given. */
  path: string;
  /** Absolute (`~` expanded), and its real path (symlinks resolved) when it exists. */
  forms: readonly string[];
}

/** One message per grant that lies inside the floor (floor entries in lexical and real form). */
export function floorGrantProblems(grants: readonly Grant[], floor: readonly string[]): string[] {
  const problems: string[] = [];
  for (const grant of grants) {
    const hit = grant.forms.map((form) => floorEntryFor(form, floor)).find(Boolean);
    if (hit) {
      problems.push(
        `${grant.source} ${grant.path}: lies inside ${hit}, which the secrets floor keeps from every tool; grant a folder that holds no secrets, or pass --unrestricted to grant it anyway`,
      );
    }
  }
  return problems;
}
