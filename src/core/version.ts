// The version string, injected by the build (esbuild `define`); falls back to package.json's for tests.
declare const __RUNE_VERSION__: string | undefined;

export const VERSION: string = typeof __RUNE_VERSION__ === 'string' ? __RUNE_VERSION__ : '0.0.0-dev';
