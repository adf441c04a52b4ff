// Types of scripts/web-build.mjs for the TypeScript that imports it (tests).
export interface Metafile {
  inputs: Record<string, unknown>;
  outputs: Record<
    string,
    { imports: Array<{ path: string; kind: string }>; entryPoint?: string; bytes: number }
  >;
}
export function buildWeb(root: string, outdir: string): Promise<Metafile>;
export function loadGraph(metafile: Metafile, entry: string): { eager: string[]; dynamic: string[] };
export function duplicatePackages(
  metafile: Pick<Metafile, 'inputs'>,
  root: string,
): Array<{ name: string; dirs: string[] }>;
