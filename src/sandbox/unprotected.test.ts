import { describe, expect, it } from 'vitest';
import { decideGrants, unprotectedGrants } from './unprotected.ts';

const places = { userHomes: ['/home/ann'], runeFolders: ['/home/ann/.rune'] };
const moved = { userHomes: ['/home/ann'], runeFolders: ['/srv/rune-home', '/home/ann/.rune'] };

// grant (writable, real path) × mode → decision; `accepted` is sandbox.accept_unprotected_grants.
const TABLE: {
  grant: string;
  namespaces: boolean;
  accepted?: boolean;
  expect: string;
  where?: typeof places;
}[] = [
  // The usual case: a project folder, in both modes.
  { grant: '/home/ann/src/project', namespaces: false, expect: 'ok' },
  { grant: '/home/ann/src/project', namespaces: true, expect: 'ok' },
  { grant: '/tmp/build', namespaces: false, expect: 'ok' },
  // The home folder, and folders holding it.
  { grant: '/home/ann', namespaces: false, expect: 'refused' },
  { grant: '/home', namespaces: false, expect: 'refused' },
  { grant: '/', namespaces: false, expect: 'refused' },
  { grant: '/home/ann', namespaces: false, accepted: true, expect: 'accepted' },
  // With namespaces the view keeps them read-only or hidden: nothing changes.
  { grant: '/home/ann', namespaces: true, expect: 'ok' },
  { grant: '/', namespaces: true, expect: 'ok' },
  // A folder of the home holding start-up files (~/.config/git/config, autostart, systemd…).
  { grant: '/home/ann/.config', namespaces: false, expect: 'refused' },
  { grant: '/home/ann/.config/fish/functions', namespaces: false, expect: 'ok' },
  // A start-up file granted by name is the person's choice (writable with namespaces too).
  { grant: '/home/ann/.bashrc', namespaces: false, expect: 'ok' },
  // rune's own folder, inside or around the grant, also when RUNE_HOME is outside the home.
  { grant: '/home/ann/.rune', namespaces: false, expect: 'refused' },
  { grant: '/home/ann/.rune/cache', namespaces: false, expect: 'refused' },
  { grant: '/srv', namespaces: false, expect: 'refused', where: moved },
  { grant: '/srv', namespaces: false, expect: 'ok' },
  { grant: '/srv/rune-home/code-cache', namespaces: false, expect: 'refused', where: moved },
  { grant: '/srv/rune-home-other', namespaces: false, expect: 'ok', where: moved },
];

describe('writable grants without namespaces', () => {
  for (const row of TABLE) {
    const mode = row.namespaces ? 'namespaces' : 'no namespaces';
    it(`${row.grant}, ${mode}${row.accepted ? ', accepted' : ''} → ${row.expect}`, () => {
      const decision = decideGrants([row.grant], row.namespaces, row.accepted ?? false, row.where ?? places);
      expect(decision.kind).toBe(row.expect);
    });
  }

  it('the refusal names the grant, what it exposes and what to do', () => {
    const decision = decideGrants(['/home/ann/src/p', '/home'], false, false, places);
    expect(decision.kind).toBe('refused');
    if (decision.kind !== 'refused') return;
    expect(decision.error.code).toBe('SANDBOX_SETUP');
    const text = decision.error.message;
    expect(text).toContain('writable grant /home holds /home/ann/.rune');
    expect(text).toContain('the home folder /home/ann');
    expect(text).not.toContain('/home/ann/src/p');
    expect(text).toContain('Run rune in a project folder and grant narrower folders');
    expect(text).toContain('sandbox.accept_unprotected_grants = true');
  });

  it("the account's home counts as well as $HOME", () => {
    const both = { userHomes: ['/var/tmp/h', '/root'], runeFolders: ['/var/tmp/h/.rune'] };
    expect(decideGrants(['/root'], false, false, both).kind).toBe('refused');
    expect(decideGrants(['/var/tmp'], false, false, both).kind).toBe('refused');
    expect(decideGrants(['/root/project'], false, false, both).kind).toBe('ok');
  });

  it('lists the start-up files inside a folder of the home', () => {
    const [found] = unprotectedGrants(['/home/ann/.config'], places);
    expect(found?.exposes).toEqual([
      '/home/ann/.config/git/config',
      '/home/ann/.config/autostart',
      '/home/ann/.config/systemd',
      '/home/ann/.config/fish',
      '/home/ann/.config/environment.d',
    ]);
  });

  it('the accepted note says what was accepted, for the layer report', () => {
    const decision = decideGrants(['/home/ann'], false, true, places);
    expect(decision.kind === 'accepted' && decision.note).toMatch(
      /^accepted by sandbox\.accept_unprotected_grants: .*writable grant \/home\/ann holds/,
    );
  });

  it("without a home folder only rune's folder counts", () => {
    expect(decideGrants(['/'], false, false, { userHomes: [], runeFolders: ['/var/lib/rune'] }).kind).toBe(
      'refused',
    );
    expect(
      decideGrants(['/work'], false, false, { userHomes: [], runeFolders: ['/var/lib/rune'] }).kind,
    ).toBe('ok');
  });
});
