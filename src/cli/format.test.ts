import { describe, expect, it } from 'vitest';
import { fitLine, formatArguments, formatLayers, lineWidth, paint, styleFor, ToolLine } from './format.ts';

describe('tool lines', () => {
  it('renders call, decision, result and layers on one plain line without escape codes', () => {
    const line = new ToolLine({ color: false });
    line.start({ type: 'tool_call', id: '1', name: 'execute_cmd', arguments: '{"cmd":"ls -la"}' });
    line.decide({
      type: 'policy_decision',
      id: '1',
      name: 'execute_cmd',
      decision: { kind: 'allow', rule: 'commands' },
    });
    const text = line.finish({
      type: 'tool_result',
      id: '1',
      name: 'execute_cmd',
      isError: false,
      content: 'exit code: 0\nstdout:\nfile',
      layers: [
        { layer: 'landlock', applied: true, detail: 'ABI 7' },
        { layer: 'seccomp', applied: false, detail: 'missing' },
      ],
    });
    expect(text).toBe(
      '> execute_cmd cmd="ls -la" | allowed (commands) | ok: exit code: 0 stdout: file | sandbox: landlock',
    );
    expect(text).not.toMatch(/\x1b/);
  });

  it('shows a blocked call with its reason and no result', () => {
    const line = new ToolLine({ color: false });
    line.start({ type: 'tool_call', id: '2', name: 'fetch_url', arguments: '{"url":"http://x"}' });
    line.decide({
      type: 'policy_decision',
      id: '2',
      name: 'fetch_url',
      decision: { kind: 'deny', reason: 'x is not in allowed_domains', rule: 'domains' },
    });
    const text = line.finish({
      type: 'tool_result',
      id: '2',
      name: 'fetch_url',
      isError: true,
      content: 'blocked',
    });
    expect(text).toBe('> fetch_url url="http://x" | blocked (domains): x is not in allowed_domains');
  });

  it('uses colour only on a terminal without NO_COLOR', () => {
    expect(styleFor({ isTTY: true }, {}).color).toBe(true);
    expect(styleFor({ isTTY: true }, { NO_COLOR: '1' }).color).toBe(false);
    expect(styleFor({ isTTY: false }, {}).color).toBe(false);
    expect(formatLayers([])).toBe('sandbox: no layers applied');
    expect(formatArguments('not json')).toBe('not json');
  });
});

describe('streamed text', () => {
  it('never shows a key that arrives split across deltas', async () => {
    const { StreamRedactor } = await import('./stream-redactor.ts');
    const { registerSecret } = await import('../core/redact.ts');
    const key = 'sk-test-stream-1234567890abcdefgh';
    registerSecret(key);
    const scrub = new StreamRedactor();
    let shown = '';
    for (const delta of ['your key is sk-te', 'st-stream-12345', '67890abcdefgh and', ' more'])
      shown += scrub.push(delta);
    shown += scrub.flush();
    expect(shown).toBe('your key is [REDACTED] and more');
  });
});

describe('fitting lines to the terminal', () => {
  const long = `> execute_cmd cmd="${'x'.repeat(200)}" | allowed (commands) | ok: done`;

  it('cuts to the columns of a terminal, with an ellipsis', () => {
    const width = lineWidth({ isTTY: true, columns: 40 });
    expect(width).toBe(40);
    const cut = fitLine(long, width);
    expect([...cut]).toHaveLength(40);
    expect(cut.endsWith('…')).toBe(true);
    expect(cut.startsWith('> execute_cmd cmd="xxx')).toBe(true);
    expect(fitLine('short', width)).toBe('short');
  });

  it('never cuts when not writing to a terminal', () => {
    expect(lineWidth({ isTTY: false, columns: 40 })).toBeUndefined();
    expect(lineWidth({})).toBeUndefined();
    expect(fitLine(long, lineWidth({ columns: 40 }))).toBe(long);
  });

  it('does not count colour codes and keeps them all, so no colour stays on', () => {
    const style = { color: true };
    const line = `${paint(style, 'bold', 'read_file')} ${paint(style, 'green', 'a'.repeat(30))} tail`;
    expect(fitLine(line, 50)).toBe(line);
    const cut = fitLine(line, 15);
    expect(cut.replace(/\x1b\[[0-9;]*m/g, '')).toBe('read_file aaaa…');
    expect(cut.match(/\x1b\[[0-9;]*m/g)).toEqual(line.match(/\x1b\[[0-9;]*m/g));
  });
});
