// How a run ends says how the model's answer ended (docs/adr/0033-run-outcomes.md), through the
// built binary in pipe mode, on each of the four wires against a server speaking its exact stream
// format: the end, the token limit with text (continued, and not finished), the token limit inside
// a tool call, a refusal, no end event, an error event — the status, the exit code and the message.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { useMockLlm } from '../helpers/mock-llm.ts';
import { cleanEnv, requireBinary, runRune, tempDir } from '../helpers/rune.ts';
import {
  END_WORDS,
  LENGTH_WORDS,
  REFUSAL_WORDS,
  WIRE_LABELS,
  WIRES,
  type Wire,
  wireSetup,
} from '../helpers/wires.ts';

const mock = useMockLlm();

beforeAll(() => {
  requireBinary();
});

/** One pipe-mode run on `wire`, its working folder writable (so a call that ran would leave a file). */
async function run(wire: Wire, args: string[]) {
  const home = tempDir('rune-outcomes-home-');
  const runeHome = join(home, '.rune');
  mkdirSync(runeHome, { recursive: true, mode: 0o700 });
  const cwd = tempDir('rune-outcomes-cwd-');
  writeFileSync(join(runeHome, 'rune.toml'), `[policy]\nallowed_paths_rw = [${JSON.stringify(cwd)}]\n`);
  const { key, baseUrl, env } = wireSetup(wire, mock);
  const result = await runRune(
    ['--model', 'm', '--api-key', key, ...(baseUrl ? ['--base-url', baseUrl] : []), ...args, 'do it'],
    { cwd, env: { ...cleanEnv(home), RUNE_HOME: runeHome, ...env } },
  );
  const json = () => JSON.parse(result.stdout) as Record<string, unknown>;
  const events = () =>
    result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { ...result, cwd, json, events };
}

const lastUserMessage = (index: number): string => {
  const body = mock.requests[index]!.body;
  const text = JSON.stringify(body.messages ?? body.contents);
  return text;
};

describe.each(WIRES)('pipe mode on the %s wire', (wire) => {
  const label = WIRE_LABELS[wire];

  it('the end event: FinalAnswer, exit 0', async () => {
    mock.script([{ text: 'All done.' }]);
    const result = await run(wire, ['--json']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.json()).toMatchObject({ status: 'FinalAnswer', answer: 'All done.' });
  });

  it('the token limit with text: the model is asked to go on, and the answer comes back whole', async () => {
    mock.script([{ text: 'The first half, ', finishReason: 'length' }, { text: 'the second half.' }]);
    const result = await run(wire, ['--json']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.json()).toMatchObject({
      status: 'FinalAnswer',
      answer: 'The first half, the second half.',
    });
    expect(lastUserMessage(1)).toContain('Continue exactly where it stopped');
    expect(result.stderr).toContain(`the answer was cut; asking it again (1 of 2)`);
  });

  it('the token limit, still cut after going on: OutputLimit, exit 16, what was written', async () => {
    mock.setFallback({ text: 'and on ', finishReason: 'length' });
    const result = await run(wire, ['--json', '--max-output-tokens', '50']);
    expect(result.code, result.stderr).toBe(16);
    expect(result.json()).toMatchObject({
      status: 'OutputLimit',
      answer: 'and on and on and on ',
      error: { code: 'OUTPUT_LIMIT' },
    });
    expect(result.stderr).toContain(
      `rune: the answer was cut at the output token limit (--max-output-tokens = 50; ${label}: ${LENGTH_WORDS[wire]}), 3 times in a row; raise --max-output-tokens or ask for less`,
    );
    expect(mock.requests).toHaveLength(3);
  });

  it('the token limit inside a tool call: the call never runs, the model is told', async () => {
    mock.script([
      {
        text: 'Let me do that for you now.',
        toolCalls: [{ name: 'write_file', arguments: { path: 'proof.txt', content: 'x'.repeat(60) } }],
        finishReason: 'length',
      },
      { text: 'I could not write it.' },
    ]);
    const result = await run(wire, ['--json']);
    expect(result.code, result.stderr).toBe(0);
    // Gemini sends no call when it is cut inside one: to rune that is an answer cut, and continued.
    const answer =
      wire === 'gemini' ? 'Let me do that for you now.I could not write it.' : 'I could not write it.';
    expect(result.json()).toMatchObject({ status: 'FinalAnswer', answer, tool_calls: [] });
    expect(existsSync(join(result.cwd, 'proof.txt'))).toBe(false);
    expect(lastUserMessage(1)).toMatch(
      wire === 'gemini'
        ? /Your answer was cut off at the output token limit/
        : /call to write_file: the call was incomplete and nothing was run/,
    );
  });

  it('a refusal: Refused, exit 17, in the wire’s words', async () => {
    mock.script([{ text: 'I cannot help with that.', finishReason: 'refusal' }]);
    const result = await run(wire, ['--json']);
    expect(result.code, result.stderr).toBe(17);
    expect(result.json()).toMatchObject({
      status: 'Refused',
      answer: 'I cannot help with that.',
      error: { code: 'MODEL_REFUSED' },
    });
    expect(result.stderr).toContain(`rune: the model refused to answer (${label}: ${REFUSAL_WORDS[wire]})`);
  });

  it('no end event: retried like a dropped connection; shown already (ndjson), Error and exit 6', async () => {
    mock.script([{ text: 'Let me do that', omitEnd: true }, { text: 'The whole answer.' }]);
    const retried = await run(wire, ['--json']);
    expect(retried.code, retried.stderr).toBe(0);
    expect(retried.json()).toMatchObject({ status: 'FinalAnswer', answer: 'The whole answer.' });
    expect(mock.requests).toHaveLength(2);

    mock.reset();
    mock.script([{ text: 'Let me do that', omitEnd: true }, { text: 'never' }]);
    const shown = await run(wire, ['--output', 'ndjson']);
    expect(shown.code, shown.stderr).toBe(6);
    const end = shown.events().at(-1)!;
    expect(end).toMatchObject({ type: 'run_end', status: 'Error', error: { code: 'PROVIDER_ERROR' } });
    expect((end.error as { message: string }).message).toBe(
      `${label} failed: the answer stream ended without ${END_WORDS[wire]}: the connection was dropped or the server stopped mid-answer; the provider is failing or unreachable; try again later`,
    );
    expect(mock.requests).toHaveLength(1);
  });

  it('an error event: an overload is retried; a refused request is Error, exit 6', async () => {
    mock.script([{ text: 'Let me', errorEvent: { message: 'Overloaded' } }, { text: 'Second try.' }]);
    const retried = await run(wire, ['--json']);
    expect(retried.code, retried.stderr).toBe(0);
    expect(retried.json()).toMatchObject({ answer: 'Second try.' });

    mock.reset();
    mock.script([
      { errorEvent: { message: 'the request is bad', type: 'invalid_request_error', code: 400 } },
    ]);
    const failed = await run(wire, ['--json']);
    expect(failed.code, failed.stderr).toBe(6);
    expect(failed.json()).toMatchObject({ status: 'Error', error: { code: 'PROVIDER_ERROR' } });
    expect(failed.stderr).toMatch(
      new RegExp(`rune: ${label} failed: an error event in the answer stream: .*the request is bad`),
    );
  });
});
