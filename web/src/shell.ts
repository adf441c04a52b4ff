// What the app's views share: who is logged in, this tab's id, the breadcrumb slot and links.
import { enc, type FileInfo, type Role, type User } from './api.ts';
import { clear, h } from './dom.ts';

export interface Session {
  user: User | null;
  role: Role;
  /** Picked once per tab: tells our own collab updates and presence apart from others'. */
  clientId: string;
}

export function setCrumbs(...parts: (Node | string)[]): void {
  const crumbs = document.getElementById('crumbs');
  if (crumbs) {
    clear(
      crumbs,
      ...parts.flatMap((part, i) => (i === 0 ? [part] : [h('span', { class: 'sep' }, '/'), part])),
    );
  }
}

export function fileHref(note: string, file?: FileInfo | string | null): string {
  const name = typeof file === 'string' ? file : file?.name;
  return name ? `#/n/${enc(note)}/${enc(name)}` : `#/n/${enc(note)}`;
}
