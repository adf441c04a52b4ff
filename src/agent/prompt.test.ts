import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildSystemPrompt } from './prompt.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function project(): { base: string; proj: string } {
  const base = mkdtempSync(join(tmpdir(), 'rune-prompt-'));
  dirs.push(base);
  const proj = join(base, 'proj');
  mkdirSync(proj);
  return { base, proj };
}

const prompt = (cwd: string) => buildSystemPrompt({ config: {}, cwd, systemPrompt: 'base' });

describe('AGENTS.md in the system prompt', () => {
  it('is read as a regular file, or through a link to a file inside the folder', () => {
    const { proj } = project();
    writeFileSync(join(proj, 'CLAUDE.md'), 'Always answer in French.');
    symlinkSync('CLAUDE.md', join(proj, 'AGENTS.md'));
    expect(prompt(proj)).toContain('Always answer in French.');
  });

  it('is not read through a link leading out of the folder (a secret would go to the provider)', () => {
    const { base, proj } = project();
    writeFileSync(join(base, 'id_rsa'), 'PRIVATE-KEY-prompt');
    symlinkSync(join(base, 'id_rsa'), join(proj, 'AGENTS.md'));
    expect(prompt(proj)).toBe('base');
    // Control: the same text inside the folder is read.
    writeFileSync(join(proj, 'key'), 'PRIVATE-KEY-prompt');
    rmSync(join(proj, 'AGENTS.md'));
    symlinkSync('key', join(proj, 'AGENTS.md'));
    expect(prompt(proj)).toContain('PRIVATE-KEY-prompt');
  });

  it('a FIFO named AGENTS.md is skipped at once, never blocked on', () => {
    const { proj } = project();
    execFileSync('mkfifo', [join(proj, 'AGENTS.md')]);
    expect(prompt(proj)).toBe('base');
  });
});
