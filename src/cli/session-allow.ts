// Allowing what the allowlist blocked, from the session: a refusal names the entry that would
// allow it, and `/allow` shows exactly what it would add (and to which file) before anything is
// saved — to rune.toml with its comments kept, or for this session only. The new entry applies
// from the next tool call on.
import { dirname } from 'node:path';
import { deriveConfig } from '../config/load.ts';
import type { RuneConfig } from '../config/schema.ts';
import { configFile } from '../core/paths.ts';
import type { AllowlistSuggestion } from '../policy/types.ts';
import { paint, type Style } from './format.ts';
import { newPolicy, type SessionContext } from './session-context.ts';

/** The line under a refusal: how to allow it. */
export function allowHint(
  style: Style,
  suggestion: AllowlistSuggestion,
  session: Pick<SessionContext, 'setup'>,
): string {
  return paint(
    style,
    'dim',
    `to allow it: /allow (adds '${suggestion.value}' to ${suggestion.list} in ${configFile(session.setup.env)}, after asking)`,
  );
}

/** The config with `entry` added to its list (in memory). */
export function withEntry(config: RuneConfig, entry: AllowlistSuggestion): RuneConfig {
  const current = config.policy[entry.list];
  if (current.includes(entry.value)) return config;
  return deriveConfig(config, { policy: { ...config.policy, [entry.list]: [...current, entry.value] } });
}

/** Applies a new config to the session: a new gate sees the new lists (the session's grants stay). */
export async function applyConfig(session: SessionContext, config: RuneConfig): Promise<void> {
  const { state, setup } = session;
  state.config = config;
  state.policy = await newPolicy(setup, config, session.logger, session.confirmer, state.sessionId);
}

/** `/allow`: offers the entry that would have allowed the last refusal (or its folder), then adds it. */
export async function allowCommand(session: SessionContext): Promise<boolean> {
  const { state, style, write, terminal, setup } = session;
  const blocked = state.lastBlocked;
  if (!blocked) {
    write(
      'nothing was blocked in this session that an allowlist entry would allow; /policy shows the lists\n',
    );
    return true;
  }
  const file = configFile(setup.env);
  const entries: AllowlistSuggestion[] = [blocked.suggestion];
  const { list, value } = blocked.suggestion;
  if (list === 'allowed_files_rw' || list === 'allowed_files_ro')
    entries.push({
      list: list === 'allowed_files_rw' ? 'allowed_paths_rw' : 'allowed_paths_ro',
      value: dirname(value),
    });
  const choices = entries.flatMap((entry) => [
    {
      label: `Save '${entry.value}' in ${entry.list}`,
      detail: `(${file}, comments kept)`,
      entry,
      save: true,
    },
    { label: `Allow '${entry.value}' (${entry.list}) for this session only`, entry, save: false },
  ]);
  write(`${paint(style, 'bold', `${blocked.tool} was blocked.`)} Add an entry to the allowlist?\n`);
  const index = await terminal.choose({
    title: [paint(style, 'bold', 'Allow it from now on?')],
    choices: [
      ...choices.map(({ label, detail }) => ({ label, ...(detail ? { detail } : {}) })),
      { label: 'No', key: 'n' },
    ],
    initial: 0,
  });
  const chosen = index === undefined ? undefined : choices[index];
  if (!chosen) {
    write('nothing added\n');
    return true;
  }
  if (chosen.save) {
    try {
      const { addAllowlistEntry } = await import('../policy/persist.ts');
      addAllowlistEntry(file, chosen.entry.list, chosen.entry.value);
    } catch (error) {
      write(`${paint(style, 'red', `could not save it: ${(error as Error).message}`)}\n`);
      return true;
    }
  }
  await applyConfig(session, withEntry(state.config, chosen.entry));
  state.lastBlocked = undefined;
  write(
    `${paint(style, 'green', `added '${chosen.entry.value}' to ${chosen.entry.list}`)}${chosen.save ? ` in ${file}` : ' for this session'}; ask the model to try again\n`,
  );
  return true;
}
