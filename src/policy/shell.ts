// Pure analysis of a bash syntax tree (tree-sitter-bash): the simple commands, their literal
// argv, the redirections, and every construct whose effect cannot be proven harmless. Anything the
// walker does not know is a hazard, so new grammar nodes fail closed.

/** The part of a tree-sitter node this module reads; web-tree-sitter's Node satisfies it. */
export interface SyntaxNodeLike {
  type: string;
  text: string;
  isNamed: boolean;
  isMissing: boolean;
  hasError: boolean;
  children: readonly (SyntaxNodeLike | null)[];
}

export interface SimpleCommand {
  argv: string[];
  /** An unquoted `*`, `?` or `[` appears: the shell may expand it into arguments nobody saw. */
  globbed: boolean;
  /** Per argv index: that word holds an unquoted glob character. */
  globs: boolean[];
}

export interface Redirect {
  operator: string;
  target: string;
  /** The redirection writes (or truncates) its target. */
  writes: boolean;
}

export type ShellAnalysis =
  | { ok: true; commands: SimpleCommand[]; redirects: Redirect[]; hazards: string[] }
  | { ok: false; error: string };

const SEPARATORS = new Set([';', '\n', '&&', '||', '|', '|&', ';;']);

const STATEMENT_HAZARDS: Record<string, string> = {
  subshell: 'a subshell ( … )',
  compound_statement: 'a command group { … }',
  function_definition: 'a function definition',
  if_statement: 'an if statement',
  while_statement: 'a loop',
  for_statement: 'a loop',
  c_style_for_statement: 'a loop',
  case_statement: 'a case statement',
  negated_command: 'a negated command (!)',
  test_command: 'a test expression [[ … ]]',
  declaration_command: 'a declaration (export/declare/local/readonly)',
  unset_command: 'unset',
  variable_assignment: 'a variable assignment',
  variable_assignments: 'a variable assignment',
};

const WORD_HAZARDS: Record<string, string> = {
  command_substitution: 'command substitution $( … ) or backticks',
  process_substitution: 'process substitution <( … ) or >( … )',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: shell syntax, not a template
  expansion: 'parameter expansion ${ … }',
  simple_expansion: 'parameter expansion $…',
  arithmetic_expansion: 'arithmetic expansion $(( … ))',
  brace_expression: 'brace expansion { … }',
  ansi_c_string: "ANSI-C quoting $'…'",
  translated_string: 'a translated string $"…"',
};

export function analyzeShell(root: SyntaxNodeLike): ShellAnalysis {
  const parseError = findParseError(root);
  if (parseError) return { ok: false, error: parseError };
  const result = { commands: [] as SimpleCommand[], redirects: [] as Redirect[], hazards: [] as string[] };
  walkStatements(root, result);
  return { ok: true, ...result, hazards: [...new Set(result.hazards)] };
}

function findParseError(node: SyntaxNodeLike): string | undefined {
  if (node.type === 'ERROR') return `cannot parse the command near "${clip(node.text)}"`;
  if (node.isMissing) return `the command is incomplete: missing "${node.type}" (an unterminated quote?)`;
  if (!node.hasError) return undefined;
  for (const child of node.children) {
    const found = child && findParseError(child);
    if (found) return found;
  }
  return 'cannot parse the command';
}

type Sink = { commands: SimpleCommand[]; redirects: Redirect[]; hazards: string[] };

function walkStatements(node: SyntaxNodeLike, sink: Sink): void {
  for (const child of node.children) {
    if (!child) continue;
    if (!child.isNamed) {
      if (child.type === '&') sink.hazards.push('a background job (&)');
      else if (!SEPARATORS.has(child.type)) sink.hazards.push(`"${child.type}"`);
      continue;
    }
    walkStatement(child, sink);
  }
}

function walkStatement(node: SyntaxNodeLike, sink: Sink): void {
  switch (node.type) {
    case 'comment':
      return;
    case 'program':
    case 'list':
    case 'pipeline':
      walkStatements(node, sink);
      return;
    case 'redirected_statement':
      for (const child of node.children) {
        if (!child) continue;
        if (isRedirect(child)) addRedirect(child, sink);
        else if (child.isNamed) walkStatement(child, sink);
      }
      return;
    case 'command':
      addCommand(node, sink);
      return;
    default:
      sink.hazards.push(STATEMENT_HAZARDS[node.type] ?? `an unsupported construct (${node.type})`);
  }
}

function isRedirect(node: SyntaxNodeLike): boolean {
  return (
    node.type === 'file_redirect' || node.type === 'heredoc_redirect' || node.type === 'herestring_redirect'
  );
}

function addRedirect(node: SyntaxNodeLike, sink: Sink): void {
  if (node.type === 'heredoc_redirect') {
    sink.hazards.push('a here document');
    return;
  }
  if (node.type === 'herestring_redirect') {
    sink.hazards.push('a here string (<<<)');
    return;
  }
  let operator = '';
  let destination: SyntaxNodeLike | undefined;
  for (const child of node.children) {
    if (!child) continue;
    if (!child.isNamed) operator = child.type;
    else if (child.type !== 'file_descriptor') destination = child;
  }
  if (!destination) {
    sink.hazards.push('a redirection without a target');
    return;
  }
  // `2>&1`, `>&2`, `<&0`: descriptor duplication opens no file.
  if ((operator === '>&' || operator === '<&') && /^\d+$|^-$/.test(destination.text)) return;
  const target = literalWord(destination, sink);
  if (target === undefined) return;
  if (target.globbed) {
    sink.hazards.push('a glob in a redirection');
    return;
  }
  const writes = operator !== '<';
  sink.redirects.push({ operator, target: target.value, writes });
}

function addCommand(node: SyntaxNodeLike, sink: Sink): void {
  const argv: string[] = [];
  const globs: boolean[] = [];
  let complete = true;
  for (const child of node.children) {
    if (!child) continue;
    if (child.type === 'variable_assignment') {
      sink.hazards.push('an assignment before a command');
      complete = false;
      continue;
    }
    if (isRedirect(child)) {
      addRedirect(child, sink);
      continue;
    }
    if (!child.isNamed) {
      sink.hazards.push(`"${child.type}"`);
      complete = false;
      continue;
    }
    const word = child.type === 'command_name' ? firstNamed(child) : child;
    const literal = word ? literalWord(word, sink) : undefined;
    if (!literal) {
      complete = false;
      continue;
    }
    if (child.type === 'command_name' && literal.globbed) sink.hazards.push('a glob in the command name');
    globs.push(literal.globbed);
    argv.push(literal.value);
  }
  if (complete && argv.length > 0) sink.commands.push({ argv, globbed: globs.some(Boolean), globs });
  else if (argv.length === 0) sink.hazards.push('a command without a literal name');
}

function firstNamed(node: SyntaxNodeLike): SyntaxNodeLike | undefined {
  return node.children.find((child): child is SyntaxNodeLike => !!child?.isNamed);
}

/** The literal value of a word, or undefined (and a hazard recorded) when it expands at run time. */
function literalWord(node: SyntaxNodeLike, sink: Sink): { value: string; globbed: boolean } | undefined {
  switch (node.type) {
    case 'word':
    case 'number':
      // `~user`, `~+` and `~-` expand to folders the policy cannot know; `~` and `~/` are the home folder.
      if (/^~[^/]/.test(node.text)) {
        sink.hazards.push('tilde expansion of ~user, ~+ or ~-');
        return undefined;
      }
      return { value: unescapeUnquoted(node.text), globbed: /(^|[^\\])[*?[]/.test(node.text) };
    case 'raw_string':
      return { value: node.text.slice(1, -1), globbed: false };
    case 'string': {
      let value = '';
      for (const child of node.children) {
        if (!child?.isNamed) continue;
        if (child.type !== 'string_content') {
          sink.hazards.push(WORD_HAZARDS[child.type] ?? `an unsupported expansion (${child.type})`);
          return undefined;
        }
        value += child.text.replace(/\\([$`"\\\n])/g, (_, c: string) => (c === '\n' ? '' : c));
      }
      return { value, globbed: false };
    }
    case 'concatenation': {
      let value = '';
      let globbed = false;
      for (const child of node.children) {
        if (!child) continue;
        const part = child.isNamed ? literalWord(child, sink) : { value: child.text, globbed: false };
        if (!part) return undefined;
        value += part.value;
        globbed ||= part.globbed;
      }
      return { value, globbed };
    }
    default:
      sink.hazards.push(WORD_HAZARDS[node.type] ?? `an unsupported word (${node.type})`);
      return undefined;
  }
}

function unescapeUnquoted(text: string): string {
  return text.replace(/\\\n/g, '').replace(/\\(.)/gs, '$1');
}

function clip(text: string): string {
  const line = text.split('\n')[0] ?? '';
  return line.length > 40 ? `${line.slice(0, 40)}…` : line;
}
