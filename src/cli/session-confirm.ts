// Confirm mode's one question per call the lists do not cover: the call, why it is asked and
// what it would change go into the transcript, then one menu — once, for this session, always
// (saved in rune.toml), or no and tell the model what to do instead (which ends the turn so the
// next prompt is that instruction).
import { configFile } from '../core/paths.ts';
import type { Confirmer } from '../policy/types.ts';
import { renderDiff } from './diff-view.ts';
import { formatArguments, paint } from './format.ts';
import type { SessionContext } from './session-context.ts';
import { coveringGrant, describeGrant, grantFor } from './session-grants.ts';
import type { Choice } from './tui/terminal.ts';

type Parts = Pick<SessionContext, 'terminal' | 'style' | 'write' | 'state' | 'setup'>;

export function menuConfirmer(session: () => Parts): Confirmer {
  return {
    async confirm(call, decision) {
      const { terminal, style, write, state, setup } = session();
      const covered = coveringGrant(state.grants, call, decision, setup.cwd);
      if (covered) {
        write(
          `${paint(style, 'dim', `  allowed for this session (${describeGrant(covered, setup.cwd)})`)}\n`,
        );
        return 'yes';
      }
      terminal.screen.endLine();
      const what = call.source === 'mcp' && call.server ? `${call.server}.${call.tool}` : call.tool;
      write(
        `${paint(style, 'yellow', '?')} ${paint(style, 'bold', what)} ${formatArguments(JSON.stringify(call.args))}\n`,
      );
      write(`  ${paint(style, 'dim', decision.reason)}\n`);
      // What the call would change (a diff), so the answer is about the change itself; it stays in
      // the transcript whatever the answer.
      if (decision.preview) {
        const looksLikeDiff = decision.preview.startsWith('--- ');
        write(
          `${(looksLikeDiff ? renderDiff(decision.preview, style).lines : decision.preview.split('\n')).map((line) => `  ${line}`).join('\n')}\n`,
        );
      }
      const grant = grantFor(call, decision, setup.cwd);
      const choices: { choice: Choice; answer: 'yes' | 'session' | 'always' | 'no' }[] = [
        { choice: { label: 'Yes, once', key: 'y' }, answer: 'yes' },
      ];
      if (grant)
        choices.push({
          choice: { label: `Yes, for this session: ${describeGrant(grant, setup.cwd)}`, key: 's' },
          answer: 'session',
        });
      if (decision.suggestion)
        choices.push({
          choice: {
            label: 'Always',
            detail: `(add '${decision.suggestion.value}' to ${decision.suggestion.list} in ${configFile(setup.env)})`,
            key: 'a',
          },
          answer: 'always',
        });
      choices.push({
        choice: { label: 'No, and tell the model what to do instead', key: 'n' },
        answer: 'no',
      });
      const index = await terminal.choose({
        title: [paint(style, 'bold', decision.question)],
        choices: choices.map((entry) => entry.choice),
        initial: 0,
      });
      const answer = index === undefined ? 'no' : choices[index]!.answer;
      write(`  ${paint(style, 'dim', `→ ${index === undefined ? 'no' : choices[index]!.choice.label}`)}\n`);
      switch (answer) {
        case 'session':
          if (grant) state.grants.push(grant);
          return 'yes';
        case 'no':
          // The turn ends here; what the person types next is the model's new instruction.
          state.declined = true;
          state.controller?.abort();
          return 'no';
        default:
          return answer;
      }
    },
  };
}
