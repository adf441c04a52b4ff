// The part of highlight.js's API that highlight.ts uses (see hljs.js for why it is declared here).
export interface Highlighter {
  getLanguage(name: string): unknown;
  highlight(code: string, options: { language: string; ignoreIllegals?: boolean }): { value: string };
}
export const hljs: Highlighter;
