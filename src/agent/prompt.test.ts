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

describe('system_prompt_file', () => {
  const fromFile = (cwd: string, file: string) =>
    buildSystemPrompt({ config: { system_prompt_file: file }, cwd });
  const refusal = (cwd: string, file: string) => {
    try {
      fromFile(cwd, file);
    } catch (error) {
      return error as { code: string; message: string };
    }
    throw new Error('not refused');
  };

  it('reads a regular file inside the working folder, and one through a link that stays inside', () => {
    const { proj } = project();
    writeFileSync(join(proj, 'prompt.md'), 'You review code.');
    expect(fromFile(proj, 'prompt.md')).toBe('You review code.');
    symlinkSync('prompt.md', join(proj, 'linked.md'));
    expect(fromFile(proj, 'linked.md')).toBe('You review code.');
  });

  it('refuses a relative path whose link leads out of the working folder (a key would go to the provider)', () => {
    const { base, proj } = project();
    writeFileSync(join(base, 'id_rsa'), 'PRIVATE-KEY-prompt-file');
    symlinkSync(join(base, 'id_rsa'), join(proj, 'prompt.md'));
    const error = refusal(proj, 'prompt.md');
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.message).toContain('system_prompt_file');
    expect(error.message).toContain('leads out of the working folder');
    expect(error.message).not.toContain('PRIVATE-KEY');
    expect(refusal(proj, '../id_rsa').code).toBe('CONFIG_INVALID');
  });

  it('refuses a FIFO at once, relative or absolute, never blocking', () => {
    const { base, proj } = project();
    execFileSync('mkfifo', [join(proj, 'prompt.md')]);
    expect(refusal(proj, 'prompt.md').message).toMatch(
      /system_prompt_file.*it is a FIFO, not a regular file/,
    );
    execFileSync('mkfifo', [join(base, 'outside.fifo')]);
    expect(refusal(proj, join(base, 'outside.fifo')).code).toBe('CONFIG_INVALID');
  });

  it('refuses a folder', () => {
    const { proj } = project();
    mkdirSync(join(proj, 'prompts'));
    expect(refusal(proj, 'prompts').message).toContain('it is a folder, not a regular file');
    expect(refusal(proj, join(proj, 'prompts')).code).toBe('CONFIG_INVALID');
  });

  it('an absolute path the person configured may be a link (a dotfile manager), to a regular file', () => {
    const { base, proj } = project();
    writeFileSync(join(base, 'real-prompt.md'), 'From the dotfiles.');
    symlinkSync(join(base, 'real-prompt.md'), join(base, 'prompt.md'));
    expect(fromFile(proj, join(base, 'prompt.md'))).toBe('From the dotfiles.');
  });

  it('a missing file is an IO error naming the setting', () => {
    const { proj } = project();
    const error = refusal(proj, 'nope.md');
    expect(error.code).toBe('IO');
    expect(error.message).toContain('system_prompt_file');
    expect(error.message).toContain('ENOENT');
  });
});
