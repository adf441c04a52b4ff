import { describe, expect, it } from 'vitest';
import { floorPaths } from '../policy/paths.ts';
import { floorGrantProblems, type Grant } from './floor-grants.ts';

const floor = floorPaths('/home/u', '/home/u/.rune');
const grant = (path: string, ...forms: string[]): Grant => ({
  source: '--allow-read',
  path,
  forms: forms.length > 0 ? forms : [path],
});

describe('rune sandbox grants against the secrets floor', () => {
  it.each([
    [
      grant('~/.ssh', '/home/u/.ssh'),
      /--allow-read ~\/\.ssh: lies inside \/home\/u\/\.ssh, .*--unrestricted/,
    ],
    [grant('/home/u/.aws/credentials'), /inside \/home\/u\/\.aws/],
    [grant('/etc/shadow'), /inside \/etc\/shadow/],
    [grant('/home/u/.rune'), /inside \/home\/u\/\.rune/],
    // A harmless-looking link whose real path is a secret folder.
    [grant('/home/u/keys', '/home/u/keys', '/home/u/.gnupg'), /inside \/home\/u\/\.gnupg/],
  ])('refuses %j', (g, message) => {
    const problems = floorGrantProblems([g], floor);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(message);
  });

  it.each([grant('/home/u'), grant('/home/u/src'), grant('/home/u/.sshfoo'), grant('/etc'), grant('/tmp')])(
    'lets %j through (secrets under it are hidden by the view)',
    (g) => {
      expect(floorGrantProblems([g], floor)).toEqual([]);
    },
  );
});
