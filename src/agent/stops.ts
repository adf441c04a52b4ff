// How a model answer ended, and what the run does about it (docs/adr/0033-run-outcomes.md). An
// answer cut at the output token limit is continued — the model is asked to go on — at most
// MAX_CONTINUATIONS times in a row, then the run ends OutputLimit (exit 16) with what was written;
// a tool call cut there (or one the provider calls malformed) is never run, and the model is told;
// a refusal ends the run Refused (exit 17). Pure: the run loop does the pushing and the finishing.
import { RuneError } from '../core/errors.ts';
import type { ChatResponse } from '../providers/types.ts';

/** Continuations of one cut answer (so at most three model calls for it). */
export const MAX_CONTINUATIONS = 2;

/** What the run carries from one cut answer to the next request. */
export interface CutState {
  /** The text of the cut answers so far, continued by the next. */
  carried: string;
  /** Cut answers in a row. */
  cuts: number;
}

export const NO_CUT: CutState = Object.freeze({ carried: '', cuts: 0 });

export interface StopContext {
  /** The answer-now round: nothing can be continued. */
  lastStep: boolean;
  maxOutputTokens: number;
  /** How this user sets max_output_tokens (`--max-output-tokens`, `source.max_output_tokens`). */
  setting: string;
  /** The provider's name for messages (`Anthropic`). */
  provider: string;
}

export type StopAction =
  /** An answer or tool calls, as usual; `answer` is the whole answer when it is one. */
  | { kind: 'answer'; answer: string; state: CutState }
  /** Not run, not an answer: the model is told (`notice`) and asked again. */
  | { kind: 'again'; notice: string; state: CutState }
  | { kind: 'end'; status: 'OutputLimit' | 'Refused' | 'Error'; answer: string; error: RuneError };

export function judgeStop(response: ChatResponse, state: CutState, context: StopContext): StopAction {
  const detail = `${context.provider}: ${response.stopDetail ?? response.finishReason}`;
  const written = state.carried + response.content;
  if (response.finishReason === 'refusal') {
    return {
      kind: 'end',
      status: 'Refused',
      answer: written,
      error: new RuneError('MODEL_REFUSED', `the model refused to answer (${detail})`),
    };
  }
  if (response.finishReason !== 'length' && response.finishReason !== 'malformed_call') {
    return { kind: 'answer', answer: written, state: NO_CUT };
  }
  const cuts = state.cuts + 1;
  if (response.finishReason === 'malformed_call') {
    if (cuts > MAX_CONTINUATIONS || context.lastStep) {
      return {
        kind: 'end',
        status: 'Error',
        answer: written,
        error: new RuneError(
          'PROVIDER_ERROR',
          `the model's tool calls were malformed ${cuts} times in a row (${detail}); none was run`,
        ),
      };
    }
    return {
      kind: 'again',
      notice: `[rune] Your tool call was malformed (${detail}) and was not run. Make the call again, with arguments that match the tool's schema.`,
      state: { carried: '', cuts },
    };
  }
  if (cuts > MAX_CONTINUATIONS || context.lastStep) {
    const times = cuts > 1 ? `, ${cuts} times in a row` : '';
    return {
      kind: 'end',
      status: 'OutputLimit',
      answer: written,
      error: new RuneError(
        'OUTPUT_LIMIT',
        `the answer was cut at the output token limit (${context.setting} = ${context.maxOutputTokens}; ${detail})${times}; raise ${context.setting} or ask for less`,
      ),
    };
  }
  const limit = `the output token limit (${context.maxOutputTokens} tokens)`;
  if (response.toolCalls.length > 0) {
    // The last call's arguments are unfinished, and a call never runs on half its arguments: what
    // came before the call was not the answer either.
    const names = [...new Set(response.toolCalls.map((call) => call.name))].join(', ');
    return {
      kind: 'again',
      notice: `[rune] Your reply was cut off at ${limit} while it was writing a call to ${names}: the call was incomplete and nothing was run. Make the call again with shorter arguments (write a long file in several parts).`,
      state: { carried: '', cuts },
    };
  }
  return {
    kind: 'again',
    notice: `[rune] Your answer was cut off at ${limit}. Continue exactly where it stopped, without repeating what you already wrote.`,
    state: { carried: written, cuts },
  };
}
