// Where rune keeps its files. RUNE_HOME moves the whole folder; nothing else decides these paths.
import { homedir } from 'node:os';
import { join } from 'node:path';

export interface PathEnv {
  RUNE_HOME?: string | undefined;
  HOME?: string | undefined;
}

export function runeHome(env: PathEnv = process.env): string {
  if (env.RUNE_HOME) return env.RUNE_HOME;
  return join(env.HOME || homedir(), '.rune');
}

export function configFile(env: PathEnv = process.env): string {
  return join(runeHome(env), 'rune.toml');
}

export function cacheDir(env: PathEnv = process.env): string {
  return join(runeHome(env), 'cache');
}
