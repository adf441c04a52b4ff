// Images with a prompt through the built binary: `--image` on each wire that takes them (OpenAI's
// content parts, Anthropic's image blocks, Gemini's inline data), a clear refusal where rune sends
// none (Copilot) or the file is no image, and `@picture.png` in the session once the policy allows
// reading it.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cleanEnv, runRune, tempDir } from '../helpers/rune.ts';
import { hasTmux, sleep, startSession, useSessionSuite } from '../helpers/tmux.ts';

const mock = useSessionSuite();

// A 1×1 PNG.
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

function folder() {
  const cwd = tempDir('rune-image-');
  writeFileSync(join(cwd, 'dot.png'), PNG);
  writeFileSync(join(cwd, 'fake.png'), 'not an image at all');
  return cwd;
}

describe('--image in pipe mode', () => {
  it.each([
    ['openai', (body: { messages: { content: unknown }[] }) => body.messages.at(-1)!.content],
    ['anthropic', (body: { messages: { content: unknown }[] }) => body.messages.at(-1)!.content],
    ['gemini', (body: { contents: { parts: unknown }[] }) => body.contents.at(-1)!.parts],
  ])('%s: the image goes with the prompt in the wire format', async (provider, content) => {
    const cwd = folder();
    mock.setFallback({ text: 'a dot' });
    const result = await runRune(
      [
        '--provider',
        provider,
        '--base-url',
        provider === 'gemini' ? mock.geminiBaseUrl : mock.baseUrl,
        '--api-key',
        'sk-test-image-0123456789',
        '--model',
        'm',
        '--image',
        'dot.png',
        'what is this?',
      ],
      { cwd, env: cleanEnv() },
    );
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('a dot\n');
    const parts = JSON.stringify(content(mock.requests[0]!.body));
    const data = PNG.toString('base64');
    expect(parts).toContain('what is this?');
    if (provider === 'openai') expect(parts).toContain(`"url":"data:image/png;base64,${data}"`);
    if (provider === 'anthropic')
      expect(parts).toContain(`"source":{"type":"base64","media_type":"image/png","data":"${data}"}`);
    if (provider === 'gemini')
      expect(parts).toContain(`"inlineData":{"mimeType":"image/png","data":"${data}"}`);
  });

  it('is refused clearly where rune sends no images, and for a file that is no image', async () => {
    const cwd = folder();
    mock.setFallback({ text: 'never' });
    const copilot = await runRune(['--model', 'm', '--image', 'dot.png', 'what is this?'], {
      cwd,
      env: {
        ...cleanEnv(),
        GITHUB_TOKEN: 'ghu_imageTest0123456789abcdefghij',
        RUNE_COPILOT_TOKEN_URL: mock.copilotTokenUrl,
      },
    });
    expect(copilot.code).toBe(2);
    expect(copilot.stderr).toContain(
      'images are not sent to copilot by rune (dot.png); use a provider that takes them',
    );
    const fake = await runRune(['--base-url', mock.baseUrl, '--model', 'm', '--image', 'fake.png', 'hi'], {
      cwd,
      env: cleanEnv(),
    });
    expect(fake.code).toBe(2);
    expect(fake.stderr).toContain('fake.png is not a PNG, JPEG, GIF or WebP image');
    expect(mock.requests.filter((r) => r.kind !== 'copilot-token')).toHaveLength(0);
  });
});

describe.skipIf(!hasTmux)('@picture.png in the session', () => {
  it('attaches the image once the policy allows reading it', async () => {
    const cwd = folder();
    const term = startSession(mock.baseUrl, { cwd });
    await term.waitFor('/help for commands');
    mock.setFallback({ text: 'I see a dot' });
    term.type('what is in @dot.png');
    await term.waitFor('I see a dot');
    for (let i = 0; i < 40 && mock.requests.length === 0; i++) await sleep(25);
    const sent = mock.requests.at(-1)!.body.messages.at(-1).content;
    expect(sent).toEqual([
      { type: 'text', text: 'what is in @dot.png' },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG.toString('base64')}` } },
    ]);
    expect(term.capture()).toMatch(
      /> read_file path="dot\.png" \| allowed[\s\S]*\+ image dot\.png \(1 KiB\)/,
    );
  });
});
