// Secret values (API keys, tokens) registered once and scrubbed from every text rune writes out:
// logs, traces, error messages, session files. A registry is used so no writer needs to know which
// values are secret. Each mode is its own bundle with its own copy of this module, so the set lives
// in one process-wide slot: a secret the cli bundle registers is also scrubbed by main.ts's copy when
// an error escapes to it.
import { processSlot } from './process-slot.ts';

const secrets = processSlot('rune.secrets', () => new Set<string>());
const MIN_SECRET_LENGTH = 6;

/** Marks a value as secret for the rest of the process. Short values are ignored: they would redact ordinary words. */
export function registerSecret(value: string | undefined | null): void {
  if (!value || value.length < MIN_SECRET_LENGTH) return;
  secrets.add(value);
  // Also as it reads inside JSON text (a tool call's arguments, a trace) and inside a URL.
  for (const form of [JSON.stringify(value).slice(1, -1), encoded(value)]) {
    if (form && form !== value) secrets.add(form);
  }
}

function encoded(value: string): string | null {
  try {
    return encodeURIComponent(value);
  } catch {
    return null; // a lone surrogate: no URL carries it
  }
}

export function clearSecretsForTests(): void {
  secrets.clear();
}

/** Replaces every registered secret, and anything that looks like a well-known key format, with a marker. */
export function redact(text: string): string {
  let out = text;
  for (const secret of secrets) {
    if (out.includes(secret)) out = out.split(secret).join('[REDACTED]');
  }
  return out.replace(KEY_SHAPES, '[REDACTED]');
}

// Shapes of provider keys and tokens, caught even when nobody registered them.
const KEY_SHAPES =
  /\b(?:sk-(?:ant-|or-|proj-)?[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|AIza[0-9A-Za-z_-]{30,}|xox[abpr]-[A-Za-z0-9-]{10,})/g;

/** Deep-redacts a JSON-like value: strings are scrubbed, keys that name secrets lose their value. */
export function redactValue(value: unknown): unknown {
  if (typeof value === 'string') return redact(value);
  if (Array.isArray(value)) return value.map(redactValue);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value)) {
      out[key] =
        SECRET_KEY_NAME.test(key) && typeof inner === 'string' && inner ? '[REDACTED]' : redactValue(inner);
    }
    return out;
  }
  return value;
}

const SECRET_KEY_NAME = /(?:api[_-]?key|secret|token|password|authorization)$/i;
