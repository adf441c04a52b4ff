// What a step hands back and what `out` runs, shared by the protocol and both resource kinds
// (stateless, store) apart from them, so neither imports the protocol that dispatches to it.
import type { Version } from './schema.ts';

export type Metadata = { name: string; value: string }[];

/** The JSON a step prints: its version and the metadata Concourse shows. */
export interface StepOutput {
  version: Version;
  metadata: Metadata;
}

/** The put's prompt and where it runs. */
export interface OutPrompt {
  prompt: string;
  /** What the build page calls the prompt: params.prompt_file's path, else the prompt's first line. */
  name: string;
  cwd: string;
  systemPrompt?: string;
  appendSystemPrompt?: string;
  readPaths: string[];
}
