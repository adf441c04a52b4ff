// Types of scripts/c-lint.mjs for its test.
export const MAX_LINES: number;
export function codeOnly(text: string): string;
export function functionsOf(text: string): { name: string; line: number; lines: number }[];
