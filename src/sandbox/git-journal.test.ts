import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Logger } from '../core/logger.ts';
import { GitJournal, type LeftJournal } from './git-journal.ts';
import { tempRoot } from './test-git.ts';

const logger = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} } as unknown as Logger;
const state = {
  roots: ['/r'],
  repos: ['/r/.git'],
  baseline: [['/r/.git/config', 'x']] as Array<[string, string]>,
};

describe('GitJournal', () => {
  it('writes this process journal and removes it', () => {
    const dir = tempRoot('rune-gitguard-state-');
    const journal = new GitJournal(logger, dir);
    journal.write(state);
    const file = join(dir, `git-guard-${process.pid}.json`);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ pid: process.pid, ...state });
    journal.remove();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('keeps nothing without a folder', () => {
    const journal = new GitJournal(logger, undefined);
    journal.write(state);
    journal.remove();
    const judged: unknown[] = [];
    journal.recover(['/r'], (left) => judged.push(left));
    expect(judged).toEqual([]);
  });

  // Whose journal, over which roots: judged (and deleted) only when its rune is gone and a root is ours.
  const dead = spawnSync('/bin/true').pid as number;
  it.each([
    ['a dead rune over our root', dead, ['/r', '/other'], ['/r'], true],
    ['a dead rune over other roots', dead, ['/other'], [], false],
    ['a rune still running', process.ppid, ['/r'], [], false],
    ['this rune', process.pid, ['/r'], [], false],
  ])('%s', (_name, pid, roots, mine, judged) => {
    const dir = tempRoot('rune-gitguard-state-');
    const file = join(dir, `git-guard-${pid}.json`);
    writeFileSync(file, JSON.stringify({ ...state, pid, roots }));
    const seen: Array<[LeftJournal, string[]]> = [];
    new GitJournal(logger, dir).recover(['/r'], (left, ours) => seen.push([left, ours]));
    expect(seen).toEqual(judged ? [[{ ...state, pid, roots }, mine]] : []);
    expect(readdirSync(dir)).toEqual(judged ? [] : [`git-guard-${pid}.json`]);
  });
});
