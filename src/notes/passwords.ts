// Passwords of local accounts: the scrypt hashes `rune notes hash-password` prints, checked at the
// same cost whether or not the account exists, and the plain-text entries rune.toml may still hold.
import { createHash, randomBytes, scrypt, scryptSync, timingSafeEqual } from 'node:crypto';

const SCRYPT = { N: 16384, r: 8, p: 1, keylen: 32 };

function scryptAsync(password: string, salt: Buffer, keylen: number, N: number, r: number, p: number) {
  return new Promise<Buffer>((resolve, reject) => {
    scrypt(password, salt, keylen, { N, r, p, maxmem: 256 * N * r }, (error, key) =>
      error ? reject(error) : resolve(key),
    );
  });
}

/** `scrypt$N$r$p$salt$hash` (base64), the format `rune notes hash-password` prints. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scryptAsync(password, salt, SCRYPT.keylen, SCRYPT.N, SCRYPT.r, SCRYPT.p);
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

/** The cost of a real check: hashPassword's parameters, a salt and a key that match nothing. */
const DUMMY_HASH = `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=`;

/** The scrypt hash a login attempt is checked against: the account's own, else the dummy. */
export function scryptedSecret(account: { secret: string } | undefined): string {
  return account && isScryptHash(account.secret) ? account.secret : DUMMY_HASH;
}

export function isScryptHash(value: string): boolean {
  return /^scrypt\$\d+\$\d+\$\d+\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/.test(value);
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  if (isScryptHash(stored)) {
    const [, n, r, p, salt, hash] = stored.split('$') as [string, string, string, string, string, string];
    const expected = Buffer.from(hash, 'base64');
    const N = Number(n);
    if (N > 2 ** 20 || Number(r) > 32 || Number(p) > 16) return false;
    const key = await scryptAsync(
      password,
      Buffer.from(salt, 'base64'),
      expected.length,
      N,
      Number(r),
      Number(p),
    );
    return key.length === expected.length && timingSafeEqual(key, expected);
  }
  // Plain-text entry from rune.toml (accepted with a warning at start): compare digests so the
  // comparison takes the same time whatever the length.
  const a = createHash('sha256').update(password).digest();
  const b = createHash('sha256').update(stored).digest();
  return timingSafeEqual(a, b);
}

/**
 * The password's scrypt key under a fixed context (the same parameters as hashPassword), for a
 * mark that must be the same in every process and slow to search.
 */
export function passwordKey(password: string, context: string): string {
  return scryptSync(password, context, SCRYPT.keylen, { N: SCRYPT.N, r: SCRYPT.r, p: SCRYPT.p }).toString(
    'base64',
  );
}
