// What was written to an endpoint, as the arguments of a tool call: a JSON object as a model sends
// it, or, for a tool with one required text argument (read_file's path, execute_cmd's cmd), the
// text itself. Pure: the call's own checks (the tool's schema) come after, as for a model's call.

/** Most bytes one call may be given; a larger write fails with EFBIG. */
export const MAX_INPUT_BYTES = 1024 * 1024;

/** The argument that plain text fills: the only required property, when it is a string. */
export function plainArgument(parameters: Record<string, unknown>): string | undefined {
  const required = Array.isArray(parameters.required) ? (parameters.required as unknown[]) : [];
  if (required.length !== 1 || typeof required[0] !== 'string') return undefined;
  const properties = (parameters.properties ?? {}) as Record<string, { type?: unknown }>;
  return properties[required[0]]?.type === 'string' ? required[0] : undefined;
}

/**
 * The arguments text for the tool: JSON passes as written; other text fills the plain argument,
 * without the newline `echo` adds. A tool without a plain argument gets the text as it is, and the
 * call's JSON error says what is wrong with it.
 */
export function argumentsFrom(input: string, parameters: Record<string, unknown>): string {
  const trimmed = input.trim();
  if (trimmed === '' || trimmed.startsWith('{')) return trimmed;
  const name = plainArgument(parameters);
  if (name === undefined) return input;
  return JSON.stringify({ [name]: input.endsWith('\n') ? input.slice(0, -1) : input });
}
