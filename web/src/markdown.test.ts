import { describe, expect, it } from 'vitest';
import { marked } from './markdown.ts';

describe('fenced code in notes', () => {
  it('is highlighted in the shared languages and by their aliases; an unknown one stays plain', () => {
    const html = (lang: string, code: string) => marked.parse(`\`\`\`${lang}\n${code}\n\`\`\`\n`) as string;
    expect(html('ts', 'const x: number = 1;')).toContain('<span class="hljs-keyword">const</span>');
    expect(html('toml', 'key: 1')).toContain('hljs-attr');
    expect(html('console', 'echo hi')).toContain('hljs-built_in');
    // C is the terminal's only (src/cli/tui/hljs.js): the notes page leaves it out of its bundle.
    expect(html('c', 'int main(void) { return 0; }')).not.toContain('hljs-');
  });
});
