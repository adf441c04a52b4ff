// The admin's "Tokens" view at `#/tokens`: list, create and revoke bearer tokens. The secret
// exists in the page only once, right after creation (the server keeps just its hash).
import { call, type ReplyOf, type Role } from './api.ts';
import { ago, clear, h } from './dom.ts';
import { type Session, setCrumbs } from './shell.ts';
import { toast } from './toast.ts';

/** A token as `GET /api/tokens` lists it (src/notes/api-routes.ts). */
export type TokenInfo = ReplyOf<'GET /api/tokens'>['tokens'][number];

export async function tokensView(view: HTMLElement, session: Session): Promise<void> {
  setCrumbs('tokens');
  // Non-admins get no list and no form; the server would refuse them anyway (403).
  if (session.role !== 'admin') {
    clear(
      view,
      h(
        'section',
        { class: 'card home' },
        h('h1', {}, 'Not allowed'),
        h('p', {}, 'Only admins manage access tokens.'),
        h('p', {}, h('a', { href: '#/' }, 'Back to the notes')),
      ),
    );
    return;
  }
  const list = h('ul', { class: 'note-list token-list' });
  const secretSlot = h('div', { class: 'token-secret-slot' });
  const load = async () => {
    const { tokens } = await call('GET /api/tokens', {});
    clear(
      list,
      tokens.length === 0
        ? h('li', { class: 'muted empty' }, 'No tokens yet.')
        : tokens.map((token) => tokenItem(token, load)),
    );
  };
  const name = h('input', {
    name: 'token-name',
    placeholder: 'Token name (what it is for)',
    required: true,
    maxlength: 120,
    'aria-label': 'Token name',
  });
  const role = h(
    'select',
    { name: 'token-role', 'aria-label': 'Role of the token' },
    h('option', { value: 'guest' }, 'guest'),
    h('option', { value: 'user', selected: true }, 'user'),
    h('option', { value: 'admin' }, 'admin'),
  );
  const days = h('input', {
    name: 'token-days',
    type: 'number',
    min: 1,
    step: 1,
    placeholder: 'never',
    'aria-label': 'Expires after this many days (empty: never)',
  });
  const form = h(
    'form',
    {
      class: 'inline-form token-form',
      onsubmit: async (event: Event) => {
        event.preventDefault();
        try {
          const created = await call(
            'POST /api/tokens',
            {},
            {
              name: name.value.trim(),
              role: role.value as Exclude<Role, 'anonymous'>, // the select offers the roles only
              ...(days.value ? { expires_in_days: Number(days.value) } : {}),
            },
          );
          name.value = '';
          days.value = '';
          clear(
            secretSlot,
            secretCard(created, () => clear(secretSlot)),
          );
          await load();
        } catch (error) {
          toast(error);
        }
      },
    },
    name,
    role,
    h('label', { class: 'check' }, 'expires in', days, 'days'),
    h('button', { type: 'submit', class: 'primary' }, 'Create token'),
  );
  clear(
    view,
    h(
      'section',
      { class: 'home tokens' },
      h(
        'div',
        { class: 'home-head' },
        h('h1', {}, 'Access tokens'),
        h('a', { href: '#/', class: 'link' }, '← Notes'),
      ),
      h(
        'p',
        { class: 'muted' },
        'Scripts and the Concourse resource send a token as ',
        h('code', {}, 'Authorization: Bearer …'),
        '. A token has the rights of its role while the admin who issued it stays an admin.',
      ),
      form,
      secretSlot,
      list,
    ),
  );
  await load();
}

/** Shown once after creation; dismissing it drops the secret from the page. */
function secretCard(created: TokenInfo & { token: string }, dismiss: () => void): HTMLElement {
  const value = h('input', {
    class: 'token-secret',
    readonly: true,
    value: created.token,
    'aria-label': `Secret of the token ${created.name}`,
    spellcheck: 'false',
  });
  const copied = h('span', { class: 'muted copied', role: 'status' });
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(created.token);
      copied.textContent = 'Copied.';
    } catch {
      // No clipboard permission (plain http, or denied): select the text so Ctrl+C works.
      value.select();
      copied.textContent = 'Press Ctrl+C to copy.';
    }
  };
  return h(
    'div',
    { class: 'card token-created', role: 'alert' },
    h('p', {}, h('strong', {}, `Token "${created.name}" (${created.role}) created.`)),
    h('p', { class: 'warning' }, 'Copy the secret now: you will not see it again.'),
    h(
      'div',
      { class: 'token-secret-row' },
      value,
      h('button', { type: 'button', class: 'copy-token', onclick: () => void copy() }, 'Copy'),
      copied,
    ),
    h('button', { type: 'button', class: 'small', onclick: dismiss }, 'Done'),
  );
}

function tokenItem(token: TokenInfo, reload: () => Promise<void>): HTMLElement {
  return h(
    'li',
    { 'data-token': token.id },
    h('span', { class: 'note-name token-name' }, token.name),
    h('span', { class: `badge role-${token.role}` }, token.role),
    h(
      'span',
      { class: 'muted', title: token.created_at },
      `created ${ago(token.created_at)} by ${token.created_by}`,
    ),
    h(
      'span',
      { class: 'muted last-used', title: token.last_used_at ?? '' },
      token.last_used_at ? `last used ${ago(token.last_used_at)}` : 'never used',
    ),
    token.expires_at
      ? h(
          'span',
          { class: 'muted expires', title: token.expires_at },
          `expires ${new Date(token.expires_at).toLocaleDateString()}`,
        )
      : h('span', { class: 'muted expires' }, 'no expiry'),
    h(
      'span',
      { class: 'actions' },
      h(
        'button',
        {
          type: 'button',
          class: 'small danger',
          'aria-label': `Revoke ${token.name}`,
          onclick: async () => {
            if (!confirm(`Revoke the token "${token.name}"? Anything using it stops working at once.`))
              return;
            try {
              await call('DELETE /api/tokens/:id', { id: token.id });
              await reload();
            } catch (error) {
              toast(error);
            }
          },
        },
        'Revoke',
      ),
    ),
  );
}
