// Light/dark: follows the system until the user picks one, which is remembered per browser.
import { h } from './dom.ts';

type Theme = 'light' | 'dark';
const KEY = 'rune-theme';

function systemTheme(): Theme {
  return window.matchMedia?.('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}

function stored(): Theme | null {
  try {
    const value = localStorage.getItem(KEY);
    return value === 'light' || value === 'dark' ? value : null;
  } catch {
    return null;
  }
}

export function initTheme(): void {
  document.documentElement.dataset['theme'] = stored() ?? systemTheme();
}

export function themeButton(): HTMLButtonElement {
  const button = h('button', {
    type: 'button',
    class: 'icon theme-toggle',
    title: 'Switch light/dark',
    'aria-label': 'Switch light/dark',
  });
  const show = () => {
    button.textContent = document.documentElement.dataset['theme'] === 'dark' ? '☀' : '☾';
  };
  button.addEventListener('click', () => {
    const next: Theme = document.documentElement.dataset['theme'] === 'dark' ? 'light' : 'dark';
    document.documentElement.dataset['theme'] = next;
    try {
      localStorage.setItem(KEY, next);
    } catch {}
    show();
  });
  show();
  return button;
}
