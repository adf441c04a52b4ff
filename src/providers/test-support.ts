// Shared by the provider tests: a config as loadConfig would produce it, and a logger that keeps lines.
import { DEFAULTS, type RuneConfig } from '../config/schema.ts';
import { createLogger, type Logger } from '../core/logger.ts';

export function testConfig(overrides: Partial<RuneConfig> = {}): RuneConfig {
  return { ...DEFAULTS, mcp: [], ...overrides } as RuneConfig;
}

export function memoryLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const logger = createLogger({ verbose: true, write: (line) => lines.push(line) });
  return Object.assign(logger, { lines });
}
