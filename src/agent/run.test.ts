import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULTS, type RuneConfig } from '../config/schema.ts';
import { silentLogger } from '../core/logger.ts';
import type { PolicyGate, ToolCallForPolicy } from '../policy/types.ts';
import type { ChatRequest, ChatResponse, Provider } from '../providers/types.ts';
import type { SandboxExecutor, SandboxRequest } from '../sandbox/types.ts';
import { exitCodeForResult, runAgent } from './run.ts';
import type { AgentEvent, AgentRunOptions, ExtraTool } from './types.ts';

type Step =
  | Partial<ChatResponse>
  | ((request: ChatRequest) => Partial<ChatResponse> | Promise<Partial<ChatResponse>>);

function fakeProvider(steps: Step[], fallback?: Step) {
  const requests: ChatRequest[] = [];
  const provider: Provider = {
    name: 'openai',
    async complete(request) {
      requests.push({ ...request, messages: structuredClone([...request.messages]) });
      const step = steps.shift() ?? fallback;
      if (!step) throw new Error('no scripted step left');
      const spec = typeof step === 'function' ? await step(request) : step;
      if (spec.content) request.onText?.(spec.content);
      return {
        content: '',
        toolCalls: [],
        usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 },
        finishReason: spec.toolCalls?.length ? 'tool_calls' : 'stop',
        model: request.model,
        ...spec,
      };
    },
  };
  return { provider, requests };
}

const allowAll: PolicyGate = { check: async () => ({ kind: 'allow', rule: 'test' }) };

function fakeExecutor(): SandboxExecutor & { requests: SandboxRequest[] } {
  const requests: SandboxRequest[] = [];
  return {
    requests,
    async run(request) {
      requests.push(request);
      const cmd = request.argv[2] ?? '';
      return {
        exitCode: 0,
        signal: null,
        stdout: cmd.startsWith('echo ') ? `${cmd.slice(5)}\n` : '',
        stderr: '',
        stdoutDropped: 0,
        stderrDropped: 0,
        timedOut: false,
        cancelled: false,
        layers: [{ layer: 'landlock', applied: false, detail: 'test' }],
        durationMs: 1,
      };
    },
    spawn() {
      throw new Error('not used');
    },
    describe: () => [],
  };
}

function config(overrides: Partial<RuneConfig> = {}): RuneConfig {
  return { ...(DEFAULTS as unknown as RuneConfig), model: 'm', mcp: [], ...overrides };
}

function options(provider: Provider, overrides: Partial<AgentRunOptions> = {}): AgentRunOptions {
  const cwd = mkdtempSync(join(tmpdir(), 'rune-run-'));
  return {
    prompt: 'hello',
    config: config(),
    cwd,
    env: { HOME: cwd, RUNE_HOME: join(cwd, '.rune'), PATH: '/usr/bin:/bin' },
    logger: silentLogger,
    provider,
    policy: allowAll,
    executor: fakeExecutor(),
    ...overrides,
  };
}

const call = (name: string, args: unknown, id = `c-${name}`) => ({
  id,
  name,
  arguments: typeof args === 'string' ? args : JSON.stringify(args),
});

describe('runAgent', () => {
  it('returns the answer of a model that calls no tool', async () => {
    const { provider, requests } = fakeProvider([{ content: '4' }]);
    const result = await runAgent(options(provider, { prompt: 'what is 2+2' }));
    expect(result).toMatchObject({ answer: '4', status: 'FinalAnswer', steps: 1 });
    expect(result.usage.totalTokens).toBe(15);
    expect(exitCodeForResult(result)).toBe(0);
    expect(requests[0]!.messages.at(-1)).toEqual({ role: 'user', content: 'what is 2+2' });
    expect(requests[0]!.tools.map((t) => t.name).sort()).toEqual(
      [
        'edit_file',
        'execute_cmd',
        'fetch_url',
        'find_files',
        'inspect_process',
        'list_dir',
        'read_file',
        'search_files',
        'write_file',
      ].sort(),
    );
    expect(requests[0]!.maxOutputTokens).toBe(8192);
  });

  it('runs execute_cmd through the executor and gives the output to the model', async () => {
    const { provider, requests } = fakeProvider([
      { toolCalls: [call('execute_cmd', { cmd: 'echo hi' })] },
      { content: 'done' },
    ]);
    const executor = fakeExecutor();
    const result = await runAgent(options(provider, { executor }));
    expect(result.status).toBe('FinalAnswer');
    expect(executor.requests[0]!.argv).toEqual(['/bin/sh', '-c', 'echo hi']);
    expect(executor.requests[0]!.timeoutMs).toBe(30_000);
    const toolMessage = requests[1]!.messages.find((m) => m.role === 'tool');
    expect(toolMessage?.content).toContain('stdout:\nhi');
    expect(result.toolCalls[0]).toMatchObject({ name: 'execute_cmd', decision: 'allow', isError: false });
    expect(result.toolCalls[0]!.layers?.[0]?.layer).toBe('landlock');
    // The fake executor reports landlock as skipped: the model is told, the output stays intact.
    expect(toolMessage?.content).toMatch(
      /stdout:\nhi\n[\s\S]*\n\[sandbox: this ran without any sandbox layer \(test\)\]$/,
    );
  });

  it('sends the first request before any policy or path planning; builds them once, at the first tool call', async () => {
    let planned = 0;
    const policy: PolicyGate = {
      check: async () => ({ kind: 'allow', rule: 'test' }),
      protectedPaths: () => {
        planned += 1;
        return { floor: [], denied: [], unrestricted: false };
      },
    };
    const answerOnly = fakeProvider([() => ({ content: `planned before the request: ${planned}` })]);
    const answered = await runAgent(options(answerOnly.provider, { policy }));
    expect(answered.answer).toBe('planned before the request: 0');
    expect(planned).toBe(0);

    const twoRounds = fakeProvider([
      { toolCalls: [call('execute_cmd', { cmd: 'echo a' }, 'c1')] },
      { toolCalls: [call('execute_cmd', { cmd: 'echo b' }, 'c2')] },
      { content: 'done' },
    ]);
    const result = await runAgent(options(twoRounds.provider, { policy }));
    expect(result.toolCalls.map((c) => c.decision)).toEqual(['allow', 'allow']);
    expect(planned).toBe(1);
  });

  it('tells the model nothing about the sandbox when every layer applied', async () => {
    const { provider, requests } = fakeProvider([
      { toolCalls: [call('execute_cmd', { cmd: 'echo hi' })] },
      { content: 'done' },
    ]);
    const executor = fakeExecutor();
    const run = executor.run.bind(executor);
    executor.run = async (request) => ({
      ...(await run(request)),
      layers: [
        { layer: 'landlock', applied: true, detail: 'ABI 7' },
        { layer: 'seccomp', applied: false, detail: 'seccomp filters unavailable: ENOSYS' },
      ],
    });
    await runAgent(options(provider, { executor }));
    const toolMessage = requests[1]!.messages.find((m) => m.role === 'tool');
    expect(toolMessage?.content).toContain(
      '[sandbox: this ran without the seccomp layer, which this machine does not offer; the other layers applied]',
    );
    executor.run = async (request) => ({
      ...(await run(request)),
      layers: [{ layer: 'landlock', applied: true, detail: 'ABI 7' }],
    });
    const again = fakeProvider([
      { toolCalls: [call('execute_cmd', { cmd: 'echo hi' })] },
      { content: 'done' },
    ]);
    await runAgent(options(again.provider, { executor }));
    expect(again.requests[1]!.messages.find((m) => m.role === 'tool')?.content).not.toContain('[sandbox');
  });

  it('strict mode with a layer missing ends the run before any model call, with exit 8 and the cause', async () => {
    const { provider, requests } = fakeProvider([{ content: 'never' }]);
    const executor = fakeExecutor();
    executor.describe = () => [
      { layer: 'landlock', applied: true, detail: 'ABI 7' },
      { layer: 'network', applied: false, detail: 'no network namespace: a seccomp filter refuses unshare' },
    ];
    const strict = config({ sandbox: { ...DEFAULTS.sandbox, mode: 'strict' } } as Partial<RuneConfig>);
    const result = await runAgent(options(provider, { executor, config: strict }));
    expect(requests).toHaveLength(0);
    expect(result.status).toBe('Error');
    expect(result.error?.code).toBe('SANDBOX_SETUP');
    expect(exitCodeForResult(result)).toBe(8);
    expect(result.error?.message).toContain(
      'network: no network namespace: a seccomp filter refuses unshare',
    );
    // With every layer there, strict mode runs as usual.
    executor.describe = () => [{ layer: 'landlock', applied: true, detail: 'ABI 7' }];
    const ok = fakeProvider([{ content: 'fine' }]);
    expect((await runAgent(options(ok.provider, { executor, config: strict }))).answer).toBe('fine');
  });

  it('withdraws the tools on the last step and stops with MaxSteps when no answer comes', async () => {
    const { provider, requests } = fakeProvider([], { toolCalls: [call('list_dir', { path: '.' })] });
    const result = await runAgent(options(provider, { config: config({ max_steps: 3 }) }));
    expect(result.status).toBe('MaxSteps');
    expect(exitCodeForResult(result)).toBe(4);
    expect(requests).toHaveLength(3);
    expect(requests[2]!.tools).toEqual([]);
    expect(requests[2]!.messages.at(-1)?.content).toMatch(/no more tools/);
    // The dropped calls of the last round leave no call without a result behind.
    const last = result.messages.at(-1);
    expect(last?.role === 'assistant' && last.toolCalls === undefined).toBe(true);
  });

  it('ends with FinalAnswer when the answer-now round answers', async () => {
    const { provider } = fakeProvider(
      [{ toolCalls: [call('list_dir', { path: '.' })] }, { toolCalls: [call('list_dir', { path: '.' })] }],
      { content: 'partial answer' },
    );
    const result = await runAgent(options(provider, { config: config({ max_steps: 3 }) }));
    expect(result).toMatchObject({ status: 'FinalAnswer', answer: 'partial answer', steps: 3 });
  });

  it('stops with TokenBudgetExhausted after one answer-now round', async () => {
    const { provider, requests } = fakeProvider([], {
      toolCalls: [call('list_dir', { path: '.' })],
      usage: { inputTokens: 60, outputTokens: 10, totalTokens: 70 },
    });
    const result = await runAgent(options(provider, { config: config({ token_budget: 100 }) }));
    expect(result.status).toBe('TokenBudgetExhausted');
    expect(exitCodeForResult(result)).toBe(5);
    expect(requests).toHaveLength(3);
    expect(requests[2]!.tools).toEqual([]);
  });

  it('turns bad arguments, broken JSON and unknown tools into results the model reads', async () => {
    const { provider, requests } = fakeProvider([
      {
        toolCalls: [
          call('read_file', { path: 3 }, 'a'),
          call('read_file', '{"path": ', 'b'),
          call('no_such_tool', {}, 'c'),
          call('read_file', { path: 'x', extra: 1 }, 'd'),
        ],
      },
      { content: 'ok' },
    ]);
    const result = await runAgent(options(provider));
    expect(result.status).toBe('FinalAnswer');
    const tools = requests[1]!.messages.filter((m) => m.role === 'tool');
    expect(tools.map((m) => m.role === 'tool' && m.isError)).toEqual([true, true, true, true]);
    expect(tools[0]!.content).toMatch(/invalid arguments: path/);
    expect(tools[1]!.content).toMatch(/not valid JSON/);
    expect(tools[2]!.content).toMatch(/no tool named "no_such_tool"/);
    expect(tools[3]!.content).toMatch(/unknown argument\(s\): extra/);
  });

  it('asks the policy for every call and does not run a denied one', async () => {
    const seen: ToolCallForPolicy[] = [];
    const policy: PolicyGate = {
      async check(c) {
        seen.push(c);
        return { kind: 'deny', reason: 'rm is not in allowed_commands', rule: 'commands' };
      },
    };
    const executor = fakeExecutor();
    const { provider, requests } = fakeProvider([
      { toolCalls: [call('execute_cmd', { cmd: 'rm -rf /' })] },
      { content: 'blocked' },
    ]);
    const result = await runAgent(options(provider, { policy, executor }));
    expect(seen[0]).toMatchObject({ tool: 'execute_cmd', args: { cmd: 'rm -rf /' }, source: 'builtin' });
    expect(executor.requests).toHaveLength(0);
    expect(requests[1]!.messages.find((m) => m.role === 'tool')?.content).toContain(
      'blocked by policy (commands): rm is not in allowed_commands',
    );
    expect(result.toolCalls[0]).toMatchObject({ decision: 'deny', rule: 'commands', isError: true });
  });

  it('keeps results in call order when read-only calls run in parallel', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'rune-par-'));
    writeFileSync(join(cwd, 'a.txt'), 'A');
    writeFileSync(join(cwd, 'b.txt'), 'B');
    const { provider, requests } = fakeProvider([
      { toolCalls: [call('read_file', { path: 'a.txt' }, '1'), call('read_file', { path: 'b.txt' }, '2')] },
      { content: 'ok' },
    ]);
    const result = await runAgent(options(provider, { cwd }));
    const tools = requests[1]!.messages.filter((m) => m.role === 'tool');
    expect(tools.map((m) => m.content)).toEqual(['A', 'B']);
    expect(result.toolCalls.map((c) => c.id)).toEqual(['1', '2']);
  });

  it('appends AGENTS.md to an overridden system prompt and injects skills; unknown skills are reported', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'rune-sk-'));
    writeFileSync(join(cwd, 'AGENTS.md'), 'Always answer in French.');
    const skills = join(cwd, 'skills');
    mkdirSync(join(skills, 'review'), { recursive: true });
    writeFileSync(
      join(skills, 'review', 'SKILL.md'),
      '---\nname: review\ndescription: Review code\ntools_allow: [read_file, list_dir]\n---\nLook for bugs.\n',
    );
    const { provider, requests } = fakeProvider([{ content: 'ok' }]);
    const result = await runAgent(
      options(provider, {
        cwd,
        prompt: 'please @review this and @nosuch, mail me at a@b.com',
        config: config({ skills_dir: skills, system_prompt: 'Custom prompt.' }),
      }),
    );
    const [system, skill] = requests[0]!.messages;
    expect(system?.content).toMatch(/^Custom prompt\.[\s\S]*Always answer in French\./);
    expect(skill).toMatchObject({ role: 'system' });
    expect(skill?.content).toContain('Look for bugs.');
    expect(requests[0]!.tools.map((t) => t.name).sort()).toEqual(['list_dir', 'read_file']);
    expect(result.unknownSkills).toEqual(['nosuch']);
  });

  it('reports a provider failure as Error with its code', async () => {
    const { RuneError } = await import('../core/errors.ts');
    const provider: Provider = {
      name: 'openai',
      complete: async () => {
        throw new RuneError('PROVIDER_AUTH', 'openai refused the API key (401)');
      },
    };
    const result = await runAgent(options(provider));
    expect(result).toMatchObject({ status: 'Error', error: { code: 'PROVIDER_AUTH' } });
    expect(exitCodeForResult(result)).toBe(7);
  });

  it('stops with UserInterrupt when cancelled during a model call', async () => {
    const controller = new AbortController();
    const provider: Provider = {
      name: 'openai',
      complete: (request) =>
        new Promise((_, reject) => {
          request.signal?.addEventListener('abort', () => reject(new Error('aborted')));
          setTimeout(() => controller.abort(), 10);
        }),
    };
    const result = await runAgent(options(provider, { signal: controller.signal }));
    expect(result.status).toBe('UserInterrupt');
    expect(exitCodeForResult(result)).toBe(130);
  });

  it('stops with RUN_TIMEOUT when the whole-run timeout expires', async () => {
    const provider: Provider = {
      name: 'openai',
      complete: (request) =>
        new Promise((_, reject) => {
          request.signal?.addEventListener('abort', () => reject(new Error('aborted')));
        }),
    };
    const result = await runAgent(options(provider, { config: config({ timeout_secs: 1 }) }));
    expect(result).toMatchObject({ status: 'Error', error: { code: 'RUN_TIMEOUT' } });
    expect(exitCodeForResult(result)).toBe(10);
  });

  it('compacts the conversation when it nears the context window', async () => {
    const events: AgentEvent[] = [];
    const big = 'x'.repeat(4000);
    const history = Array.from({ length: 10 }, (_, i) =>
      i % 2 === 0 ? { role: 'user' as const, content: big } : { role: 'assistant' as const, content: big },
    );
    const { provider, requests } = fakeProvider([{ content: 'SUMMARY' }, { content: 'answer' }]);
    const result = await runAgent(
      options(provider, {
        history,
        config: config({ context_window: 8000 }),
        onEvent: (e) => events.push(e),
      }),
    );
    expect(result.status).toBe('FinalAnswer');
    expect(requests[0]!.tools).toEqual([]);
    expect(requests[1]!.messages.some((m) => m.content.includes('SUMMARY'))).toBe(true);
    expect(requests[1]!.messages.length).toBeLessThan(history.length);
    expect(events.find((e) => e.type === 'compaction')).toBeDefined();
  });

  it('emits events in order: run_start, tool_call, policy_decision, tool_result, run_end', async () => {
    const events: AgentEvent[] = [];
    const { provider } = fakeProvider([{ toolCalls: [call('list_dir', { path: '.' })] }, { content: 'ok' }]);
    await runAgent(options(provider, { onEvent: (e) => events.push(e) }));
    const types = events.map((e) => e.type).filter((t) => t !== 'text' && t !== 'model_usage');
    expect(types).toEqual(['run_start', 'tool_call', 'policy_decision', 'tool_result', 'run_end']);
  });
  it('runs independent read-only calls at the same time and side-effect calls one at a time', async () => {
    // Each read tool waits until the other has started: run one after the other, they would deadlock.
    let started = 0;
    let release: () => void = () => {};
    const bothStarted = new Promise<void>((resolve) => {
      release = resolve;
    });
    const reader = (name: string): ExtraTool => ({
      definition: { name, description: name, parameters: { type: 'object' } },
      source: 'mcp',
      readOnly: true,
      async execute() {
        started += 1;
        if (started === 2) release();
        await bothStarted;
        return { content: `${name} done` };
      },
    });
    let active = 0;
    let maxActive = 0;
    const writer = (name: string): ExtraTool => ({
      definition: { name, description: name, parameters: { type: 'object' } },
      source: 'mcp',
      async execute() {
        active += 1;
        maxActive = Math.max(maxActive, active);
        await new Promise((r) => setTimeout(r, 20));
        active -= 1;
        return { content: `${name} done` };
      },
    });
    const { provider, requests } = fakeProvider([
      { toolCalls: [call('r1', {}, '1'), call('r2', {}, '2'), call('w1', {}, '3'), call('w2', {}, '4')] },
      { content: 'ok' },
    ]);
    const result = await runAgent(
      options(provider, { extraTools: [reader('r1'), reader('r2'), writer('w1'), writer('w2')] }),
    );
    expect(result.status).toBe('FinalAnswer');
    expect(maxActive).toBe(1);
    const tools = requests[1]!.messages.filter((m) => m.role === 'tool');
    expect(tools.map((m) => m.content)).toEqual(['r1 done', 'r2 done', 'w1 done', 'w2 done']);
  });
});

// docs/adr/0033-run-outcomes.md: how an answer ended decides what the run does.
describe('runAgent: how an answer ended', () => {
  it('continues an answer cut at the output limit and returns it whole', async () => {
    const { provider, requests } = fakeProvider([
      { content: 'The first half, ', finishReason: 'length', stopDetail: 'finish_reason "length"' },
      { content: 'the second half.' },
    ]);
    const result = await runAgent(options(provider));
    expect(result).toMatchObject({
      status: 'FinalAnswer',
      answer: 'The first half, the second half.',
      steps: 2,
    });
    expect(requests[1]!.messages.slice(-2)).toEqual([
      { role: 'assistant', content: 'The first half, ' },
      {
        role: 'user',
        content: expect.stringMatching(/cut off at the output token limit .*Continue exactly/),
      },
    ]);
  });

  it('ends OutputLimit (exit 16) with what was written when going on does not finish it', async () => {
    const cutStep = {
      content: 'more ',
      finishReason: 'length' as const,
      stopDetail: 'stop_reason "max_tokens"',
    };
    const { provider, requests } = fakeProvider([], cutStep);
    const result = await runAgent(options(provider));
    expect(requests).toHaveLength(3);
    expect(result).toMatchObject({
      status: 'OutputLimit',
      answer: 'more more more ',
      error: { code: 'OUTPUT_LIMIT' },
    });
    expect(result.error?.message).toMatch(
      /max_output_tokens = 8192; OpenAI-compatible provider: stop_reason "max_tokens"\), 3 times/,
    );
    expect(exitCodeForResult(result)).toBe(16);
  });

  it('never runs a tool call cut at the output limit, and tells the model', async () => {
    const executor = fakeExecutor();
    const { provider, requests } = fakeProvider([
      {
        content: 'Let me do that for you now.',
        toolCalls: [call('execute_cmd', '{"cmd": "echo hal')],
        finishReason: 'length',
      },
      { content: 'I will answer without it.' },
    ]);
    const result = await runAgent(options(provider, { executor }));
    expect(executor.requests).toEqual([]);
    expect(result).toMatchObject({
      status: 'FinalAnswer',
      answer: 'I will answer without it.',
      toolCalls: [],
    });
    expect(requests[1]!.messages.at(-1)).toEqual({
      role: 'user',
      content: expect.stringMatching(
        /while it was writing a call to execute_cmd: the call was incomplete and nothing was run/,
      ),
    });
    // The stored conversation holds no call without its result.
    expect(result.messages.some((m) => m.role === 'assistant' && m.toolCalls)).toBe(false);
  });

  it('a refusal ends Refused (exit 17), its tool calls unrun', async () => {
    const executor = fakeExecutor();
    const { provider } = fakeProvider([
      {
        content: 'I cannot help with that.',
        toolCalls: [call('execute_cmd', { cmd: 'echo x' })],
        finishReason: 'refusal',
        stopDetail: 'stop_reason "refusal"',
      },
    ]);
    const result = await runAgent(options(provider, { executor }));
    expect(executor.requests).toEqual([]);
    expect(result).toMatchObject({
      status: 'Refused',
      answer: 'I cannot help with that.',
      error: {
        code: 'MODEL_REFUSED',
        message: 'the model refused to answer (OpenAI-compatible provider: stop_reason "refusal")',
      },
    });
    expect(exitCodeForResult(result)).toBe(17);
  });

  it('a malformed call is not run, the model is asked again; malformed every time is an error', async () => {
    const bad = {
      finishReason: 'malformed_call' as const,
      stopDetail: 'finishReason "MALFORMED_FUNCTION_CALL"',
    };
    const once = fakeProvider([bad, { content: 'fine now' }]);
    expect(await runAgent(options(once.provider))).toMatchObject({
      status: 'FinalAnswer',
      answer: 'fine now',
    });
    expect(once.requests[1]!.messages.at(-1)?.content).toMatch(/malformed .*MALFORMED_FUNCTION_CALL/);
    const always = fakeProvider([], bad);
    const result = await runAgent(options(always.provider));
    expect(result).toMatchObject({ status: 'Error', error: { code: 'PROVIDER_ERROR' } });
    expect(exitCodeForResult(result)).toBe(6);
  });
});
