// The C function-size rule of `npm run lint` (scripts/c-lint.mjs): what it counts as a function.
import { describe, expect, it } from 'vitest';
import { functionsOf, MAX_LINES } from './c-lint.mjs';

const body = (lines: number) =>
  Array.from({ length: lines }, () => '  n++; /* a { in a comment */').join('\n');

describe('the C function-size rule', () => {
  it('measures each function from its name to its closing brace', () => {
    const text = [
      '#define TABLE(X) \\',
      '  X(a, "{") \\',
      '  X(b, "}")',
      'static int n;',
      'static const char *brace = "}";',
      "int small(int a) { return a + '{'; }",
      'static void __attribute__((noreturn)) big(void) {',
      body(MAX_LINES),
      '}',
      'struct s { int x; } table[] = {{1}, {2}};',
    ].join('\n');
    expect(functionsOf(text)).toEqual([
      { name: 'small', line: 6, lines: 1 },
      { name: 'big', line: 7, lines: MAX_LINES + 2 },
    ]);
  });
});
