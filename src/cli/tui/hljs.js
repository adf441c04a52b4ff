// highlight.js with the languages the terminal highlights: the ones the notes page has too
// (src/core/hljs-languages.js), and C, C++ and Java. Plain JavaScript with its types in hljs.d.ts:
// the package's own types reference the DOM library, which would change Node's types (fetch's) for
// the whole project if TypeScript resolved them.
import hljs from 'highlight.js/lib/core';
import c from 'highlight.js/lib/languages/c';
import cpp from 'highlight.js/lib/languages/cpp';
import java from 'highlight.js/lib/languages/java';
import { registerLanguages } from '../../core/hljs-languages.js';

registerLanguages(hljs, { c, cpp, java }, { cpp: ['h', 'cc', 'hpp', 'c++'] });

export { hljs };
