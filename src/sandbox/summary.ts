// What the sandbox layers mean for the people and the model around a run, as text: the summary a
// build log or a terminal shows once, the note a tool result carries when layers were skipped, and
// the error of strict mode. Pure: it reads only the layer reports it is given.
import { RuneError } from '../core/errors.ts';
import type { LayerReport } from './types.ts';

export function skippedLayers(layers: readonly LayerReport[]): LayerReport[] {
  return layers.filter((layer) => !layer.applied);
}

/**
 * The layers in force on one line, then one line per skipped layer with its cause: an operator
 * reading the build log learns what actually confines the tools, never only that "some" are missing.
 */
export function formatLayerSummary(layers: readonly LayerReport[]): string[] {
  const applied = layers.filter((layer) => layer.applied);
  const lines = [
    applied.length > 0
      ? `sandbox layers in force: ${applied.map((layer) => `${layer.layer} (${layer.detail})`).join('; ')}`
      : 'sandbox layers in force: none',
  ];
  for (const layer of skippedLayers(layers))
    lines.push(`sandbox layer SKIPPED: ${layer.layer}: ${layer.detail}`);
  return lines;
}

/**
 * Appended to a tool result that ran with layers missing, so the model does not take the sandbox
 * for granted either (a command that reached the network did so because a layer was absent). The
 * causes are for people (the summary); the model gets the names and what they mean for it.
 */
export function skippedLayersNote(layers: readonly LayerReport[] | undefined): string | undefined {
  const skipped = skippedLayers(layers ?? []);
  if (skipped.length === 0) return undefined;
  if (skipped.length === (layers ?? []).length) {
    return `[sandbox: this ran without any sandbox layer (${skipped[0]!.detail})]`;
  }
  const names = skipped.map((layer) => layer.layer);
  const list =
    names.length > 1 ? `${names.slice(0, -1).join(', ')} and ${names.at(-1)} layers` : `${names[0]} layer`;
  return `[sandbox: this ran without the ${list}, which this machine does not offer; the other layers applied]`;
}

/**
 * Strict mode's refusal, raised before anything runs (no model call, no tool): every missing layer
 * with its cause, in the message itself, since some callers keep only the message. `setting` names
 * how this user chose strict mode (`--sandbox`, `source.sandbox.mode`).
 */
export function strictModeError(layers: readonly LayerReport[], setting: string): RuneError | undefined {
  const missing = skippedLayers(layers);
  if (missing.length === 0) return undefined;
  const lines = missing.map((layer) => `  ${layer.layer}: ${layer.detail}`);
  const auto = setting.startsWith('--') ? `pass ${setting} auto` : `set ${setting} to auto`;
  return new RuneError(
    'SANDBOX_SETUP',
    `${setting} is strict, but ${missing.length} sandbox layer${missing.length > 1 ? 's are' : ' is'} missing here (${missing.map((layer) => layer.layer).join(', ')}), so nothing was run:\n${lines.join('\n')}\n  Run where these layers are available, or ${auto} to run with the layers there are.`,
  );
}
