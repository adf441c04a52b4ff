// Short-lived messages in a corner: errors from the server (its message, never HTML) and notices.
import { ApiError } from './api.ts';
import { h } from './dom.ts';

export function toast(message: unknown, kind: 'error' | 'info' = 'error'): void {
  let text: string;
  if (message instanceof ApiError) text = `${message.message} (${message.code})`;
  else if (message instanceof Error) text = message.message;
  else text = String(message);
  let area = document.getElementById('toasts');
  if (!area) {
    area = h('div', { id: 'toasts', role: 'status', 'aria-live': 'polite' });
    document.body.append(area);
  }
  const item = h('div', { class: `toast ${kind === 'info' ? 'info' : 'error'}` }, text);
  area.append(item);
  window.setTimeout(() => item.remove(), kind === 'error' ? 8000 : 4000);
}
