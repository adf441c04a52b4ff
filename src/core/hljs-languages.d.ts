// The part of highlight.js's API that hljs-languages.js uses (see there for why it is declared here).
export interface LanguageRegistry {
  registerLanguage(name: string, language: never): void;
  registerAliases(aliases: string[], options: { languageName: string }): void;
}
export function registerLanguages<T extends LanguageRegistry>(
  hljs: T,
  more?: Record<string, unknown>,
  moreAliases?: Record<string, string[]>,
): T;
