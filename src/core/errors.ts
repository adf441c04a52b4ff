// The one error class of rune: a string code that names the failure class, mapped once to an exit code.
// Third-party errors are wrapped at the boundary with `cause`, so nothing else needs to know their shapes.

/** Every error class rune can end with, and the process exit code each maps to. Documented in docs/exit-codes.md. */
export const EXIT_CODES = {
  /** A bug: something rune did not expect. */
  INTERNAL: 1,
  /** Bad command-line flags or arguments, or bad input on stdin. */
  USAGE: 2,
  /** A configuration file or RUNE_* variable is invalid. */
  CONFIG_INVALID: 3,
  /** The run hit --max-steps without a final answer. */
  MAX_STEPS: 4,
  /** The run used up --token-budget without a final answer. */
  TOKEN_BUDGET: 5,
  /** The model provider failed: network, server errors after retries, malformed responses. */
  PROVIDER_ERROR: 6,
  /** The provider refused the credentials (401/403), or none were given. */
  PROVIDER_AUTH: 7,
  /** A sandbox layer required by --sandbox strict is missing, or setting a layer up failed. */
  SANDBOX_SETUP: 8,
  /** A hidden sandbox subcommand is not available in this build or on this kernel. */
  SANDBOX_UNAVAILABLE: 9,
  /** The whole-run timeout (--timeout / timeout_secs) expired. */
  RUN_TIMEOUT: 10,
  /** A required MCP server could not be started. */
  MCP_REQUIRED: 11,
  /** A file or folder rune needs could not be read or written. */
  IO: 12,
  /** Something asked for (a session, a note, a version) does not exist. */
  NOT_FOUND: 13,
  /** The OAuth login to a remote MCP server failed (`rune mcp login`). */
  MCP_AUTH: 14,
  /** `rune mount`: FUSE cannot be used here (libfuse 3, /dev/fuse or fusermount3 missing, or the mount refused). */
  FUSE_UNAVAILABLE: 15,
  /** The answer was cut at the output token limit (max_output_tokens), and going on did not finish it. */
  OUTPUT_LIMIT: 16,
  /** The model, or the provider's filter, refused to answer. */
  MODEL_REFUSED: 17,
  /** `rune notes`: another server holds the data folder (its pid is named). */
  DATA_LOCKED: 18,
  /** The user interrupted the run (Ctrl-C). 128 + SIGINT, as shells do. */
  INTERRUPTED: 130,
  /** rune was asked to stop (SIGTERM). 128 + SIGTERM. */
  TERMINATED: 143,
} as const;

export type ErrorCode = keyof typeof EXIT_CODES;

export function exitCodeFor(code: ErrorCode): number {
  return EXIT_CODES[code];
}

// Mode bundles are compiled separately, so `instanceof` cannot be trusted across them; a registered
// symbol brands every RuneError instead.
const BRAND = Symbol.for('rune.error');

export interface RuneErrorOptions {
  cause?: unknown;
  /** Extra lines shown under the message (hints, a list of problems). */
  details?: readonly string[];
}

export class RuneError extends Error {
  readonly code: ErrorCode;
  readonly details: readonly string[];

  constructor(code: ErrorCode, message: string, options: RuneErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'RuneError';
    this.code = code;
    this.details = options.details ?? [];
    Object.defineProperty(this, BRAND, { value: true, enumerable: false });
  }

  get exitCode(): number {
    return exitCodeFor(this.code);
  }
}

export function isRuneError(value: unknown): value is RuneError {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
}

/** Turns anything thrown into a RuneError, keeping the original as `cause`. */
export function toRuneError(value: unknown, fallback: ErrorCode = 'INTERNAL'): RuneError {
  if (isRuneError(value)) return value;
  const message = value instanceof Error ? value.message : String(value);
  return new RuneError(fallback, message, { cause: value });
}

/** The text a person sees for an error: the message, then its detail lines. */
export function formatError(error: RuneError): string {
  const lines = [`rune: ${error.message}`];
  for (const detail of error.details) lines.push(`  ${detail}`);
  return lines.join('\n');
}
