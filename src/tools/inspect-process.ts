// inspect_process: what /proc says about one process (by pid) or every process of a name.
// biome-ignore lint/style/noRestrictedImports: reads /proc/PID (the kernel's files of a process), never a path a tool names
import { readdir, readFile } from 'node:fs/promises';
import { z } from 'zod/v4';
import { defineTool, ToolError } from './types.ts';

const MAX_MATCHES = 50;

const schema = z
  .strictObject({
    pid: z.number().int().positive().optional().describe('Process id'),
    name: z
      .string()
      .min(1)
      .optional()
      .describe('Process name (as in /proc/PID/comm) or part of its command line'),
  })
  .refine((args) => (args.pid === undefined) !== (args.name === undefined), {
    message: 'give exactly one of pid or name',
  });

export interface ProcessInfo {
  pid: number;
  name: string;
  state: string;
  ppid: number;
  uid: number;
  threads: number;
  rssKiB: number;
  cmdline: string;
}

/** Parses /proc/PID/status and /proc/PID/cmdline text. Pure, so it is tested on fixed input. */
export function parseProcess(pid: number, status: string, cmdline: string): ProcessInfo {
  const field = (name: string): string => {
    const match = new RegExp(`^${name}:\\s*(.*)$`, 'm').exec(status);
    return match?.[1]?.trim() ?? '';
  };
  return {
    pid,
    name: field('Name'),
    state: field('State'),
    ppid: Number.parseInt(field('PPid'), 10) || 0,
    uid: Number.parseInt(field('Uid').split(/\s+/)[0] ?? '', 10) || 0,
    threads: Number.parseInt(field('Threads'), 10) || 0,
    rssKiB: Number.parseInt(field('VmRSS'), 10) || 0,
    cmdline: hideSecretArguments(cmdline.replace(/\0+$/, '').split('\0')).join(' '),
  };
}

// Any process's command line is world-readable in /proc, and people pass credentials there
// (`--password=…`, `--api-key K`, `-H 'Authorization: …'`, `https://u:p@host`): the values are
// hidden, since redact() only knows the secrets rune itself registered.
const SECRET_OPTION = /^--?[\w-]*(?:key|secret|token|passw(?:or)?d|passwd|credential|auth)[\w-]*$/i;
const SECRET_ASSIGNMENT =
  /^(--?[\w-]*(?:key|secret|token|passw(?:or)?d|passwd|credential|auth)[\w-]*=|[A-Za-z_]\w*(?:KEY|SECRET|TOKEN|PASSWORD|PASSWD|CREDENTIALS?)\w*=)(.+)$/i;
const HIDDEN = '[REDACTED]';

export function hideSecretArguments(argv: readonly string[]): string[] {
  const out: string[] = [];
  let hideNext = false;
  for (const arg of argv) {
    if (hideNext) {
      out.push(HIDDEN);
      hideNext = false;
      continue;
    }
    if (SECRET_OPTION.test(arg)) {
      hideNext = true;
      out.push(arg);
      continue;
    }
    const assignment = SECRET_ASSIGNMENT.exec(arg);
    if (assignment) {
      out.push(`${assignment[1]}${HIDDEN}`);
      continue;
    }
    out.push(
      arg
        .replace(/^((?:proxy-)?authorization:\s*).+$/i, `$1${HIDDEN}`)
        .replace(/(\/\/[^/@:\s]*:)[^/@\s]+@/g, `$1${HIDDEN}@`),
    );
  }
  return out;
}

async function readProcess(proc: string, pid: number): Promise<ProcessInfo | undefined> {
  try {
    const [status, cmdline] = await Promise.all([
      readFile(`${proc}/${pid}/status`, 'utf8'),
      readFile(`${proc}/${pid}/cmdline`, 'utf8').catch(() => ''),
    ]);
    return parseProcess(pid, status, cmdline);
  } catch {
    return undefined;
  }
}

function describe(info: ProcessInfo): string {
  return [
    `pid ${info.pid}: ${info.name} (${info.state})`,
    `  parent ${info.ppid}, uid ${info.uid}, ${info.threads} thread(s), RSS ${info.rssKiB} KiB`,
    `  command: ${info.cmdline || '(none: kernel thread or zombie)'}`,
  ].join('\n');
}

export function createInspectProcessTool(proc = '/proc') {
  return defineTool<z.infer<typeof schema>>({
    name: 'inspect_process',
    description:
      'Describe a running process from /proc: by pid, or every process whose name or command line matches name.',
    schema,
    readOnly: true,
    access: { kind: 'none' },
    async execute(args) {
      if (args.pid !== undefined) {
        const info = await readProcess(proc, args.pid);
        if (!info) throw new ToolError(`no process with pid ${args.pid}`);
        return { content: describe(info) };
      }
      const name = args.name ?? '';
      const pids = (await readdir(proc)).filter((entry) => /^\d+$/.test(entry)).map(Number);
      const matches: ProcessInfo[] = [];
      for (const pid of pids.sort((a, b) => a - b)) {
        const info = await readProcess(proc, pid);
        if (info && (info.name === name || info.cmdline.includes(name))) matches.push(info);
      }
      if (matches.length === 0) return { content: `no process matches "${name}"` };
      const shown = matches.slice(0, MAX_MATCHES).map(describe);
      if (matches.length > MAX_MATCHES) {
        shown.push(`[truncated: ${matches.length} processes match; only the first ${MAX_MATCHES} are shown]`);
      }
      return { content: shown.join('\n') };
    },
  });
}

export const inspectProcessTool = createInspectProcessTool();
