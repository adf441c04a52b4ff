// Reads git config files the way git does (a port of config.c's parser: sections, subsections,
// escapes, quotes, comments, continuation lines) and names the keys that make git run a program
// or read more config. Pure: the I/O is in git-fs.ts and the guard's other modules. rune never
// runs git to find out: doing so in a folder the command wrote could run the very program the
// command planted.

export interface ConfigEntry {
  /** Lower-case section, e.g. "core" (old `[a.b]` syntax: "a", subsection "b"). */
  section: string;
  /** Case-sensitive subsection, or undefined. */
  subsection?: string;
  /** Lower-case key. */
  key: string;
  /** The value after unquoting; undefined for a bare key (boolean true). */
  value?: string;
  /** Character span of the key and its value (through continuation lines), for removal. */
  start: number;
  end: number;
}

export interface ParsedConfig {
  entries: ConfigEntry[];
  /** Where git would stop with "bad config line": the offset of that line, or undefined. */
  errorAt?: number;
}

const isKeyChar = (c: string) => /^[A-Za-z0-9-]$/.test(c);
const isSpace = (c: string) =>
  c === ' ' || c === '\t' || c === '\n' || c === '\v' || c === '\f' || c === '\r';

/**
 * Parses config text. Read files as 'latin1' (one character per byte, as git sees them) and write
 * them back the same way, so bytes that are not UTF-8 survive a removal unchanged.
 */
export function parseGitConfig(text: string): ParsedConfig {
  let pos = text.startsWith('\xEF\xBB\xBF') ? 3 : text.startsWith('\uFEFF') ? 1 : 0;
  const entries: ConfigEntry[] = [];
  let section = '';
  let comment = false;
  let lineStart = pos;

  // git reads "\r\n" as "\n" and returns "\n" at the end of the input.
  const next = (): string => {
    if (pos >= text.length) {
      pos = text.length + 1;
      return '\n';
    }
    let c = text[pos++] as string;
    if (c === '\r' && text[pos] === '\n') c = text[pos++] as string;
    return c;
  };
  const eof = () => pos > text.length;
  const fail = (): ParsedConfig => ({ entries, errorAt: lineStart });

  const baseVar = (): string | undefined => {
    let name = '';
    for (;;) {
      const c = next();
      if (eof()) return undefined;
      if (c === ']') return name;
      if (isSpace(c)) return extendedBaseVar(name, c);
      if (!isKeyChar(c) && c !== '.') return undefined;
      name += c.toLowerCase();
    }
  };
  const extendedBaseVar = (base: string, first: string): string | undefined => {
    let c = first;
    do {
      if (c === '\n') return undefined;
      c = next();
    } while (isSpace(c));
    if (c !== '"') return undefined;
    let sub = '';
    for (;;) {
      c = next();
      if (c === '\n') return undefined;
      if (c === '"') break;
      if (c === '\\') {
        c = next();
        if (c === '\n') return undefined;
      }
      sub += c;
    }
    if (next() !== ']') return undefined;
    return `${base}\u0000${sub}`;
  };
  const value = (): string | undefined => {
    let out = '';
    let quote = false;
    let inComment = false;
    let spaces = 0;
    for (;;) {
      let c = next();
      if (c === '\n') {
        if (quote) return undefined;
        return out;
      }
      if (inComment) continue;
      if (isSpace(c) && !quote) {
        if (out.length > 0) spaces++;
        continue;
      }
      if (!quote && (c === ';' || c === '#')) {
        inComment = true;
        continue;
      }
      for (; spaces > 0; spaces--) out += ' ';
      if (c === '\\') {
        c = next();
        if (c === '\n') continue; // a continuation line
        if (c === 't') c = '\t';
        else if (c === 'b') c = '\b';
        else if (c === 'n') c = '\n';
        else if (c !== '\\' && c !== '"') return undefined;
        out += c;
        continue;
      }
      if (c === '"') {
        quote = !quote;
        continue;
      }
      out += c;
    }
  };

  for (;;) {
    const c = next();
    if (c === '\n') {
      if (eof()) return { entries };
      comment = false;
      lineStart = pos;
      continue;
    }
    if (comment || isSpace(c)) continue;
    if (c === '#' || c === ';') {
      comment = true;
      continue;
    }
    if (c === '[') {
      const name = baseVar();
      if (name === undefined || name === '') return fail();
      section = name;
      continue;
    }
    if (!/^[A-Za-z]$/.test(c)) return fail();
    const start = pos - 1;
    let key = c.toLowerCase();
    let d = next();
    while (isKeyChar(d)) {
      key += d.toLowerCase();
      d = next();
    }
    while (d === ' ' || d === '\t') d = next();
    let parsed: string | undefined;
    if (d === '\n') {
      parsed = undefined; // a bare key: true
      if (!eof()) pos--; // leave the newline for the main loop
    } else if (d === '=') {
      parsed = value();
      if (parsed === undefined) return fail();
      if (!eof()) pos--;
    } else {
      return fail();
    }
    const end = Math.min(pos, text.length);
    entries.push({
      ...splitSection(section),
      key,
      ...(parsed !== undefined ? { value: parsed } : {}),
      start,
      end,
    });
  }
}

// A key before any section has no section at all (git lists it as just the key).
function splitSection(name: string): { section: string; subsection?: string } {
  const nul = name.indexOf('\u0000');
  if (nul >= 0) return { section: name.slice(0, nul), subsection: name.slice(nul + 1) };
  const dot = name.indexOf('.');
  // Deprecated `[section.subsection]`: the subsection was lower-cased with the rest.
  return dot < 0 ? { section: name } : { section: name.slice(0, dot), subsection: name.slice(dot + 1) };
}

/** The name as `git config --list` prints it: section[.subsection].key. */
export function entryName(e: Pick<ConfigEntry, 'section' | 'subsection' | 'key'>): string {
  if (e.section === '') return e.key;
  return e.subsection === undefined ? `${e.section}.${e.key}` : `${e.section}.${e.subsection}.${e.key}`;
}

/**
 * An entry from a name `git config --list` printed (entryName's inverse: the subsection is what
 * lies between the first and the last dot), with no place in any text.
 */
export function entryFromName(name: string, value: string | undefined): ConfigEntry {
  const first = name.indexOf('.');
  const last = name.lastIndexOf('.');
  const section = first < 0 ? '' : name.slice(0, first);
  const key = name.slice(last + 1);
  return {
    section,
    ...(first >= 0 && last > first ? { subsection: name.slice(first + 1, last) } : {}),
    key,
    ...(value !== undefined ? { value } : {}),
    start: 0,
    end: 0,
  };
}

/** git's boolean spellings; anything else in a key that takes "boolean or command" is a command. */
export function isGitBoolean(value: string | undefined): boolean {
  if (value === undefined) return true;
  return /^(true|false|yes|no|on|off|-?\d+)?$/i.test(value.trim());
}

// Keys whose value git runs as a program (or whose name says it does) anywhere they appear.
const PROGRAM_KEYS = new Set([
  'editor',
  'pager',
  'sshcommand',
  'askpass',
  'gitproxy',
  'hookspath',
  'textconv',
  'helper',
  'tunnel',
  'driver',
  'uploadpack',
  'receivepack',
  'packobjectshook',
  'alternaterefscommand',
  'difffilter',
  'browser',
  'viewer',
  'templatedir',
  'httpd',
]);
const PROGRAM_SUFFIXES = ['cmd', 'command', 'program', 'prog'];

/**
 * Why this entry makes git run a program or read further config, or undefined when it does not.
 * Deliberately broad (a name that sounds like a command counts): only keys a sandboxed command
 * added are judged, and a false alarm costs one removed setting, reported.
 */
export function programRunningReason(e: ConfigEntry): string | undefined {
  const { section, key } = e;
  const value = e.value ?? '';
  if (section === 'include' && key === 'path') return 'includes another config file';
  if (section === 'includeif' && key === 'path') return 'includes another config file';
  if (section === 'core' && key === 'fsmonitor') return isGitBoolean(e.value) ? undefined : 'runs a program';
  if (section === 'core' && key === 'hookspath') return 'moves the hooks git runs';
  if (section === 'pager') return isGitBoolean(e.value) ? undefined : 'runs a pager program';
  if (section === 'alias') return value.trimStart().startsWith('!') ? 'runs a shell command' : undefined;
  if (section === 'submodule' && key === 'update')
    return value.trimStart().startsWith('!') ? 'runs a shell command' : undefined;
  if (section === 'filter' && (key === 'clean' || key === 'smudge' || key === 'process'))
    return 'runs a filter program';
  if (
    section === 'lfs' &&
    (key === 'clean' || key === 'smudge' || key === 'path' || key === 'standalonetransferagent')
  )
    return 'runs a git-lfs program';
  if (section === 'diff' && key === 'external') return 'runs a diff program';
  if (
    (section === 'difftool' || section === 'mergetool' || section === 'browser' || section === 'man') &&
    key === 'path'
  )
    return 'runs a tool program';
  if (section === 'remote' && key === 'vcs') return 'runs a remote helper';
  if (section === 'protocol' && key === 'allow' && value.trim().toLowerCase() !== 'never')
    return 'enables transports that run commands';
  if (section === 'sendemail' && key === 'smtpserver' && value.includes('/')) return 'runs a mail program';
  if (PROGRAM_KEYS.has(key)) return 'runs a program';
  if (PROGRAM_SUFFIXES.some((suffix) => key.endsWith(suffix))) return 'runs a program';
  return undefined;
}

/** `include.path` and `includeIf.*.path` values, in order. */
export function includePaths(entries: readonly ConfigEntry[]): string[] {
  return entries
    .filter((e) => (e.section === 'include' || e.section === 'includeif') && e.key === 'path' && e.value)
    .map((e) => e.value as string);
}

/** The last `core.hooksPath`, as git takes the last value of a single-valued key. */
export function hooksPathOf(entries: readonly ConfigEntry[]): string | undefined {
  const found = entries.filter((e) => e.section === 'core' && e.key === 'hookspath' && e.value);
  return found.at(-1)?.value;
}

/**
 * `text` without the given entries. A key on the same line as its section header leaves the
 * header; everything else (comments, other keys, layout) stays as it was.
 */
export function removeEntries(text: string, remove: readonly ConfigEntry[]): string {
  const spans = [...remove].sort((a, b) => b.start - a.start);
  let out = text;
  for (const span of spans) out = out.slice(0, span.start) + out.slice(span.end);
  return out;
}

/**
 * What to keep of a config the command wrote: without the program-running entries, and cut at
 * the first line git would refuse (git stops there anyway; what follows cannot be judged).
 */
export function sanitizeConfig(
  text: string,
  isNew: (e: ConfigEntry) => boolean = () => true,
): { text: string; removed: Array<{ name: string; reason: string }>; cutAt?: number } {
  const parsed = parseGitConfig(text);
  const judged = parsed.entries.filter(isNew).flatMap((e) => {
    const reason = programRunningReason(e);
    return reason ? [{ entry: e, reason }] : [];
  });
  const kept = parsed.errorAt === undefined ? text : text.slice(0, parsed.errorAt);
  return {
    text: removeEntries(
      kept,
      judged.map((j) => j.entry).filter((e) => e.end <= kept.length),
    ),
    removed: judged.map((j) => ({ name: entryName(j.entry), reason: j.reason })),
    ...(parsed.errorAt !== undefined ? { cutAt: parsed.errorAt } : {}),
  };
}

/** The target of a `.git` file ("gitdir: PATH"), or undefined when it is not one. */
export function gitFileTarget(text: string): string | undefined {
  const match = /^gitdir: (.+?)\r?\n?$/.exec(text.split('\n')[0] ?? '');
  return match?.[1];
}

/**
 * Whether a folder's names make it a git directory for git's discovery (setup.c,
 * is_git_directory): HEAD plus objects and refs, or HEAD plus commondir.
 */
export function looksLikeGitDir(names: ReadonlySet<string>): boolean {
  return names.has('HEAD') && (names.has('commondir') || (names.has('objects') && names.has('refs')));
}
