// Confirm mode's one question per call the lists do not cover (the gate's ApprovalRequest, ADR
// 0033): the call, why it is asked and what it would change go into the transcript, then one menu —
// once; for this session (this folder's edits, or this command's prefix, kept by the session, or
// what the question names); always (its entries saved in rune.toml); or no, and what the model
// should do instead (it reads that in the refusal).
import { configFile } from '../core/paths.ts';
import type { ApprovalAnswer, ApprovalRequest, Confirmer, Grant } from '../policy/types.ts';
import { renderDiff } from './diff-view.ts';
import { formatArguments, paint } from './format.ts';
import type { SessionContext } from './session-context.ts';
import { coveringGrant, describeGrant, grantFor, type SessionGrant } from './session-grants.ts';
import type { Choice } from './tui/terminal.ts';

type Parts = Pick<SessionContext, 'terminal' | 'style' | 'write' | 'state' | 'setup'>;

/** The entries a question's approval adds, as the menu names them. */
function entries(grants: readonly Grant[]): string {
  return grants.map((grant) => `'${grant.value}' to ${grant.list}`).join(', ');
}

/** The call, its reason and what it would change, into the transcript before the menu. */
function showCall(parts: Parts, call: Parameters<Confirmer['confirm']>[0], request: ApprovalRequest): void {
  const { style, write, terminal } = parts;
  terminal.screen.endLine();
  const what = call.source === 'mcp' && call.server ? `${call.server}.${call.tool}` : call.tool;
  write(
    `${paint(style, 'yellow', '?')} ${paint(style, 'bold', what)} ${formatArguments(JSON.stringify(call.args))}\n`,
  );
  write(`  ${paint(style, 'dim', request.reason)}\n`);
  // What the call would change (a diff), so the answer is about the change itself; it stays in the
  // transcript whatever the answer.
  if (request.preview) {
    const lines = request.preview.startsWith('--- ')
      ? renderDiff(request.preview, style).lines
      : request.preview.split('\n');
    write(`${lines.map((line) => `  ${line}`).join('\n')}\n`);
  }
}

/**
 * What the gate is told for a session grant. A command prefix is kept here, not in the gate's lists:
 * there its entry would be the whole program ('git' for "git log", so `git push` would run unasked),
 * so each line the prefix covers is allowed once.
 */
function answerFor(grant: SessionGrant): ApprovalAnswer {
  return { kind: 'allow', scope: grant.kind === 'command' ? 'once' : 'session' };
}

export function menuConfirmer(session: () => Parts): Confirmer {
  return {
    async confirm(call, request) {
      const parts = session();
      const { terminal, style, write, state, setup } = parts;
      const covered = coveringGrant(state.grants, call, request, setup.cwd);
      if (covered) {
        write(
          `${paint(style, 'dim', `  allowed for this session (${describeGrant(covered, setup.cwd)})`)}\n`,
        );
        return answerFor(covered);
      }
      showCall(parts, call, request);
      const grant = grantFor(call, request, setup.cwd);
      const choices: { choice: Choice; answer: ApprovalAnswer | 'instead'; grant?: typeof grant }[] = [
        { choice: { label: 'Yes, once', key: 'y' }, answer: { kind: 'allow', scope: 'once' } },
      ];
      if (grant)
        choices.push({
          choice: { label: `Yes, for this session: ${describeGrant(grant, setup.cwd)}`, key: 's' },
          answer: answerFor(grant),
          grant,
        });
      else if (request.scopes.includes('session'))
        choices.push({
          choice: {
            label: 'Yes, for this session',
            key: 's',
            ...(request.grants.length > 0 ? { detail: `(${entries(request.grants)})` } : {}),
          },
          answer: { kind: 'allow', scope: 'session' },
        });
      if (request.scopes.includes('always'))
        choices.push({
          choice: {
            label: 'Always',
            detail: `(add ${entries(request.grants)} in ${configFile(setup.env)})`,
            key: 'a',
          },
          answer: { kind: 'allow', scope: 'always' },
        });
      choices.push({
        choice: { label: 'No, and tell the model what to do instead', key: 'n' },
        answer: 'instead',
      });
      const index = await terminal.choose({
        title: [paint(style, 'bold', request.question)],
        choices: choices.map((entry) => entry.choice),
        initial: 0,
      });
      const chosen = index === undefined ? undefined : choices[index];
      write(`  ${paint(style, 'dim', `→ ${chosen ? chosen.choice.label : 'no'}`)}\n`);
      if (!chosen) return { kind: 'deny' };
      if (chosen.answer === 'instead') {
        const instead = await terminal.askText('what should the model do instead? (Enter: just no)');
        if (instead?.trim()) write(`  ${paint(style, 'dim', `→ instead: ${instead.trim()}`)}\n`);
        return instead?.trim() ? { kind: 'deny', instead: instead.trim() } : { kind: 'deny' };
      }
      if (chosen.grant) state.grants.push(chosen.grant);
      return chosen.answer;
    },
  };
}
