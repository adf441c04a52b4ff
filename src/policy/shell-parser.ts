// The command-line analysis the gate loads with the first command it judges (a lazy import: a run
// that never calls execute_cmd does not pay for it): the shell subset parsed (shell.ts), and what
// each program's rules say it does (programs/).
import { judgeProgram } from './programs/index.ts';
import { parseShellSyntax, type ShellAnalysis } from './shell.ts';

/** Parses shell text and judges each command's program; pure and synchronous. */
export function parseShell(text: string): ShellAnalysis {
  const analysis = parseShellSyntax(text);
  if (!analysis.ok) return analysis;
  for (const command of analysis.commands) command.program = judgeProgram(command);
  return analysis;
}
