// `rune [prompt...]`: chooses pipe mode or the interactive session and loads only that one. Apart
// from the setup (agent.ts), which both modes import, so neither imports its own caller.
import { RuneError } from '../core/errors.ts';
import { joinPrompt, readStdin, setupAgent, splitResume, stdinIsTerminal } from './agent.ts';
import type { AgentFlags } from './flags.ts';

/** `rune [prompt...]`: pipe mode when there is a prompt or a piped stdin, else the interactive session. */
export async function agentAction(givenPrompt: string[], givenFlags: AgentFlags): Promise<number> {
  const { promptArgs, flags } = splitResume(givenPrompt, givenFlags);
  const setup = setupAgent(flags);
  const stdinIsTty = stdinIsTerminal();
  const piped = stdinIsTty ? undefined : await readStdin();
  const prompt = joinPrompt(promptArgs, piped);
  if (!prompt) {
    if (!stdinIsTty) {
      throw new RuneError('USAGE', 'no prompt: give one as arguments or on stdin (`echo "task" | rune`)');
    }
    if (flags.json || flags.output === 'ndjson') {
      // Machine output is for one run; the session would silently print text instead.
      throw new RuneError(
        'USAGE',
        `${flags.json ? '--json' : '--output ndjson'} needs a prompt: rune ${flags.json ? '--json' : '--output ndjson'} "task" (or pipe one in); the interactive session prints text`,
      );
    }
    // Found now, not after the first prompt typed (pipe mode stops at the same check).
    if (!setup.config.model) {
      throw new RuneError(
        'USAGE',
        'no model is set: pass --model, set RUNE_MODEL, or model in rune.toml (`rune init` writes one)',
      );
    }
    const { runSession } = await import('./session.ts');
    return runSession(setup);
  }
  const { runPipe } = await import('./pipe.ts');
  return runPipe(setup, prompt);
}
