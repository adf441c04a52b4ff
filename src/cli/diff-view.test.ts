import { describe, expect, it } from 'vitest';
import { renderDiff } from './diff-view.ts';

const DIFF = `--- a/calc.py
+++ b/calc.py
@@ -1,3 +1,3 @@
 def add(a, b):
-    return a - b
+    return a + b
 # end
@@ -10,2 +10,3 @@
 x = 1
+y = 2
 z = 3`;

describe('renderDiff', () => {
  it('shows the file with its counts and numbered lines', () => {
    const view = renderDiff(DIFF, { color: false });
    expect(view).toMatchObject({ added: 2, removed: 1, folded: 0 });
    expect(view.lines).toEqual([
      'calc.py +2 −1',
      '   1   def add(a, b):',
      '   2 -     return a - b',
      '   2 +     return a + b',
      '   3   # end',
      '       ⋮',
      '  10   x = 1',
      '  11 + y = 2',
      '  12   z = 3',
    ]);
  });

  it('folds a long diff with a hint, and colours additions and removals', () => {
    const view = renderDiff(DIFF, { color: true }, 3);
    expect(view.folded).toBe(5);
    expect(view.lines.at(-1)).toContain('5 more diff lines (/diff shows the whole change)');
    expect(view.lines[2]).toBe('  \x1b[31m 2 -     return a - b\x1b[39m');
  });

  it('never passes escape sequences of the file through', () => {
    const view = renderDiff('+++ b/x\n@@ -0,0 +1 @@\n+\x1b]52;c;AAAA\x07evil', { color: false });
    expect(view.lines.join('\n')).not.toContain('\x1b');
  });
});
