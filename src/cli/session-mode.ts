// Changing the policy mode inside the session (Shift+Tab cycles allowlist and confirm; `/mode`
// names any mode). A project's .rune/rune.toml may keep a stricter mode, which wins, as it does at
// start; the prompt shows the mode in force.
import { deriveConfig } from '../config/load.ts';
import { POLICY_MODES, type PolicyMode } from '../config/schema.ts';
import { narrowMode } from '../policy/narrow.ts';
import { readProjectPolicy } from '../policy/project.ts';
import { type Paint, paint, type Style } from './format.ts';
import { applyConfig } from './session-allow.ts';
import type { SessionContext } from './session-context.ts';

export const MODE_COLOUR: Record<PolicyMode, Paint> = {
  allowlist: 'cyan',
  confirm: 'yellow',
  unrestricted: 'red',
};

/** The prompt: the mode in force, then the marker. */
export function promptText(style: Style, mode: PolicyMode): string {
  return `${paint(style, MODE_COLOUR[mode], mode)} ${paint(style, 'cyan', '›')} `;
}

/** Sets the mode for the rest of the session; says what it means, or why it did not change. */
export async function setMode(session: SessionContext, wanted: PolicyMode): Promise<void> {
  const { state, setup, write, style } = session;
  const project = readProjectPolicy(setup.cwd, session.logger);
  const mode = narrowMode(wanted, project?.mode);
  if (mode !== wanted) {
    write(`${paint(style, 'yellow', `the project's .rune/rune.toml keeps the mode ${mode}`)}\n`);
    return;
  }
  if (setup.flags.yes && mode !== 'unrestricted') {
    write(
      `${paint(style, 'dim', 'note: --yes approves what confirm mode would ask, so nothing is asked in this session')}\n`,
    );
  }
  await applyConfig(session, deriveConfig(state.config, { policy: { ...state.config.policy, mode } }));
  state.mode = mode;
  const meaning: Record<PolicyMode, string> = {
    allowlist: 'what the lists do not cover is blocked, with how to allow it',
    confirm: 'what the lists do not cover is asked about',
    unrestricted: 'no policy checks; the sandbox still applies',
  };
  write(
    `${paint(style, MODE_COLOUR[mode], `policy mode: ${mode}`)} ${paint(style, 'dim', `(${meaning[mode]})`)}\n`,
  );
}

/** Shift+Tab: allowlist ⇄ confirm (unrestricted only by name, with /mode). */
export function nextMode(mode: PolicyMode): PolicyMode {
  return mode === 'allowlist' ? 'confirm' : 'allowlist';
}

/** `/mode [NAME]`. */
export async function modeCommand(session: SessionContext, arg: string): Promise<boolean> {
  if (!arg) {
    session.write(
      `policy mode: ${session.state.mode} (Shift+Tab switches allowlist and confirm; /mode ${POLICY_MODES.join('|')})\n`,
    );
    return true;
  }
  if (!(POLICY_MODES as readonly string[]).includes(arg)) {
    session.write(`unknown mode "${arg}": one of ${POLICY_MODES.join(', ')}\n`);
    return true;
  }
  await setMode(session, arg as PolicyMode);
  return true;
}
