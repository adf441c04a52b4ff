// highlight.js is loaded in the background when the session starts: the first answer with code
// is highlighted once it is there, and nothing waits for it.
type Highlight = (code: string, language: string) => string[] | undefined;

let loaded: Highlight | undefined;
let loading: Promise<void> | undefined;

export function loadHighlighter(): Promise<void> {
  loading ??= import('./highlight.ts')
    .then((module) => {
      loaded = module.highlightCode;
    })
    .catch(() => {
      // Without it code is shown plain.
    });
  return loading;
}

/** The highlighter, once loaded. */
export function highlighter(): Highlight | undefined {
  return loaded;
}
