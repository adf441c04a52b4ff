// `rune [prompt...]`: chooses pipe mode or the interactive session. Pipe mode is the cli bundle's
// main path; the session is a dynamic import, so it lives in the cli's lazy chunk
// (docs/adr/0029-cli-lazy-chunk.md). The setup (agent.ts) is shared, so neither imports its caller.
import { RuneError } from '../core/errors.ts';
import { joinPrompt, readStdin, setupAgent, splitResume, stdinIsTerminal } from './agent.ts';
import type { AgentFlags } from './flags.ts';
import { runPipe } from './pipe.ts';
import { copyForFolder, findSession } from './sessions.ts';

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
  if (setup.resumePick) setup.resumed = findSession(setup.env, 'last', setup.cwd);
  if (setup.resumed && setup.resumed.cwd !== setup.cwd) {
    // Nobody can be asked: the other folder's session is left as it is, and a copy continues here.
    setup.logger.warn('cli.resume_copy', {
      message: `session ${setup.resumed.id.slice(0, 8)} belongs to ${setup.resumed.cwd}; continuing a copy of it in ${setup.cwd} (the original stays)`,
    });
    setup.resumed = copyForFolder(setup.resumed, setup.cwd);
  }
  return runPipe(setup, prompt);
}
