// Principals (who is asking) and roles (what they may do), and the role a login provider's lists
// give an identity. Pure: auth.ts looks principals up, this only decides.

export const ROLES = ['guest', 'user', 'admin'] as const;
export type Role = (typeof ROLES)[number];
const RANK: Record<Role | 'anonymous', number> = { anonymous: 0, guest: 1, user: 2, admin: 3 };

export function atLeast(role: Role | 'anonymous', needed: Role): boolean {
  return RANK[role] >= RANK[needed];
}

export interface Principal {
  /** Stable identity: `local:alice`, `oauth:corp:alice@x.org`, `github:alice`, `token:3`. */
  subject: string;
  name: string;
  provider: string;
  role: Role;
  /** Set for cookie sessions: the hash of the session id, and its CSRF token. */
  sessionHash?: string;
  csrf?: string;
  tokenId?: number;
}

/** First list (admins, then users, then guests) that names one of the identifiers; `*` names anyone. */
export function mapRole(
  lists: { admins?: string[] | undefined; users?: string[] | undefined; guests?: string[] | undefined },
  identifiers: string[],
): Role | null {
  const ids = identifiers.filter(Boolean).map((id) => id.toLowerCase());
  for (const [role, list] of [
    ['admin', lists.admins],
    ['user', lists.users],
    ['guest', lists.guests],
  ] as const) {
    for (const entry of list ?? []) {
      const e = entry.toLowerCase();
      if (e === '*' || ids.includes(e)) return role;
      // `@example.org` names everyone with an address at that domain.
      if (e.startsWith('@') && ids.some((id) => id.endsWith(e))) return role;
    }
  }
  return null;
}
