// What the editor says about saving, from facts only: "saved" once the server has acknowledged
// every local change (with durable updates that means committed), "saving" while some are on the
// way, "offline" with how many wait when the server cannot be reached, and the server's reason
// when it refused them.

export interface SaveFacts {
  readOnly: boolean;
  /** Local changes not yet acknowledged by the server. */
  queued: number;
  /** The last attempt to send failed for want of a connection (or the event stream is down). */
  offline: boolean;
  /** The server refused the changes (not retried); its message. */
  refused: string | null;
  /** The revision the server last saved, when known. */
  revision: number | null;
}

export interface SaveLabel {
  text: string;
  kind: 'saved' | 'saving' | 'offline' | 'error' | 'readonly';
}

const changes = (n: number) => `${n} ${n === 1 ? 'change' : 'changes'}`;

export function saveLabel(facts: SaveFacts): SaveLabel {
  const rev = facts.revision === null ? '' : ` · rev ${facts.revision}`;
  if (facts.readOnly) return { text: `read-only${rev}`, kind: 'readonly' };
  if (facts.refused !== null) {
    return { text: `not saved: ${facts.refused} (${changes(facts.queued)} kept here)`, kind: 'error' };
  }
  if (facts.offline) {
    return {
      text: facts.queued > 0 ? `offline · ${changes(facts.queued)} queued` : 'offline',
      kind: 'offline',
    };
  }
  if (facts.queued > 0) return { text: 'saving…', kind: 'saving' };
  return { text: `saved${rev}`, kind: 'saved' };
}
