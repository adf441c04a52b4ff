import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { inParamsSchema, outParamsSchema, parseRequest } from './schema.ts';

const root = join(import.meta.dirname, '../..');

interface Pipeline {
  resources: { name: string; type: string; source: Record<string, unknown> }[];
  jobs: { plan: Record<string, unknown>[] }[];
}

describe('examples/pipeline.yml', () => {
  const pipeline = parse(readFileSync(join(root, 'examples/pipeline.yml'), 'utf8')) as Pipeline;
  const runes = pipeline.resources.filter((resource) => resource.type === 'rune');

  it('shows both ways: stateless and a notes store, with and without watch', () => {
    expect(runes.some((r) => !r.source.notes && r.source.prompt)).toBe(true);
    expect(runes.some((r) => (r.source.notes as { watch?: string } | undefined)?.watch)).toBe(true);
    expect(runes.some((r) => r.source.notes && !(r.source.notes as { watch?: string }).watch)).toBe(true);
  });

  it.each(runes.map((r) => [r.name, r.source]))('resource %s has a valid source', (_name, source) => {
    expect(() => parseRequest('check', JSON.stringify({ source }))).not.toThrow();
  });

  it('puts and gets of rune resources use valid params', () => {
    const names = new Set(runes.map((r) => r.name));
    const steps = pipeline.jobs.flatMap((job) => job.plan);
    const puts = steps.filter((step) => names.has(step.put as string));
    expect(puts.length).toBeGreaterThan(0);
    for (const step of puts) {
      expect(outParamsSchema.safeParse(step.params ?? {}).success).toBe(true);
      expect(inParamsSchema.safeParse(step.get_params ?? {}).success).toBe(true);
    }
  });
});

describe('Dockerfile', () => {
  const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');

  it('runs from Debian slim, started as root with the unprivileged user rune owning HOME', () => {
    // Started as root, a step becomes the owner of its folder (src/concourse/step-user.ts): check
    // becomes `rune`, the owner of HOME; in and out keep root only for a root-owned folder.
    expect(dockerfile).toMatch(/^FROM debian:[\w.-]*slim\s*$/m);
    const user = [...dockerfile.matchAll(/^USER (\S+)/gm)].at(-1)?.[1];
    expect(user).toBe('root');
    expect(dockerfile).toMatch(/useradd --create-home --uid 10001 .* rune/);
    expect(dockerfile).toMatch(/^ENV HOME=\/home\/rune$/m);
  });

  it('installs the binary at /opt/resource/rune with check, in and out beside it', () => {
    expect(dockerfile).toMatch(/^COPY .* \/opt\/resource\/rune$/m);
    for (const step of ['check', 'in', 'out'])
      expect(dockerfile).toContain(`ln -s rune /opt/resource/${step}`);
  });
});
