// Every password login costs one scrypt, whether the name exists, and however its password is
// kept (a plain-text entry's own check takes microseconds): timing does not tell names apart.
import { describe, expect, it } from 'vitest';
import { hashPassword, isScryptHash, scryptedSecret } from './passwords.ts';
import { loginAs, makeServer } from './test-kit.ts';

describe('the scrypt each login attempt pays', () => {
  it('is the account’s own hash, or a dummy of the same cost for unknown names and plain-text entries', async () => {
    const hashed = await hashPassword('pw');
    expect(scryptedSecret({ secret: hashed })).toBe(hashed);
    for (const account of [undefined, { secret: 'plain-password' }]) {
      const dummy = scryptedSecret(account);
      expect(isScryptHash(dummy)).toBe(true);
      // The same parameters as a hash this server makes.
      expect(dummy.split('$').slice(0, 4)).toEqual(hashed.split('$').slice(0, 4));
    }
  });

  it('still lets plain-text and hashed accounts in with the right password only', async () => {
    const hash = await hashPassword('umapass2');
    const kit = await makeServer(`[notes.local]\nadmins = ["ada:adapass1"]\nusers = ["uma:${hash}"]\n`);
    try {
      expect((await kit.server.auth.checkLocal('ada', 'adapass1'))?.name).toBe('ada');
      expect(await kit.server.auth.checkLocal('ada', 'wrong')).toBeNull();
      expect((await kit.server.auth.checkLocal('uma', 'umapass2'))?.name).toBe('uma');
      expect(await kit.server.auth.checkLocal('uma', 'umapass1')).toBeNull();
      expect(await kit.server.auth.checkLocal('nobody', 'adapass1')).toBeNull();
      expect((await loginAs(kit.server, 'ada', 'adapass1')).csrf).toBeTruthy();
    } finally {
      await kit.server.close();
    }
  });
});
