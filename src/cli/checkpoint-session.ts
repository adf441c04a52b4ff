// The checkpoints of a CLI session (the interactive one, or a pipe run with --checkpoint): the
// store is opened when the first turn begins (and again for a new session id after /reset), each
// turn begins and ends with it, and the conversation as it stood before each turn is kept in
// memory for /undo. A store that cannot be opened is reported once; the session goes on without.
import type { Checkpoints } from '../agent/checkpoints/recorder.ts';
import { grantScope } from '../agent/checkpoints/scope.ts';
import type { CallCheckpointer } from '../agent/types.ts';
import type { Logger } from '../core/logger.ts';
import { absolutePath, homeDir } from '../core/paths.ts';
import { protectedPathsFor } from '../policy/gate.ts';
import type { ChatMessage } from '../providers/types.ts';
import type { AgentSetup } from './agent.ts';

export class SessionCheckpoints {
  readonly #setup: AgentSetup;
  readonly #logger: Logger;
  #recorder: Checkpoints | undefined;
  /** The conversation before each turn of this process, by turn number. */
  readonly turnStarts = new Map<number, ChatMessage[]>();

  constructor(setup: AgentSetup, logger: Logger) {
    this.#setup = setup;
    this.#logger = logger;
  }

  /** Whether this session records checkpoints: the config (interactive) or --checkpoint. */
  static wanted(setup: AgentSetup, interactive: boolean): boolean {
    if (setup.flags.checkpoint) return true;
    return interactive && setup.config.checkpoints.enabled;
  }

  /** The open recorder, when there is one. */
  get recorder(): Checkpoints | undefined {
    return this.#recorder;
  }

  /** Begins a turn of `sessionId`; the run's checkpointer, or undefined when none could be opened. */
  async begin(
    sessionId: string,
    prompt: string,
    messages: ChatMessage[],
  ): Promise<CallCheckpointer | undefined> {
    if (this.#recorder?.sessionId !== sessionId) {
      await this.close();
      this.#recorder = await this.#open(sessionId);
    }
    if (!this.#recorder) return undefined;
    this.turnStarts.set(this.#recorder.beginTurn(prompt, messages), messages);
    this.#warm(this.#recorder);
    return this.#recorder;
  }

  /**
   * The turn's records go to disk (fdatasync) in the background: the prompt does not wait for the
   * disk. close() waits for it.
   */
  end(): void {
    void this.#recorder?.endTurn();
  }

  async close(): Promise<void> {
    const recorder = this.#recorder;
    this.#recorder = undefined;
    this.turnStarts.clear();
    await recorder?.close();
  }

  /** The first look at the folders the run may write begins while the model thinks. */
  #warm(recorder: Checkpoints): void {
    const { config, cwd, env } = this.#setup;
    const home = homeDir(env);
    const granted = [...config.policy.allowed_paths_rw, ...config.policy.allowed_files_rw].map((path) =>
      absolutePath(path, cwd, home),
    );
    recorder.warm(grantScope(granted).roots, protectedPathsFor(config, cwd, env));
  }

  async #open(sessionId: string): Promise<Checkpoints | undefined> {
    try {
      // Loaded on first use: a session that never writes does not pay for it (ADR 0029).
      const { Checkpoints } = await import('../agent/checkpoints/recorder.ts');
      const { env, cwd, config } = this.#setup;
      const protectedPaths = protectedPathsFor(config, cwd, env);
      return new Checkpoints({ env, sessionId, cwd, config, logger: this.#logger, protectedPaths });
    } catch (error) {
      this.#logger.warn('cli.checkpoints_off', {
        message: `checkpoints are off for this session: ${(error as Error).message}`,
      });
      return undefined;
    }
  }
}
