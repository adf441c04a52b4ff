// The local accounts of [notes.local]: name, role and password (a scrypt hash, or plain text,
// which is registered as a secret and warned about).
import type { NotesConfig } from '../config/schema.ts';
import type { Logger } from '../core/logger.ts';
import { registerSecret } from '../core/redact.ts';
import { isScryptHash } from './passwords.ts';
import type { Role } from './roles.ts';

export interface LocalAccount {
  name: string;
  role: Role;
  secret: string;
  source: 'config' | 'generated';
}

/** Reads [notes.local]; the highest role wins when a name appears twice. Warns about plain passwords. */
export function configAccounts(config: NotesConfig, logger: Logger): Map<string, LocalAccount> {
  const accounts = new Map<string, LocalAccount>();
  const plain: string[] = [];
  for (const role of ['admin', 'user', 'guest'] as const) {
    const entries = config.local?.[`${role}s` as 'admins' | 'users' | 'guests'] ?? [];
    for (const entry of entries) {
      const colon = entry.indexOf(':');
      const name = entry.slice(0, colon);
      const secret = entry.slice(colon + 1);
      if (accounts.has(name)) continue;
      if (!isScryptHash(secret)) {
        plain.push(name);
        registerSecret(secret);
      }
      accounts.set(name, { name, role, secret, source: 'config' });
    }
  }
  if (plain.length > 0) {
    logger.warn('notes.plain_password', {
      message: `[notes.local] has plain-text passwords for ${plain.join(', ')}; replace them with hashes from \`rune notes hash-password\``,
    });
  }
  return accounts;
}
