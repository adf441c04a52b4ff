// The first start in a folder the configuration does not cover asks once, as Codex does, whether
// to trust it. Yes adds the folder to allowed_paths_rw and the commands the project evidently
// needs to allowed_commands in rune.toml (edited in place, comments kept; a missing file is written
// from `rune init`'s commented template), everything shown before it is written. No is remembered
// in $RUNE_HOME/folders.json and the folder stays read-only. Nothing outside the folder is offered.
import { existsSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { makeDir } from '../core/make-dir.ts';
import { configFile, homeDir, isUnder, runeHome } from '../core/paths.ts';
import { paint } from './format.ts';
import { renderConfig } from './init.ts';
import { projectCommands } from './project-commands.ts';
import { applyConfig, withEntry } from './session-allow.ts';
import type { SessionContext } from './session-context.ts';

type Answers = Record<string, { trust: 'yes' | 'no'; at?: string }>;

function answersFile(env: NodeJS.ProcessEnv): string {
  return join(runeHome(env), 'folders.json');
}

function readAnswers(env: NodeJS.ProcessEnv): Answers {
  try {
    const value = JSON.parse(readFileSync(answersFile(env), 'utf8')) as unknown;
    return value && typeof value === 'object' ? (value as Answers) : {};
  } catch {
    return {};
  }
}

function remember(env: NodeJS.ProcessEnv, folder: string, trust: 'yes' | 'no'): void {
  const answers = { ...readAnswers(env), [folder]: { trust, at: new Date().toISOString() } };
  const file = answersFile(env);
  try {
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify(answers, null, 2)}\n`, { mode: 0o600 });
    renameSync(tmp, file);
  } catch {
    // Not remembered: the question comes again next time, nothing worse.
  }
}

/** What the folder's top holds, for the command detection (small files only). */
function projectFiles(folder: string): Parameters<typeof projectCommands>[0] {
  const list = (dir: string): string[] => {
    try {
      return readdirSync(dir).slice(0, 2000);
    } catch {
      return [];
    }
  };
  const names = list(folder);
  const testDir = names.includes('tests') ? 'tests' : names.includes('test') ? 'test' : undefined;
  return {
    names,
    testNames: testDir ? list(join(folder, testDir)) : [],
    read: (name) => {
      try {
        const text = readFileSync(join(folder, name), 'utf8');
        return text.length > 256 * 1024 ? undefined : text;
      } catch {
        return undefined;
      }
    },
  };
}

/** Whether the question is asked: a terminal, no answer yet, and a folder the lists do not make writable. */
function shouldAsk(session: SessionContext): boolean {
  const { setup, state } = session;
  const { cwd, env } = setup;
  if (setup.flags.yes || state.mode === 'unrestricted') return false;
  // The home folder, the root, and rune's own folder are never offered whole.
  if (cwd === '/' || cwd === homeDir(env) || isUnder(cwd, runeHome(env))) return false;
  if (state.config.policy.allowed_paths_rw.some((path) => isUnder(cwd, path))) return false;
  return readAnswers(env)[cwd] === undefined;
}

export async function firstRun(session: SessionContext): Promise<void> {
  if (!shouldAsk(session)) return;
  const { setup, style, write, terminal, state } = session;
  const { cwd, env } = setup;
  const file = configFile(env);
  const commands = projectCommands(projectFiles(cwd));
  write(`${paint(style, 'bold', `Do you trust the files in ${cwd}?`)}\n`);
  write(
    `  Until you do, rune reads here but writes nothing and runs only the commands rune.toml allows.\n  Yes adds to ${file}${existsSync(file) ? ' (comments kept)' : ' (a new file with every setting explained)'}:\n`,
  );
  write(`    allowed_paths_rw  += ${cwd}\n`);
  if (commands.length > 0) write(`    allowed_commands  += ${commands.join(', ')}\n`);
  const index = await terminal.choose({
    title: [paint(style, 'bold', 'Trust this folder?')],
    choices: [
      { label: 'Yes, let rune edit files here and run the commands above', key: 'y' },
      { label: 'No, keep it read-only (not asked again for this folder)', key: 'n' },
    ],
    initial: 0,
  });
  if (index !== 0) {
    if (index === 1) remember(env, cwd, 'no');
    write(`${paint(style, 'dim', 'kept read-only; /mode confirm asks before each change instead')}\n`);
    return;
  }
  try {
    if (!existsSync(file)) writeTemplate(file);
    const { addAllowlistEntry } = await import('../policy/persist.ts');
    let config = state.config;
    const entries = [
      { list: 'allowed_paths_rw' as const, value: cwd },
      ...commands.map((value) => ({ list: 'allowed_commands' as const, value })),
    ];
    for (const entry of entries) {
      addAllowlistEntry(file, entry.list, entry.value);
      config = withEntry(config, entry);
    }
    await applyConfig(session, config);
    remember(env, cwd, 'yes');
    write(`${paint(style, 'green', `saved in ${file}`)}\n`);
  } catch (error) {
    write(`${paint(style, 'red', `could not save the answer: ${(error as Error).message}`)}\n`);
  }
}

/** `rune init`'s commented template with no choices made, for a first start without a rune.toml. */
function writeTemplate(file: string): void {
  const text = renderConfig({ policyMode: 'allowlist', allowedCommands: [], allowedDomains: [] });
  makeDir(dirname(file));
  writeFileSync(file, text, { mode: 0o600, flag: 'wx' });
}
