var __defProp = Object.defineProperty;
var __getOwnPropDesc = Object.getOwnPropertyDescriptor;
var __getOwnPropNames = Object.getOwnPropertyNames;
var __hasOwnProp = Object.prototype.hasOwnProperty;
var __export = (target, all) => {
  for (var name in all)
    __defProp(target, name, { get: all[name], enumerable: true });
};
var __copyProps = (to, from, except, desc) => {
  if (from && typeof from === "object" || typeof from === "function") {
    for (let key of __getOwnPropNames(from))
      if (!__hasOwnProp.call(to, key) && key !== except)
        __defProp(to, key, { get: () => from[key], enumerable: !(desc = __getOwnPropDesc(from, key)) || desc.enumerable });
  }
  return to;
};
var __toCommonJS = (mod) => __copyProps(__defProp({}, "__esModule", { value: true }), mod);

// prof2.ts
var prof2_exports = {};
__export(prof2_exports, {
  main: () => main
});
module.exports = __toCommonJS(prof2_exports);

// ../../work/wt/allowlist/src/policy/programs/options.ts
function getopt(short, long = "", extra = {}) {
  const shortSpec = {};
  for (const [, letter, colons] of short.matchAll(/([^:])(:{0,2})/g)) {
    shortSpec[letter] = colons === ":" ? "value" : colons === "::" ? "glued" : "none";
  }
  const longSpec = {};
  for (const entry of long.split(/\s+/).filter(Boolean)) {
    const [name = "", arity] = entry.split(/(?==)/);
    longSpec[name] = arity === "=" ? "value" : arity === "=?" ? "glued" : "none";
  }
  return { short: shortSpec, long: longSpec, ...extra };
}
function extend(spec, short, long = "") {
  const more = getopt(short, long);
  return { ...spec, short: { ...spec.short, ...more.short }, long: { ...spec.long, ...more.long } };
}
function resolveLong(name, long, abbreviations = true) {
  if (Object.hasOwn(long, name)) return { name };
  if (!abbreviations || name === "") return void 0;
  const candidates = Object.keys(long).filter((known) => known.startsWith(name));
  if (candidates.length === 1) return { name: candidates[0] };
  return candidates.length > 1 ? { ambiguous: candidates } : void 0;
}
function parseOptions(args, spec, globs = []) {
  const short = spec.short ?? {};
  const long = spec.long ?? {};
  const out = { options: [], operands: [], unknown: [], ambiguous: [], rest: [] };
  let index = 0;
  while (index < args.length) {
    const word = args[index];
    index += 1;
    if (word === "--") {
      out.operands.push(...args.slice(index));
      break;
    }
    if (globs[index - 1] || !word.startsWith("-") || word === "-") {
      if (spec.stopAtOperand) {
        out.rest = args.slice(index - 1);
        break;
      }
      out.operands.push(word);
      continue;
    }
    if (word.startsWith("--")) {
      index = readLong(word, args, index, long, spec.abbreviations ?? true, out);
      continue;
    }
    index = readShortBundle(word, args, index, short, out);
  }
  return out;
}
function readLong(word, args, index, long, abbreviations, out) {
  const eq = word.indexOf("=");
  const written = eq === -1 ? word.slice(2) : word.slice(2, eq);
  const glued = eq === -1 ? void 0 : word.slice(eq + 1);
  const resolved = resolveLong(written, long, abbreviations);
  if (resolved === void 0) {
    out.unknown.push(word);
    return index;
  }
  if ("ambiguous" in resolved) {
    out.ambiguous.push(word);
    return index;
  }
  const arity = long[resolved.name];
  if (glued !== void 0) out.options.push({ name: resolved.name, value: glued, word });
  else if (arity === "value" && index < args.length) {
    out.options.push({ name: resolved.name, value: args[index], word });
    return index + 1;
  } else out.options.push({ name: resolved.name, word });
  return index;
}
function readShortBundle(word, args, index, short, out) {
  for (let at = 1; at < word.length; at++) {
    const letter = word[at];
    const arity = short[letter];
    if (arity === void 0) {
      out.unknown.push(`-${letter}`);
      continue;
    }
    if (arity === "none") {
      out.options.push({ name: letter, word });
      continue;
    }
    const glued = word.slice(at + 1);
    if (glued !== "" || arity === "glued") {
      out.options.push({ name: letter, ...glued !== "" ? { value: glued } : {}, word });
      return index;
    }
    if (index < args.length) {
      out.options.push({ name: letter, value: args[index], word });
      return index + 1;
    }
    out.options.push({ name: letter, word });
    return index;
  }
  return index;
}
function named(parsed, ...names) {
  return parsed.options.filter((option) => names.includes(option.name));
}

// ../../work/wt/allowlist/src/policy/programs/types.ts
function judgement(partial = {}) {
  return { writes: [], reads: [], trees: [], ...partial };
}
function refuse(reason) {
  return judgement({ refused: reason });
}

// ../../work/wt/allowlist/src/policy/programs/files.ts
function parseArgs(words, spec) {
  return parseOptions(words.argv.slice(1), spec, words.globs.slice(1));
}
function operandsWritten(spec, ...reads) {
  return (words) => {
    const parsed = parseArgs(words, spec);
    const read = named(parsed, ...reads).map((option) => option.value ?? "");
    return judgement({ writes: parsed.operands, reads: read.filter(Boolean) });
  };
}
var CP = getopt(
  "abdfHilLnPpRrsS:t:TuvxZ",
  `archive attributes-only backup=? copy-contents debug dereference force interactive link no-clobber
   no-dereference preserve=? no-preserve= parents recursive reflink=? remove-destination sparse=
   strip-trailing-slashes symbolic-link suffix= target-directory= no-target-directory update=?
   one-file-system context=? keep-directory-symlink exchange help version verbose relative logical
   physical`
);
var INSTALL = extend(
  CP,
  "Cc:Dg:m:o:",
  "compare directory group= mode= owner= preserve-timestamps strip strip-program="
);
function copyLike(program) {
  return (words) => {
    const parsed = parseArgs(words, program === "install" ? INSTALL : CP);
    if (program === "install" && named(parsed, "s", "strip", "strip-program").length > 0) {
      return refuse("--strip runs the strip program");
    }
    if (program === "install" && named(parsed, "d", "directory").length > 0) {
      return judgement({ writes: parsed.operands });
    }
    const target = named(parsed, "t", "target-directory").at(-1)?.value;
    const operands = parsed.operands;
    let destination;
    let sources;
    if (target !== void 0) {
      destination = [target];
      sources = operands;
    } else if (operands.length >= 2) {
      destination = [operands.at(-1)];
      sources = operands.slice(0, -1);
    } else {
      destination = program === "ln" && operands.length === 1 ? ["."] : [];
      sources = operands;
    }
    const recursive = named(parsed, "r", "R", "a", "recursive", "archive").length > 0;
    return judgement({
      writes: program === "mv" ? [...destination, ...sources] : destination,
      trees: recursive && program === "cp" ? sources : []
    });
  };
}
var MODE_WORD = /^-[rwxXst]+$/;
var OWNER = getopt(
  "cfvRhHLP",
  "changes silent quiet recursive reference= preserve-root no-preserve-root dereference no-dereference from= help version verbose"
);
function firstOperandIsNoFile(words) {
  const keep = words.argv.map((arg, index) => index === 0 || !MODE_WORD.test(arg));
  const mode = keep.includes(false);
  const parsed = parseArgs(
    {
      argv: words.argv.filter((_, index) => keep[index]),
      globs: words.globs.filter((_, index) => keep[index])
    },
    OWNER
  );
  const reference = named(parsed, "reference").map((option) => option.value ?? "");
  const files = reference.length > 0 || mode ? parsed.operands : parsed.operands.slice(1);
  return judgement({ writes: files, reads: reference });
}
function dd(words) {
  const writes = [];
  const reads = [];
  for (const arg of words.argv.slice(1)) {
    if (arg.startsWith("of=")) writes.push(arg.slice(3));
    else if (arg.startsWith("if=")) reads.push(arg.slice(3));
  }
  return judgement({ writes, reads });
}
var SPLIT = getopt(
  "a:b:C:l:n:t:dxeu",
  `suffix-length= additional-suffix= bytes= line-bytes= lines= number= separator= numeric-suffixes=?
   hex-suffixes=? elide-empty-files unbuffered filter= help version verbose`
);
function split(words) {
  const parsed = parseArgs(words, SPLIT);
  if (named(parsed, "filter").length > 0) return refuse("--filter runs a shell command");
  return judgement({ writes: [`${parsed.operands[1] ?? "x"}aa`] });
}
var UNIQ = getopt(
  "f:s:w:cdDiuz",
  `skip-fields= skip-chars= check-chars= all-repeated=? group=? count repeated ignore-case unique
   zero-terminated help version`
);
var FILE_RULES = {
  cp: copyLike("cp"),
  mv: copyLike("mv"),
  ln: copyLike("ln"),
  install: copyLike("install"),
  tee: operandsWritten(getopt("aip", "append ignore-interrupts output-error=? help version")),
  rm: operandsWritten(
    getopt(
      "fiIrRdv",
      "force interactive=? one-file-system no-preserve-root preserve-root=? recursive dir help version verbose"
    )
  ),
  rmdir: operandsWritten(getopt("pv", "ignore-fail-on-non-empty parents help version verbose")),
  mkdir: operandsWritten(getopt("m:pvZ", "mode= parents context=? help version verbose")),
  touch: operandsWritten(
    getopt("acd:fhmr:t:", "no-create date= no-dereference reference= time= help version"),
    "r",
    "reference"
  ),
  truncate: operandsWritten(
    getopt("cor:s:", "no-create io-blocks reference= size= help version"),
    "r",
    "reference"
  ),
  shred: operandsWritten(
    getopt("fn:s:uvxz", "force iterations= random-source= size= remove=? exact zero help version verbose"),
    "random-source"
  ),
  unlink: operandsWritten(getopt("", "help version")),
  chmod: firstOperandIsNoFile,
  chown: firstOperandIsNoFile,
  chgrp: firstOperandIsNoFile,
  dd,
  split,
  uniq: (words) => judgement({ writes: parseArgs(words, UNIQ).operands.slice(1, 2) })
};

// ../../work/wt/allowlist/src/policy/programs/archives.ts
var TAR = getopt(
  "Acdrtuxf:C:T:X:zjJZaI:vkmopPhOSWwb:F:g:GK:L:MN:RsUV:Bl",
  `create extract get list append update catenate concatenate diff compare delete file= directory=
   files-from= exclude-from= exclude= gzip gunzip bzip2 xz lzip lzma lzop zstd compress uncompress
   auto-compress use-compress-program= verbose keep-old-files keep-newer-files skip-old-files overwrite
   overwrite-dir unlink-first recursive-unlink touch no-same-owner same-owner preserve-permissions
   same-permissions no-same-permissions absolute-names dereference to-stdout to-command= sparse
   interactive confirmation blocking-factor= info-script= new-volume-script= listed-incremental=
   incremental starting-file= tape-length= multi-volume after-date= newer= newer-mtime= label=
   checkpoint=? checkpoint-action= index-file= rsh-command= rmt-command= force-local strip-components=
   transform= xform= wildcards no-wildcards anchored no-anchored null no-null one-file-system
   owner= group= mode= mtime= sort= format= posix numeric-owner totals=? warning= show-transformed-names
   exclude-vcs exclude-vcs-ignores exclude-caches exclude-backups record-size= ignore-zeros
   occurrence=? remove-files verify no-recursion recursion xattrs no-xattrs acls selinux help version`
);
function oldStyle(args) {
  const [first, ...rest] = args;
  if (first === void 0 || first.startsWith("-")) return void 0;
  const out = [];
  for (const letter of first) {
    out.push(`-${letter}`);
    if (TAR.short?.[letter] === "value" && rest.length > 0) out.push(rest.shift());
  }
  return [...out, ...rest];
}
var TAR_RUNS = [
  "to-command",
  "use-compress-program",
  "I",
  "checkpoint-action",
  "info-script",
  "F",
  "new-volume-script",
  "rsh-command",
  "rmt-command",
  "T",
  "files-from"
];
function tar(words) {
  const args = oldStyle(words.argv.slice(1));
  const parsed = parseArgs(args ? { argv: ["tar", ...args], globs: [] } : words, TAR);
  const runs = named(parsed, ...TAR_RUNS)[0];
  if (runs) return refuse(`${runs.word} runs a program or reads file names rune cannot check`);
  if (parsed.ambiguous.length > 0) return refuse(`${parsed.ambiguous[0]} is an ambiguous option`);
  const archive = named(parsed, "f", "file").at(-1)?.value;
  if (archive?.includes(":") && !archive.startsWith("/") && named(parsed, "force-local").length === 0) {
    return refuse(`${archive} names a remote archive (tar runs rsh); add --force-local for a local file`);
  }
  const dir = named(parsed, "C", "directory").at(-1)?.value;
  const extract = named(parsed, "x", "extract", "get").length > 0;
  if (extract && named(parsed, "P", "absolute-names").length > 0) {
    return refuse("-P extracts absolute names anywhere");
  }
  const creates = named(
    parsed,
    "c",
    "create",
    "r",
    "append",
    "u",
    "update",
    "A",
    "catenate",
    "concatenate",
    "delete"
  );
  const writes = [
    ...creates.length > 0 && archive && archive !== "-" ? [archive] : [],
    ...extract ? [dir ?? "."] : [],
    ...named(parsed, "g", "listed-incremental", "index-file").map((option) => option.value ?? "")
  ];
  const under = (path) => dir && !path.startsWith("/") && !path.startsWith("~") ? `${dir}/${path}` : path;
  return judgement({
    writes: writes.filter(Boolean),
    reads: [...creates.length === 0 && archive && archive !== "-" ? [archive] : []],
    trees: creates.length > 0 ? parsed.operands.map(under) : []
  });
}
var ZIP = getopt("b:d:i:n:O:P:t:x:Z:0123456789AcDeFfgjJklLmoqrRSTuvVwXyz@", "unzip-command= help version");
function zip(words) {
  const parsed = parseArgs(words, ZIP);
  if (words.argv.some((arg) => arg === "-TT" || arg.startsWith("--unzip-command"))) {
    return refuse("-TT runs a command to test the archive");
  }
  const [archive, ...files] = parsed.operands;
  const recursive = named(parsed, "r", "R").length > 0;
  return judgement({ writes: archive ? [archive] : [], trees: recursive ? files : [] });
}
var UNZIP = getopt("d:x:P:ZcfhlnopqtTuvVaLjCKMsXY", "");
function unzip(words) {
  const parsed = parseArgs(words, UNZIP);
  const toStdout = named(parsed, "p", "c", "l", "t", "v", "Z").length > 0;
  return judgement({
    writes: toStdout ? [] : [named(parsed, "d").at(-1)?.value ?? "."],
    reads: parsed.operands.slice(0, 1)
  });
}
function compressor(short, long) {
  const spec = getopt(short, long);
  return (words) => {
    const parsed = parseArgs(words, spec);
    const stdout = named(parsed, "c", "stdout", "to-stdout", "t", "test", "l", "list").length > 0;
    const output = named(parsed, "o", "output-dir-flat").map((option) => option.value ?? "");
    return judgement({ writes: stdout ? output : [...parsed.operands, ...output] });
  };
}
var GZIP = compressor(
  "cdfhklLnNqrS:tvV123456789",
  "stdout to-stdout decompress uncompress force help keep list license no-name name quiet recursive rsyncable suffix= synchronous test verbose version fast best"
);
var XZ = compressor(
  "zdtlkcfF:C:T:M:qvhHV0123456789e",
  "compress decompress uncompress test list keep stdout to-stdout force format= check= threads= memlimit= quiet verbose help long-help version extreme fast best suffix= single-stream no-sparse files= files0="
);
var ZSTD = compressor(
  "zdcfklqrtvVhHo:D:T:M:B:0123456789#:",
  "compress decompress uncompress stdout force keep quiet verbose test rm output-dir-flat= format= ultra long=? fast=? threads= memory= patch-from= no-progress help version"
);
var PATCH = getopt(
  "bB:cd:D:eEfF:g:i:lnNo:p:r:RstTuvV:xY:z:Z",
  `backup prefix= context directory= ifdef= ed remove-empty-files force fuzz= get= input= ignore-whitespace
   normal forward output= strip= reject-file= reverse silent quiet batch set-time set-utc unified
   version-control= basename-prefix= suffix= dry-run posix binary merge=? help version verbose`
);
function patch(words) {
  const parsed = parseArgs(words, PATCH);
  if (named(parsed, "dry-run").length > 0) return judgement();
  const dir = named(parsed, "d", "directory").at(-1)?.value ?? ".";
  const outputs = named(parsed, "o", "output", "r", "reject-file").map((option) => option.value ?? "");
  return judgement({ writes: [dir, ...outputs, ...parsed.operands.slice(0, 1)].filter(Boolean) });
}
var ARCHIVE_RULES = {
  tar,
  zip,
  unzip,
  gzip: GZIP,
  gunzip: GZIP,
  bzip2: GZIP,
  bunzip2: GZIP,
  xz: XZ,
  unxz: XZ,
  zstd: ZSTD,
  unzstd: ZSTD,
  patch
};

// ../../work/wt/allowlist/src/policy/programs/awk.ts
var AWK = getopt(
  "F:v:f:e:E:i:l:o::p::d::D::W:bcCgnNPrsStVMOL::h",
  `field-separator= assign= file= source= exec= include= load= pretty-print=? profile=? dump-variables=?
   debug=? characters-as-bytes traditional copyright gen-pot non-decimal-data use-lc-numeric posix
   re-interval sandbox lint-old version bignum optimize no-optimize lint=? csv help`
);
var AWK_REFUSED = "f file E exec i include l load o pretty-print p profile d dump-variables D debug W".split(" ");
var awk = (words) => {
  const parsed = parseArgs(words, AWK);
  const odd = parsed.unknown[0] ?? parsed.ambiguous[0];
  if (odd) return refuse(`${odd} is not an option rune knows`);
  const hit = named(parsed, ...AWK_REFUSED)[0];
  if (hit) return refuse(`${hit.word} reads a program file, loads code or writes files of its own`);
  const sources = named(parsed, "e", "source").map((option) => option.value ?? "");
  const program = sources.length > 0 ? sources.join("\n") : parsed.operands[0] ?? "";
  const checked = awkProgram(program);
  return checked.problem ? refuse(checked.problem) : judgement({ writes: checked.writes });
};
function endsOperand(token) {
  if (!token) return false;
  if (token.kind === "number" || token.kind === "string" || token.kind === "regex") return true;
  if (token.kind === "name")
    return !["print", "printf", "return", "in", "getline", "case"].includes(token.text);
  return token.kind === "op" && [")", "]", "$", "++", "--"].includes(token.text);
}
var OPERATORS = [
  "||",
  "&&",
  "|&",
  ">>",
  "<=",
  ">=",
  "==",
  "!=",
  "++",
  "--",
  "+=",
  "-=",
  "*=",
  "/=",
  "%=",
  "^=",
  "**",
  "!~"
];
function tokenize(text) {
  const tokens = [];
  let at = 0;
  while (at < text.length) {
    const ch = text[at];
    if (ch === " " || ch === "	" || ch === "\\" && text[at + 1] === "\n") {
      at += ch === "\\" ? 2 : 1;
    } else if (ch === "#") {
      while (at < text.length && text[at] !== "\n") at++;
    } else if (ch === "\n") {
      tokens.push({ kind: "newline", text: ch });
      at++;
    } else if (ch === '"') {
      let end = at + 1;
      while (end < text.length && text[end] !== '"' && text[end] !== "\n") end += text[end] === "\\" ? 2 : 1;
      if (text[end] !== '"') return "program has an unterminated string";
      tokens.push({ kind: "string", text: text.slice(at + 1, end) });
      at = end + 1;
    } else if (ch === "/" && !endsOperand(tokens.at(-1))) {
      const end = regexEnd(text, at + 1);
      if (typeof end === "string") return end;
      tokens.push({ kind: "regex", text: text.slice(at + 1, end) });
      at = end + 1;
    } else if (/[A-Za-z_]/.test(ch)) {
      const name = /^[A-Za-z_]\w*/.exec(text.slice(at))[0];
      tokens.push({ kind: "name", text: name });
      at += name.length;
    } else if (/[\d.]/.test(ch)) {
      const number = /^[\d.]+([eE][+-]?\d+)?|^./.exec(text.slice(at))[0];
      tokens.push({ kind: "number", text: number });
      at += number.length;
    } else {
      const op = OPERATORS.find((candidate) => text.startsWith(candidate, at)) ?? ch;
      tokens.push({ kind: "op", text: op });
      at += op.length;
    }
  }
  return tokens;
}
function regexEnd(text, start) {
  let at = start;
  let bracket = false;
  while (at < text.length && text[at] !== "\n") {
    const ch = text[at];
    if (ch === "\\") at += 2;
    else if (bracket) {
      if (ch === "/")
        return "program has a / inside a bracket expression of a regular expression (awks read it differently)";
      if (ch === "]") bracket = false;
      at++;
    } else if (ch === "[") {
      bracket = true;
      at += text[at + 1] === "^" ? 2 : 1;
      if (text[at] === "]") at++;
    } else if (ch === "/") return at;
    else at++;
  }
  return "program has an unterminated regular expression";
}
function awkProgram(text) {
  const tokens = tokenize(text);
  if (typeof tokens === "string") return { problem: tokens, writes: [] };
  const writes = [];
  let printDepth;
  let depth = 0;
  for (let index = 0; index < tokens.length; index++) {
    const token = tokens[index];
    const problem = tokenProblem(token, tokens, index);
    if (problem) return { problem, writes };
    if (token.kind === "newline" || token.kind === "op" && (token.text === ";" || token.text === "}")) {
      printDepth = void 0;
    } else if (token.kind === "name" && (token.text === "print" || token.text === "printf"))
      printDepth = depth;
    else if (token.kind === "op" && "([{".includes(token.text)) depth++;
    else if (token.kind === "op" && ")]".includes(token.text)) depth--;
    else if (token.kind === "op" && (token.text === ">" || token.text === ">>") && printDepth === depth) {
      const target = tokens[index + 1];
      const after = tokens[index + 2];
      const ends = !after || after.kind === "newline" || [";", "}"].includes(after.text);
      if (target?.kind !== "string" || !ends)
        return { problem: 'print > with a target that is not a plain "file name"', writes };
      writes.push(target.text);
      index++;
    }
  }
  return { writes };
}
function tokenProblem(token, tokens, index) {
  if (token.kind === "op") {
    if (token.text === "|" || token.text === "|&")
      return `${token.text} runs a command (a pipe to or from it)`;
    if (token.text === "@") return "@ (gawk includes, extensions and indirect calls) is not judged";
    return void 0;
  }
  if (token.kind !== "name") return void 0;
  if (token.text === "system") return "system() runs a command";
  if (token.text === "ARGV" || token.text === "ARGC") return `${token.text} changes which files awk reads`;
  if (token.text === "getline" && readsFile(tokens, index + 1))
    return "getline < FILE reads a file rune cannot check";
  return void 0;
}
function readsFile(tokens, start) {
  let at = start;
  const token = tokens[at];
  if (token?.kind === "name" || token?.kind === "op" && token.text === "$") {
    at++;
    if (token.text === "$") at++;
    if (tokens[at]?.text === "[" || tokens[at]?.text === "(") {
      const open = tokens[at].text;
      const close = open === "[" ? "]" : ")";
      let depth = 0;
      for (; at < tokens.length; at++) {
        if (tokens[at].text === open) depth++;
        else if (tokens[at].text === close && --depth === 0) break;
      }
      at++;
    }
  }
  return tokens[at]?.kind === "op" && tokens[at].text === "<";
}

// ../../work/wt/allowlist/src/policy/programs/build.ts
var MAKE = getopt(
  "bBC:d::eE:f:hiI:j::kl::L:nNo:O::pqrRsStvwW:",
  `always-make directory= debug=? environment-overrides eval= file= makefile= help ignore-errors
   include-dir= jobs=? jobserver-auth= jobserver-style= keep-going load-average=? max-load=?
   check-symlink-times just-print dry-run recon assume-old= old-file= output-sync=? print-data-base
   question no-builtin-rules no-builtin-variables shuffle=? silent quiet no-silent stop touch trace
   version print-directory no-print-directory what-if= new-file= assume-new= warn-undefined-variables
   no-keep-going`
);
var MAKE_ASSIGNMENT = /^[^\s=:#]+\s*(:{0,3}|[+?!])=/;
var STDIN_FILES = /* @__PURE__ */ new Set(["-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"]);
function make(words) {
  const parsed = parseArgs(words, MAKE);
  if (parsed.ambiguous.length > 0) return refuse(`${parsed.ambiguous[0]} is an ambiguous option`);
  const evaluated = named(parsed, "E", "eval")[0];
  if (evaluated) return refuse(`${evaluated.word} evaluates make code given on the command line`);
  const stdin = named(parsed, "f", "file", "makefile").find((option) => STDIN_FILES.has(option.value ?? ""));
  if (stdin) return refuse(`${stdin.word} ${stdin.value} reads the makefile from standard input`);
  const assignment = parsed.operands.find((operand) => MAKE_ASSIGNMENT.test(operand));
  if (assignment) {
    return refuse(
      `the assignment ${assignment.split("=")[0]}= can change the commands recipes run (CC=, SHELL=)`
    );
  }
  const touched = named(parsed, "t", "touch").length > 0 ? parsed.operands : [];
  return judgement({ writes: touched });
}
var NPM_SUBCOMMANDS = new Set(
  `test t tst run run-script rum urn start stop restart ls list la ll view info show v outdated explain
   why audit ci clean-install ic install-clean isntall-clean install i add in ins inst insta instal isnt
   isnta isntal isntall uninstall remove rm r un unlink update up upgrade udpate prune dedupe ddp pack
   query fund root prefix sbom pkg version rebuild rb get search ping whoami`.split(/\s+/)
);
var NPM_FLAGS = new Map(
  `silent s quiet q loglevel= verbose d dd ddd json long l parseable p all a depth= workspace= w=
   workspaces ws include-workspace-root if-present ignore-scripts omit= include= production save S
   save-dev D save-exact E save-optional O save-peer save-prod P no-save dry-run prefer-offline
   prefer-online offline audit no-audit fund no-fund legacy-peer-deps strict-peer-deps no-package-lock
   package-lock-only foreground-scripts progress no-progress color= no-color yes y no install-links
   global-style no-optional force f tag= access= otp= before= audit-level= os= cpu= libc= prefix= C=
   pack-destination= ci`.split(/\s+/).map((entry) => [entry.replace(/=$/, ""), entry.endsWith("=")])
);
function npm(words) {
  const args = words.argv.slice(1);
  const writes = [];
  const reads = [];
  let subcommand;
  for (let index = 0; index < args.length; index++) {
    const word = args[index];
    if (word === "--") break;
    if (!word.startsWith("-") || word === "-") {
      subcommand ??= word;
      continue;
    }
    const eq = word.indexOf("=");
    const name = (eq === -1 ? word : word.slice(0, eq)).replace(/^--?/, "");
    const takesValue = NPM_FLAGS.get(name);
    if (takesValue === void 0) {
      return refuse(
        `${word.split("=")[0]} is not an npm setting rune judges (npm settings can name programs: --script-shell, --node-options, \u2026)`
      );
    }
    if (!takesValue) continue;
    const value = eq === -1 ? args[++index] ?? "" : word.slice(eq + 1);
    if (name === "pack-destination") writes.push(value);
    else if (name === "prefix" || name === "C") reads.push(value);
  }
  if (subcommand !== void 0 && !NPM_SUBCOMMANDS.has(subcommand)) {
    return refuse(
      `${subcommand} is not an npm subcommand rune judges (exec, explore, edit, help, config and init run programs or change settings)`
    );
  }
  return judgement({ writes, reads });
}
var PYTEST = getopt(
  "k:m:p:c:o:r:W:n:xsvqlhVC",
  `junitxml= junit-xml= resultlog= result-log= log-file= basetemp= report-log= debug=? html=
   override-ini= config-file= inifile= pdbcls= rootdir= confcutdir= maxfail= tb= durations=
   import-mode= deselect= ignore= ignore-glob= capture= log-level= log-cli-level= cov= cov-report=
   junit-prefix= co collect-only lf last-failed ff failed-first sw stepwise pdb trace exitfirst
   verbose quiet help version`
);
function pytest(words) {
  const parsed = parseArgs(words, PYTEST);
  const plugin = named(parsed, "p").find((option) => !(option.value ?? "").startsWith("no:"));
  if (plugin) return refuse(`-p ${plugin.value ?? ""} imports a plugin module (only -p no:NAME is judged)`);
  const hit = named(parsed, "c", "config-file", "inifile", "o", "override-ini", "pdbcls")[0];
  if (hit) return refuse(`${hit.word} reads settings or imports code rune cannot check`);
  const writes = named(
    parsed,
    "junitxml",
    "junit-xml",
    "resultlog",
    "result-log",
    "log-file",
    "basetemp",
    "report-log",
    "html",
    "debug"
  ).map((option) => option.value ?? (option.name === "debug" ? "pytestdebug.log" : ""));
  return judgement({ writes: writes.filter(Boolean) });
}
var BUILD_RULES = {
  make,
  gmake: make,
  npm,
  pytest,
  "py.test": pytest
};

// ../../work/wt/allowlist/src/policy/programs/builtins.ts
var INDIRECTION = new Set(
  `sh bash dash zsh ksh mksh yash fish csh tcsh busybox toybox env xargs nohup timeout nice ionice
   stdbuf setsid time watch exec eval source . command builtin trap alias sudo doas su runuser
   pkexec chroot unshare nsenter systemd-run strace ltrace gdb flock script parallel taskset chrt
   prlimit unbuffer expect firejail bwrap npx pnpx bunx fakeroot catchsegv valgrind perf run-parts
   start-stop-daemon setpriv capsh cgexec numactl torsocks proxychains sg newgrp ssh-agent
   dbus-run-session xvfb-run entr inotifywait fc`.split(/\s+/)
);
var CHANGES_SHELL = /* @__PURE__ */ new Set(["hash", "enable", "shopt", "set"]);
var SETS_VARIABLES = new Set(
  `read getopts mapfile readarray let declare typeset local export readonly unset wait`.split(/\s+/)
);
var TEST_OPERATORS = new Set(
  `! ( ) = == != < > -a -o -b -c -d -e -f -g -h -k -L -N -O -G -p -r -s -S -t -u -w -x -z -n
   -eq -ne -lt -le -gt -ge -nt -ot -ef`.split(/\s+/)
);
function testRule(words) {
  const [program, ...args] = words.argv;
  if (program === "[") {
    if (args.at(-1) !== "]") return refuse("without its closing ]");
    args.pop();
  }
  const odd = args.find(
    (arg) => arg.startsWith("-") && arg.length > 1 && !TEST_OPERATORS.has(arg) && !/^-\d+$/.test(arg)
  );
  if (odd) return refuse(`${odd} is not a test operator rune judges (-v and -R read variables)`);
  return judgement({ builtin: true });
}
var BUILTIN_RULES = {
  "[": testRule,
  test: testRule,
  true: () => judgement({ builtin: true }),
  false: () => judgement({ builtin: true }),
  ":": () => judgement({ builtin: true }),
  // bash's printf -v assigns a variable (with the subscript evaluation above).
  printf: (words) => words.argv.slice(1).some((arg) => arg === "-v" || /^-v./.test(arg)) ? refuse("-v assigns a shell variable") : judgement()
};
function indirection(program) {
  if (INDIRECTION.has(program)) return `${program} runs another command`;
  if (CHANGES_SHELL.has(program)) return `${program} changes how the shell runs later commands`;
  if (SETS_VARIABLES.has(program)) return `${program} sets shell variables, which rune does not judge`;
  return void 0;
}

// ../../work/wt/allowlist/src/policy/programs/git.ts
var TOP_LEVEL_FLAGS = /* @__PURE__ */ new Set([
  "-P",
  "--no-pager",
  "--no-replace-objects",
  "--no-lazy-fetch",
  "--no-optional-locks",
  "--no-advice",
  "--literal-pathspecs",
  "--glob-pathspecs",
  "--noglob-pathspecs",
  "--icase-pathspecs",
  "--version",
  "-v",
  "--html-path",
  "--man-path",
  "--info-path"
]);
var ALWAYS_REFUSED = [
  "help",
  "upload-pack",
  "receive-pack",
  "exec",
  "ext-diff",
  "open-files-in-pager",
  "gpg-sign",
  "show-signature",
  "verify-signatures",
  "signed",
  "edit",
  "template",
  "unsafe-paths",
  "allow-unsafe-features",
  "edit-description",
  "edit-todo"
];
var REAL_OPTIONS = /* @__PURE__ */ new Set(["verify", "sign"]);
var NONE = {};
var LOG_LIKE = { writes: { long: ["output"] } };
var BUILTIN_STRATEGIES = /* @__PURE__ */ new Set(["ort", "recursive", "resolve", "octopus", "ours", "subtree"]);
function sequencer(extra = {}) {
  return {
    refuseShort: `eS${extra.refuseShort ?? ""}`,
    refuseLong: ["continue", ...extra.refuseLong ?? []],
    check: (args) => {
      const strategy = optionValue(args, extra.strategyLetter ? "s" : void 0, "strategy");
      if (strategy !== void 0 && !BUILTIN_STRATEGIES.has(strategy)) {
        return refuse(`with strategy "${strategy}" runs the program git-merge-${strategy}`);
      }
      return void 0;
    }
  };
}
var GIT_SUBCOMMANDS = {
  add: { refuseShort: "e" },
  stage: { refuseShort: "e" },
  am: { refuseShort: "S" },
  annotate: NONE,
  apply: NONE,
  archive: { refuseLong: ["remote"], writes: { short: "o", long: ["output"] } },
  blame: NONE,
  branch: NONE,
  bundle: { check: bundle },
  "cat-file": NONE,
  "check-attr": NONE,
  "check-ignore": NONE,
  "check-mailmap": NONE,
  "check-ref-format": NONE,
  checkout: NONE,
  "checkout-index": { check: checkoutIndex },
  cherry: NONE,
  "cherry-pick": sequencer(),
  clean: NONE,
  clone: { refuseShort: "cu", refuseLong: ["config"], check: clone },
  commit: { refuseShort: "ecSt", refuseLong: ["reedit-message"], check: commit },
  "commit-graph": NONE,
  "commit-tree": { refuseShort: "S" },
  config: { check: config },
  "count-objects": NONE,
  describe: NONE,
  diff: LOG_LIKE,
  "diff-files": LOG_LIKE,
  "diff-index": LOG_LIKE,
  "diff-tree": LOG_LIKE,
  "fast-export": { writes: { long: ["export-marks"] }, reads: ["import-marks", "import-marks-if-exists"] },
  "fast-import": {
    writes: { long: ["export-marks", "export-pack-edges"] },
    reads: ["import-marks", "import-marks-if-exists"]
  },
  fetch: { check: urls },
  "for-each-ref": NONE,
  "format-patch": {
    writes: { short: "o", long: ["output-directory"] },
    reads: ["signature-file"],
    check: formatPatch
  },
  fsck: NONE,
  gc: NONE,
  grep: { refuseShort: "O" },
  "hash-object": NONE,
  init: { writes: { long: ["separate-git-dir"] }, check: init },
  "init-db": { writes: { long: ["separate-git-dir"] }, check: init },
  log: LOG_LIKE,
  "ls-files": NONE,
  "ls-remote": { refuseShort: "u", check: urls },
  "ls-tree": NONE,
  merge: sequencer({ strategyLetter: true }),
  "merge-base": NONE,
  "merge-file": { check: mergeFile },
  "merge-tree": NONE,
  mktag: NONE,
  mktree: NONE,
  mv: NONE,
  "name-rev": NONE,
  notes: { check: notes },
  "pack-refs": NONE,
  prune: NONE,
  pull: { refuseShort: "S", check: urls },
  push: { check: urls },
  "range-diff": LOG_LIKE,
  "read-tree": NONE,
  rebase: sequencer({ refuseShort: "ix", refuseLong: ["interactive"], strategyLetter: true }),
  reflog: NONE,
  remote: { check: remote },
  repack: NONE,
  replace: { refuseShort: "e" },
  rerere: NONE,
  reset: NONE,
  restore: NONE,
  revert: sequencer(),
  "rev-list": NONE,
  "rev-parse": NONE,
  rm: NONE,
  shortlog: LOG_LIKE,
  show: LOG_LIKE,
  "show-branch": NONE,
  "show-ref": NONE,
  "sparse-checkout": NONE,
  stash: NONE,
  status: NONE,
  stripspace: NONE,
  switch: NONE,
  "symbolic-ref": NONE,
  tag: { refuseShort: "suev", refuseLong: ["sign", "local-user", "verify"], check: tag },
  "unpack-objects": NONE,
  "update-index": NONE,
  "update-ref": NONE,
  var: NONE,
  "verify-pack": NONE,
  version: NONE,
  whatchanged: LOG_LIKE,
  worktree: { check: worktree },
  "write-tree": NONE
};
function gitRule(words) {
  const args = words.argv.slice(1);
  let index = 0;
  while (index < args.length && args[index].startsWith("-")) {
    const arg = args[index];
    if (arg === "-C") {
      if (index + 1 >= args.length || words.globs[index + 2]) {
        return refuse("-C can change which repository git obeys: it needs one folder, without a glob");
      }
      index += 2;
    } else if (TOP_LEVEL_FLAGS.has(arg) || arg.startsWith("--namespace=")) index += 1;
    else {
      const name2 = arg.startsWith("--") ? arg.split("=")[0] : arg.slice(0, 2);
      return refuse(`${name2} can change configuration, hooks, the pager or which repository git obeys`);
    }
  }
  const name = args[index];
  if (name === void 0) return judgement();
  const sub = Object.hasOwn(GIT_SUBCOMMANDS, name) ? GIT_SUBCOMMANDS[name] : void 0;
  if (!sub) {
    return refuse(
      `${name} is not a git subcommand rune judges (it may run programs, or be an alias or an external git-${name})`
    );
  }
  return judgeSubcommand(name, sub, args.slice(index + 1));
}
function judgeSubcommand(name, sub, rest) {
  const options = optionWords(rest);
  const refusedLong = [...ALWAYS_REFUSED, ...sub.refuseLong ?? []];
  const writeLong = sub.writes?.long ?? [];
  const writes = [];
  const reads = [];
  for (const [position, word] of options) {
    if (word.startsWith("--")) {
      const eq = word.indexOf("=");
      const written = eq === -1 ? word.slice(2) : word.slice(2, eq);
      const matches = (full) => written.length > 0 && full.startsWith(written);
      const hit = (sub.refuseLong ?? []).find((full) => full === written) ?? (REAL_OPTIONS.has(written) ? void 0 : refusedLong.find(matches));
      if (hit) return refuse(`${name} --${hit} ${refusedLongReason(hit)}`);
      const value = () => eq === -1 ? rest[position + 1] ?? "" : word.slice(eq + 1);
      if (writeLong.some(matches)) writes.push(value());
      else if ((sub.reads ?? []).some(matches)) reads.push(value());
      continue;
    }
    for (const [offset, letter] of [...word.slice(1)].entries()) {
      if (sub.refuseShort?.includes(letter))
        return refuse(`${name} -${letter} ${refusedShortReason(name, letter)}`);
      if (sub.writes?.short?.includes(letter)) {
        const glued = word.slice(offset + 2);
        writes.push(glued !== "" ? glued : rest[position + 1] ?? "");
        break;
      }
    }
  }
  const checked = sub.check?.(rest);
  if (checked?.refused) return refuse(`${name} ${checked.refused}`);
  return judgement({
    writes: [...writes, ...checked?.writes ?? []].filter(Boolean),
    reads: [...reads, ...checked?.reads ?? []].filter(Boolean)
  });
}
function optionWords(rest) {
  const out = [];
  for (const [position, word] of rest.entries()) {
    if (word === "--") break;
    if (word.startsWith("-") && word !== "-") out.push([position, word]);
  }
  return out;
}
function refusedLongReason(option) {
  if (option === "help") return "runs man or a browser";
  if ([
    "edit",
    "template",
    "edit-description",
    "edit-todo",
    "reedit-message",
    "continue",
    "interactive"
  ].includes(option))
    return "opens an editor";
  if (["gpg-sign", "show-signature", "verify-signatures", "signed", "sign", "local-user", "verify"].includes(
    option
  ))
    return "runs gpg";
  if (option === "config") return "can install hooks or set programs that run";
  return "runs a program of the caller\u2019s choosing";
}
function refusedShortReason(name, letter) {
  if (letter === "S" || name === "tag" && "suv".includes(letter)) return "runs gpg";
  if (letter === "O") return "runs a pager";
  if (letter === "x") return "runs commands";
  if (letter === "u" || name === "clone" && letter === "c")
    return "runs a program or sets configuration that does";
  return "opens an editor";
}
function optionValue(args, letter, long) {
  const parsed = parseOptions(args, getopt(letter ? `${letter}:` : "", `${long}=`));
  return named(parsed, ...letter ? [letter] : [], long).at(-1)?.value;
}
function urls(args) {
  const helper = args.find((arg) => !arg.startsWith("-") && arg.includes("::"));
  return helper ? refuse(`${helper} names a transport helper, a program git runs`) : void 0;
}
function clone(args) {
  const helper = urls(args);
  if (helper) return helper;
  const parsed = parseOptions(
    args,
    getopt(
      "b:c:j:o:u:lnqsv",
      "branch= origin= depth= reference= reference-if-able= separate-git-dir= shallow-since= shallow-exclude= filter= server-option= jobs= upload-pack= template= config= bundle-uri= ref-format="
    )
  );
  const [repository, directory] = parsed.operands;
  const made = directory ?? (repository ? humanish(repository) : void 0);
  return judgement({
    writes: [...made ? [made] : [], ...named(parsed, "separate-git-dir").map((o) => o.value ?? "")],
    reads: named(parsed, "reference", "reference-if-able").map((o) => o.value ?? "")
  });
}
function humanish(repository) {
  const base = repository.replace(/\/+$/, "").replace(/\/?\.git$/, "").split(/[/:]/).at(-1);
  return base && base !== "" ? base : ".";
}
function init(args) {
  const parsed = parseOptions(
    args,
    getopt(
      "bq",
      "bare shared=? initial-branch= object-format= ref-format= separate-git-dir= template= quiet"
    )
  );
  return judgement({ writes: parsed.operands.length > 0 ? parsed.operands.slice(0, 1) : ["."] });
}
function commit(args) {
  const fixup = optionValue(args, void 0, "fixup");
  if (fixup !== void 0 && /^(amend|reword):/.test(fixup))
    return refuse(`--fixup=${fixup} opens an editor`);
  const message = optionWords(args).some(
    ([, word]) => !word.startsWith("--") && /[mFC]/.test(word.slice(1)) || ["--message", "--file", "--reuse-message", "--no-edit", "--fixup"].some(
      (long) => long.startsWith(word.split("=")[0]) && word.length > 3
    )
  );
  return message ? void 0 : refuse("without -m, -F, -C or --no-edit opens an editor");
}
function tag(args) {
  const words = optionWords(args).map(([, word]) => word);
  const annotated = words.some(
    (word) => !word.startsWith("--") && word.includes("a") || word.startsWith("--annotate")
  );
  const message = words.some(
    (word) => !word.startsWith("--") && /[mF]/.test(word.slice(1)) || /^--(message|file)/.test(word)
  );
  return annotated && !message ? refuse("-a without -m or -F opens an editor") : void 0;
}
function checkoutIndex(args) {
  const prefixes = args.filter((arg) => arg.startsWith("--prefix=")).map((arg) => arg.slice("--prefix=".length));
  return judgement({ writes: prefixes.map((prefix) => `${prefix}x`) });
}
function formatPatch(args) {
  const toFolder = optionWords(args).some(
    ([, word]) => word === "--stdout" || /^--o/.test(word) || !word.startsWith("--") && word.includes("o")
  );
  return toFolder ? void 0 : judgement({ writes: ["."] });
}
function mergeFile(args) {
  const parsed = parseOptions(
    args,
    getopt("L:pq", "stdout diff3 zdiff3 ours theirs union marker-size= quiet object-id diff-algorithm=")
  );
  if (named(parsed, "p", "stdout").length > 0) return void 0;
  return judgement({ writes: parsed.operands.slice(0, 1) });
}
function bundle(args) {
  const [action, ...rest] = args;
  if (action !== "create") return void 0;
  const parsed = parseOptions(rest, getopt("q", "progress all-progress all-progress-implied version= quiet"));
  return judgement({ writes: parsed.operands.slice(0, 1) });
}
function worktree(args) {
  const [action, ...rest] = args;
  const parsed = parseOptions(
    rest,
    getopt(
      "fb:B:dqv",
      "force detach checkout no-checkout lock reason= orphan track no-track guess-remote no-guess-remote quiet relative-paths no-relative-paths expire= porcelain verbose z"
    )
  );
  if (action === "add") return judgement({ writes: parsed.operands.slice(0, 1) });
  if (action === "move") return judgement({ writes: parsed.operands.slice(0, 2) });
  if (action === "remove") return judgement({ writes: parsed.operands.slice(0, 1) });
  return void 0;
}
function config(args) {
  const reading = args.some((arg) => /^(--get(-all|-regexp)?|--list|-l|get|list)$/.test(arg));
  const writing = args.some(
    (arg) => /^(--(add|unset|unset-all|replace-all|rename-section|remove-section|edit)|-e|set|unset|rename-section|remove-section|edit)$/.test(
      arg
    )
  );
  return reading && !writing ? void 0 : refuse("changes configuration (only --get, --list, get and list are judged)");
}
function remote(args) {
  const action = args.find((arg) => !arg.startsWith("-"));
  if (action === void 0 || ["show", "get-url", "prune", "update"].includes(action)) return urls(args);
  return refuse(`${action} changes the remote configuration`);
}
function notes(args) {
  const action = args.find((arg) => !arg.startsWith("-")) ?? "list";
  if (["list", "show", "get-ref", "prune", "remove", "copy"].includes(action)) return void 0;
  if (["add", "append"].includes(action) && optionWords(args).some(([, word]) => /^-[mFCc]|^--(message|file|reuse-message)/.test(word))) {
    return void 0;
  }
  return refuse(`${action} opens an editor (give -m or -F)`);
}

// ../../work/wt/allowlist/src/policy/programs/network.ts
var CURL = getopt(
  "a:A:b:c:C:d:D:e:E:F:H:h:K:m:o:Q:r:t:T:u:U:w:x:X:y:Y:z:0123456789BfgGiIjJkLlMnNOpqRsSvVZ:#",
  `output= remote-name remote-name-all output-dir= create-dirs dump-header= cookie-jar= trace=
   trace-ascii= stderr= libcurl= etag-save= hsts= alt-svc= config= upload-file= data= data-binary=
   data-raw= data-ascii= data-urlencode= form= form-string= json= cookie= header= proxy-header=
   url= request= user= user-agent= referer= proxy= max-time= connect-timeout= retry= write-out=
   cert= key= cacert= capath= netrc-file= netrc netrc-optional location silent show-error fail
   include head insecure verbose compressed help version`
);
function uploaded(value) {
  const at = value.search(/[@<]/);
  return at === -1 ? void 0 : value.slice(at + 1).split(";")[0];
}
function curl(words) {
  const parsed = parseArgs(words, CURL);
  if (named(parsed, "K", "config").length > 0)
    return refuse("-K reads options from a file rune cannot check");
  const value = (...names) => named(parsed, ...names).map((option) => option.value ?? "");
  const remoteName = named(parsed, "O", "remote-name", "remote-name-all").length > 0;
  const writes = [
    ...value("o", "output", "D", "dump-header", "c", "cookie-jar", "trace", "trace-ascii", "stderr"),
    ...value("libcurl", "etag-save", "hsts", "alt-svc"),
    ...remoteName ? [value("output-dir").at(-1) ?? "."] : []
  ];
  const reads = [
    ...value("T", "upload-file", "netrc-file", "E", "cert", "key", "cacert", "b", "cookie"),
    ...value("d", "data", "data-binary", "data-ascii", "data-urlencode", "F", "form", "json").map(uploaded).filter((path) => path !== void 0)
  ];
  return judgement({ writes: writes.filter((path) => path !== "-" && path !== ""), reads });
}
var WGET = getopt(
  "a:A:B:e:i:l:o:O:P:Q:R:t:T:U:w:X:D:I:bcdEFhHkKLmnNpqrSvVx46",
  `output-document= output-file= append-output= directory-prefix= input-file= execute= config= post-file=
   body-file= load-cookies= save-cookies= certificate= private-key= ca-certificate= recursive level=
   mirror page-requisites no-directories force-directories timestamping continue quiet verbose
   no-verbose user= password= header= user-agent= tries= timeout= wait= help version`
);
function wget(words) {
  const parsed = parseArgs(words, WGET);
  const hit = named(parsed, "e", "execute", "config")[0];
  if (hit) return refuse(`${hit.word} runs wgetrc commands rune cannot check`);
  const value = (...names) => named(parsed, ...names).map((option) => option.value ?? "");
  const document = value("O", "output-document");
  const writes = [
    ...document.length > 0 ? document : [value("P", "directory-prefix").at(-1) ?? "."],
    ...value("o", "output-file", "a", "append-output", "save-cookies")
  ];
  const reads = value(
    "i",
    "input-file",
    "post-file",
    "body-file",
    "load-cookies",
    "certificate",
    "private-key"
  );
  return judgement({ writes: writes.filter((path) => path !== "-" && path !== ""), reads });
}
var REMOTE = /^[^/]*:/;
var RSYNC = getopt(
  "e:f:B:T:M:avrRbulLkKHpEAXogDtOJUNSnWxyz0qhcdPiIC46",
  `rsh= rsync-path= log-file= write-batch= only-write-batch= read-batch= backup-dir= temp-dir=
   partial-dir= files-from= exclude-from= include-from= filter= exclude= include= password-file=
   compare-dest= copy-dest= link-dest= suffix= chmod= chown= usermap= groupmap= config= daemon
   archive verbose recursive relative delete dry-run help version`
);
function rsync(words) {
  const parsed = parseArgs(words, RSYNC);
  const hit = named(parsed, "e", "rsh", "rsync-path", "files-from", "config", "daemon", "read-batch")[0];
  if (hit) return refuse(`${hit.word} runs a program or reads names rune cannot check`);
  const local = parsed.operands.filter((operand) => !REMOTE.test(operand));
  const destination = parsed.operands.at(-1);
  const value = (...names) => named(parsed, ...names).map((option) => option.value ?? "");
  const writes = [
    ...destination !== void 0 && !REMOTE.test(destination) && parsed.operands.length > 1 ? [destination] : [],
    ...value("log-file", "write-batch", "only-write-batch", "backup-dir", "temp-dir", "partial-dir")
  ];
  return judgement({ writes, trees: local.slice(0, -1), reads: value("password-file") });
}
var SSH = getopt("B:b:c:D:E:e:F:I:i:J:L:l:m:O:o:P:p:Q:R:S:W:w:46AaCfGgKkMNnqsTtVvXxYy", "");
function ssh(words) {
  const parsed = sshArgs(words, SSH);
  const hit = named(parsed, "o", "F", "J", "w", "L", "R", "D", "S", "E", "O", "W")[0];
  if (hit) return refuse(`${hit.word} can run commands, forward connections or write files`);
  return judgement({ reads: named(parsed, "i").map((option) => option.value ?? "") });
}
var SCP = getopt("c:D:F:i:J:l:o:P:S:X:346ABCOpqRrTv", "");
function scp(words) {
  const parsed = parseArgs(words, SCP);
  const hit = named(parsed, "S", "o", "F", "J", "D")[0];
  if (hit) return refuse(`${hit.word} runs a program or reads a configuration`);
  const destination = parsed.operands.at(-1);
  const local = parsed.operands.filter((operand) => !REMOTE.test(operand));
  return judgement({
    writes: destination !== void 0 && !REMOTE.test(destination) && parsed.operands.length > 1 ? [destination] : [],
    trees: named(parsed, "r").length > 0 ? local.filter((path) => path !== destination) : [],
    reads: named(parsed, "i").map((option) => option.value ?? "")
  });
}
function sshArgs(words, spec) {
  return parseArgs(words, { ...spec, stopAtOperand: true });
}
var NETWORK_RULES = { curl, wget, rsync, ssh, scp };

// ../../work/wt/allowlist/src/policy/programs/search.ts
var GREP = getopt(
  "e:f:m:A:B:C:d:D:EFGPiyvwxcLloqsbHhnTZzrRaIUuV",
  `regexp= file= ignore-case no-ignore-case word-regexp line-regexp null-data no-messages invert-match
   version help max-count= byte-offset line-number line-buffered with-filename no-filename label=
   only-matching quiet silent binary-files= text directories= devices= recursive dereference-recursive
   include= exclude= exclude-from= exclude-dir= files-without-match files-with-matches count
   initial-tab null before-context= after-context= context=? color=? colour=? binary basic-regexp
   extended-regexp fixed-strings perl-regexp no-group-separator group-separator=`
);
function searched(parsed, patternOptions) {
  return named(parsed, ...patternOptions).length > 0 ? parsed.operands : parsed.operands.slice(1);
}
function grep(words) {
  const parsed = parseArgs(words, GREP);
  if (parsed.ambiguous.length > 0) return refuse(`${parsed.ambiguous[0]} is an ambiguous option`);
  const recursive = named(parsed, "r", "R", "recursive", "dereference-recursive").length > 0 || named(parsed, "d", "directories").some((option) => "recurse".startsWith(option.value ?? "x"));
  const files = searched(parsed, ["e", "f", "regexp", "file"]);
  const reads = named(parsed, "f", "file", "exclude-from").map((option) => option.value ?? "");
  return judgement({ reads, trees: recursive ? files.length > 0 ? files : ["."] : [] });
}
var RG = getopt(
  "A:B:C:d:E:e:f:g:j:M:m:r:T:t:0abcFHhiIlLnNopqsSuUvwxz",
  `pre= pre-glob= search-zip hostname-bin= regexp= file= glob= iglob= type= type-not= type-add=
   type-clear= ignore-file= max-depth= max-count= max-columns= max-filesize= replace= threads=
   context= before-context= after-context= encoding= engine= sort= sortr= colors= color= path-separator=
   context-separator= field-context-separator= field-match-separator= hyperlink-format= dfa-size-limit=
   regex-size-limit= files type-list generate= help version`
);
function rg(words) {
  const parsed = parseArgs(words, RG);
  const runs = named(parsed, "pre", "z", "search-zip", "hostname-bin")[0];
  if (runs) return refuse(`${runs.word} runs a preprocessor or decompression program`);
  if (parsed.ambiguous.length > 0) return refuse(`${parsed.ambiguous[0]} is an ambiguous option`);
  const listing = named(parsed, "files", "type-list").length > 0;
  const files = listing ? parsed.operands : searched(parsed, ["e", "f", "regexp", "file"]);
  const reads = named(parsed, "f", "file", "ignore-file").map((option) => option.value ?? "");
  return judgement({ reads, trees: files.length > 0 ? files : ["."] });
}
var FIND_REFUSED = /* @__PURE__ */ new Set(["-exec", "-execdir", "-ok", "-okdir", "-files0-from"]);
var FIND_WRITES = /* @__PURE__ */ new Set(["-fprint", "-fprint0", "-fprintf", "-fls"]);
function find(words) {
  const args = words.argv.slice(1);
  let index = 0;
  while (index < args.length && /^-([HLP]|D|O\d*)$/.test(args[index])) index += args[index] === "-D" ? 2 : 1;
  const starts = [];
  while (index < args.length && !/^[-(!]/.test(args[index]) && args[index] !== ")")
    starts.push(args[index++]);
  const writes = [];
  for (; index < args.length; index++) {
    const arg = args[index];
    if (FIND_REFUSED.has(arg)) return refuse(`${arg} runs commands or reads file names rune cannot check`);
    if (FIND_WRITES.has(arg)) writes.push(args[index + 1] ?? "");
    if (arg === "-delete") writes.push(...starts.length > 0 ? starts : ["."]);
  }
  return judgement({ writes: writes.filter(Boolean) });
}
var SORT = getopt(
  "bdfgiMhnRrVcCk:mo:st:T:uzS:",
  `ignore-leading-blanks dictionary-order ignore-case general-numeric-sort ignore-nonprinting month-sort
   human-numeric-sort numeric-sort random-sort random-source= reverse sort= version-sort batch-size=
   check=? compress-program= debug files0-from= key= merge output= stable buffer-size= field-separator=
   temporary-directory= parallel= unique zero-terminated help version`
);
function sort(words) {
  const parsed = parseArgs(words, SORT);
  const runs = named(parsed, "compress-program", "files0-from")[0];
  if (runs) return refuse(`${runs.word} runs a program or reads file names rune cannot check`);
  if (parsed.ambiguous.length > 0) return refuse(`${parsed.ambiguous[0]} is an ambiguous option`);
  return judgement({
    writes: named(parsed, "o", "output", "T", "temporary-directory").map((option) => option.value ?? ""),
    reads: named(parsed, "random-source").map((option) => option.value ?? "")
  });
}
var LESS = getopt(
  "b:h:j:k:o:O:p:P:t:T:x:y:z:",
  "lesskey-file= lesskey-src= log-file= LOG-FILE= tag= tag-file="
);
function less(words) {
  const parsed = parseArgs(words, LESS);
  const hit = named(parsed, "k", "lesskey-file", "lesskey-src", "o", "O", "log-file", "LOG-FILE")[0];
  if (hit) return refuse(`${hit.word} reads a key file or writes a log`);
  if (parsed.operands.some((word) => word.startsWith("+") && /[!|]/.test(word))) {
    return refuse("a +command with ! or | runs a shell");
  }
  return judgement();
}
var MAN = getopt(
  "C:d:D:e:fhHikl:L:m:M:p:P:r:R:S:s:t:T:wWX:Z",
  `config-file= pager= html=? preprocessor= gxditview=? browser= troff-device=? local-file manpath=
   help version`
);
function man(words) {
  const parsed = parseArgs(words, MAN);
  const hit = named(
    parsed,
    "P",
    "pager",
    "H",
    "html",
    "p",
    "preprocessor",
    "X",
    "gxditview",
    "browser",
    "C",
    "config-file"
  )[0];
  if (hit) return refuse(`${hit.word} runs a program or reads a configuration`);
  return judgement();
}
var SEARCH_RULES = {
  grep,
  egrep: grep,
  fgrep: grep,
  rg,
  find,
  sort,
  less,
  man,
  xxd: (words) => {
    const parsed = parseArgs(words, getopt("c:g:l:o:s:n:abCEeihipruv", "help version"));
    return judgement({ writes: parsed.operands.slice(1, 2) });
  }
};

// ../../work/wt/allowlist/src/policy/programs/sed.ts
var SED = getopt(
  "nrsuzEi::e:f:l:",
  `quiet silent expression= file= in-place=? line-length= null-data zero-terminated regexp-extended
   separate sandbox unbuffered posix debug follow-symlinks binary help version`
);
var sed = (words) => {
  const parsed = parseArgs(words, SED);
  const odd = parsed.unknown[0] ?? parsed.ambiguous[0];
  if (odd) return refuse(`${odd} is not an option rune knows`);
  if (named(parsed, "f", "file").length > 0)
    return refuse("-f reads the script from a file rune cannot check");
  const expressions = named(parsed, "e", "expression").map((option) => option.value ?? "");
  const [script, files] = expressions.length > 0 ? [expressions.join("\n"), parsed.operands] : [parsed.operands[0] ?? "", parsed.operands.slice(1)];
  const checked = sedScript(script);
  if (checked.problem) return refuse(checked.problem);
  const inPlace = named(parsed, "i", "in-place").length > 0;
  return judgement({ writes: [...checked.writes, ...inPlace ? files : []], reads: checked.reads });
};
function sedScript(text) {
  return new SedReader(text).read();
}
var SIMPLE_COMMANDS = "=dDgGhHnNpPxzF";
var SedReader = class {
  constructor(text) {
    this.text = text;
  }
  text;
  at = 0;
  depth = 0;
  writes = [];
  reads = [];
  read() {
    const problem = this.commands();
    return { ...problem ? { problem } : {}, writes: this.writes, reads: this.reads };
  }
  commands() {
    const { text } = this;
    for (; ; ) {
      while (this.at < text.length && /[\s;]/.test(text[this.at])) this.at++;
      if (this.at >= text.length) break;
      if (text[this.at] === "#") {
        this.toEndOfLine();
        continue;
      }
      const addressed = this.address();
      if (addressed === "bad") return "script has an unterminated or malformed address";
      this.blanks();
      if (addressed && text[this.at] === ",") {
        this.at++;
        this.blanks();
        if (text[this.at] === "+" || text[this.at] === "~") {
          this.at++;
          this.digits();
        } else if (this.address() !== true) return "script has a malformed address range";
      }
      this.blanks();
      while (text[this.at] === "!") {
        this.at++;
        this.blanks();
      }
      const problem = this.command(text[this.at++] ?? "");
      if (problem) return problem;
    }
    return this.depth > 0 ? "script has an unmatched {" : void 0;
  }
  command(command) {
    switch (command) {
      case "{":
        this.depth++;
        return void 0;
      case "}":
        if (this.depth === 0) return "script has an unmatched }";
        this.depth--;
        return this.end(command);
      case ":":
      case "b":
      case "t":
      case "T":
        this.blanks();
        while (this.at < this.text.length && !/[\s;]/.test(this.text[this.at])) this.at++;
        return this.end(command);
      case "a":
      case "i":
      case "c":
        this.appendedText();
        return void 0;
      case "s":
      case "y":
        return this.substitute(command);
      case "r":
      case "R":
        this.blanks();
        this.reads.push(this.toEndOfLine());
        return void 0;
      case "w":
      case "W":
        this.blanks();
        this.writes.push(this.toEndOfLine());
        return void 0;
      case "q":
      case "Q":
      case "l":
      case "L":
        this.blanks();
        this.digits();
        return this.end(command);
      case "e":
        return 'command "e" runs a shell command';
      default:
        if (command !== "" && SIMPLE_COMMANDS.includes(command)) return this.end(command);
        return `command "${command}" is not one rune judges (s, y, p, d, q, a, i, c, b, t, {}, labels, w, r and the like)`;
    }
  }
  /** After a command: blanks, then the end of the script, `;`, a newline, `}` or a comment. */
  end(command) {
    this.blanks();
    const next = this.text[this.at];
    if (next === void 0 || ";\n}#".includes(next)) return void 0;
    return `script has "${next}" after command "${command}"`;
  }
  substitute(command) {
    const delimiter = this.text[this.at];
    if (!delimiter || delimiter === "\\" || delimiter === "\n") return `${command} command is malformed`;
    this.at++;
    if (!this.delimited(delimiter) || !this.delimited(delimiter)) return `${command} command is unterminated`;
    if (command === "y") return this.end(command);
    while (this.at < this.text.length && /[gpiImM0-9e]/.test(this.text[this.at])) {
      if (this.text[this.at] === "e") return 's flag "e" runs the pattern space as a command';
      this.at++;
    }
    if (this.text[this.at] === "w") {
      this.at++;
      this.blanks();
      this.writes.push(this.toEndOfLine());
      return void 0;
    }
    return this.end(command);
  }
  /** An address: a line number, `first~step`, `$`, `/re/` or `\cREc` with I and M flags. */
  address() {
    const { text } = this;
    const ch = text[this.at];
    if (ch !== void 0 && /\d/.test(ch)) {
      this.digits();
      if (text[this.at] === "~") {
        this.at++;
        this.digits();
      }
      return true;
    }
    if (ch === "$") {
      this.at++;
      return true;
    }
    if (ch === "/" || ch === "\\") {
      const delimiter = ch === "\\" ? text[this.at + 1] : "/";
      this.at += ch === "\\" ? 2 : 1;
      if (!delimiter || delimiter === "\n" || !this.delimited(delimiter)) return "bad";
      while (/[IM]/.test(text[this.at] ?? "")) this.at++;
      return true;
    }
    return false;
  }
  /** Up to and past the closing delimiter; a backslash escapes any character, the newline too. */
  delimited(delimiter) {
    while (this.at < this.text.length) {
      const ch = this.text[this.at];
      if (ch === "\\") {
        this.at += 2;
        continue;
      }
      this.at++;
      if (ch === delimiter) return true;
    }
    return false;
  }
  /** a, i, c: `a text`, `a\` and text on the next lines; a backslash before a newline goes on. */
  appendedText() {
    this.blanks();
    if (this.text[this.at] === "\\") {
      this.at++;
      if (this.text[this.at] === "\n") this.at++;
    }
    while (this.at < this.text.length && this.text[this.at] !== "\n") {
      this.at += this.text[this.at] === "\\" ? 2 : 1;
    }
  }
  toEndOfLine() {
    const newline = this.text.indexOf("\n", this.at);
    const end = newline === -1 ? this.text.length : newline;
    const line = this.text.slice(this.at, end);
    this.at = end;
    return line;
  }
  blanks() {
    while (this.text[this.at] === " " || this.text[this.at] === "	") this.at++;
  }
  digits() {
    while (/\d/.test(this.text[this.at] ?? "")) this.at++;
  }
};

// ../../work/wt/allowlist/src/policy/programs/index.ts
var RULES = {
  ...BUILTIN_RULES,
  ...FILE_RULES,
  ...SEARCH_RULES,
  ...ARCHIVE_RULES,
  ...NETWORK_RULES,
  ...BUILD_RULES,
  git: gitRule,
  sed,
  awk,
  gawk: awk,
  mawk: awk,
  nawk: awk
};
function judgeProgram(words) {
  const program = words.argv[0] ?? "";
  const name = program.slice(program.lastIndexOf("/") + 1);
  const why = indirection(name);
  if (why) return refuse(why);
  const rule = Object.hasOwn(RULES, name) ? RULES[name] : void 0;
  if (!rule) return judgement();
  const judged = rule(words);
  return judged.refused ? { ...judged, refused: `${program} ${judged.refused}` } : judged;
}

// ../../work/wt/allowlist/src/policy/shell-words.ts
var PLAIN = /[A-Za-z0-9_.,:/@%+=^-]+/y;
var ENDS_WORD = /* @__PURE__ */ new Set([" ", "	", "\n", "|", "&", ";", "(", ")", "<", ">"]);
var EXPANDS_AFTER_DOLLAR = /[A-Za-z0-9_@*#?$!{([\-'"]/;
function quote(value) {
  return `'${value.replaceAll("'", "'\\''")}'`;
}
function readWord(text, start) {
  PLAIN.lastIndex = start;
  const plain = PLAIN.exec(text);
  if (plain && (start + plain[0].length === text.length || ENDS_WORD.has(text[start + plain[0].length]))) {
    const value = plain[0];
    return {
      end: start + value.length,
      result: { word: { value, glob: false, text: quote(value), plain: true, equals: value.indexOf("=") } }
    };
  }
  const chars = [];
  const quoted = [];
  const push = (ch, isQuoted) => {
    chars.push(ch);
    quoted.push(isQuoted);
  };
  let at = start;
  while (at < text.length) {
    const ch = text[at];
    if (ENDS_WORD.has(ch)) break;
    if (ch === "\\") {
      const next = text[at + 1];
      if (next === void 0) return { end: at, result: { error: "a backslash at the end of the command" } };
      if (next !== "\n") push(next, true);
      at += 2;
      continue;
    }
    if (ch === "'") {
      const close = text.indexOf("'", at + 1);
      if (close === -1) return { end: at, result: { error: "an unterminated single quote" } };
      for (let index = at + 1; index < close; index++) push(text[index], true);
      at = close + 1;
      continue;
    }
    if (ch === '"') {
      const inner = readDoubleQuoted(text, at + 1, push);
      if ("end" in inner) {
        at = inner.end;
        continue;
      }
      return { end: at, result: inner };
    }
    if (ch === "`") return { end: at, result: { hazard: "command substitution $( \u2026 ) or backticks" } };
    if (ch === "$" && EXPANDS_AFTER_DOLLAR.test(text[at + 1] ?? "")) {
      return { end: at, result: { hazard: dollarHazard(text.slice(at + 1)) } };
    }
    push(ch, false);
    at += 1;
  }
  return { end: at, result: finishWord(chars, quoted) };
}
function readDoubleQuoted(text, start, push) {
  let at = start;
  while (at < text.length) {
    const ch = text[at];
    if (ch === '"') return { end: at + 1 };
    if (ch === "\\") {
      const next = text[at + 1];
      if (next === void 0) break;
      if (next === "\n") at += 2;
      else if ('$`"\\'.includes(next)) {
        push(next, true);
        at += 2;
      } else {
        push("\\", true);
        at += 1;
      }
      continue;
    }
    if (ch === "`") return { hazard: "command substitution $( \u2026 ) or backticks" };
    if (ch === "$" && /[A-Za-z0-9_@*#?$!{([-]/.test(text[at + 1] ?? ""))
      return { hazard: dollarHazard(text.slice(at + 1)) };
    push(ch, true);
    at += 1;
  }
  return { error: "an unterminated double quote" };
}
function dollarHazard(after) {
  const next = after[0];
  if (next === "(") return "command substitution $( \u2026 ) or arithmetic $(( \u2026 ))";
  if (next === "{") return "parameter expansion ${ \u2026 }";
  if (next === "[") return "arithmetic expansion $[ \u2026 ] (bash)";
  if (next === "'") return "ANSI-C quoting $'\u2026'";
  if (next === '"') return 'a translated string $"\u2026"';
  return `parameter expansion $${/^[A-Za-z_]\w*/.exec(after)?.[0] ?? next}`;
}
function finishWord(chars, quoted) {
  const raw = new Array(chars.length).fill(false);
  if (chars[0] === "~" && !quoted[0]) {
    let prefixEnd = 1;
    while (prefixEnd < chars.length && !(chars[prefixEnd] === "/" && !quoted[prefixEnd])) prefixEnd++;
    if (prefixEnd === 1) raw.fill(true, 0, chars[1] === "/" ? 2 : 1);
    else if (quoted.slice(1, prefixEnd).every((q) => !q))
      return { hazard: "tilde expansion of ~user, ~+ or ~-" };
  }
  let glob = false;
  for (let index = 0; index < chars.length; index++) {
    if (quoted[index]) continue;
    const ch = chars[index];
    if (ch === "*" || ch === "?") {
      raw[index] = true;
      glob = true;
    } else if (ch === "[") {
      const close = bracketEnd(chars, quoted, index);
      if (close === "unusual") return { hazard: "a glob bracket expression with quoted characters" };
      if (close !== void 0) {
        raw.fill(true, index, close + 1);
        glob = true;
        index = close;
      }
    }
  }
  if (hasBraceExpansion(chars, quoted))
    return { hazard: "brace expansion {a,b} (bash expands it, dash does not)" };
  const value = chars.join("");
  const equals = chars.findIndex((ch, index) => ch === "=" && !quoted[index]);
  return {
    word: { value, glob, text: render(chars, raw), plain: quoted.every((q) => !q), equals }
  };
}
function bracketEnd(chars, quoted, open) {
  let at = open + 1;
  if (chars[at] === "!" || chars[at] === "^") at++;
  if (chars[at] === "]") at++;
  while (at < chars.length) {
    if (chars[at] === "[" && ":.=".includes(chars[at + 1] ?? "x")) {
      const kind = chars[at + 1];
      let inner = at + 2;
      while (inner < chars.length - 1 && !(chars[inner] === kind && chars[inner + 1] === "]")) inner++;
      if (inner >= chars.length - 1) return void 0;
      at = inner + 2;
      continue;
    }
    if (chars[at] === "]" && !quoted[at]) {
      return quoted.slice(open, at).some(Boolean) ? "unusual" : at;
    }
    at++;
  }
  return void 0;
}
function hasBraceExpansion(chars, quoted) {
  let open = -1;
  let separated = false;
  for (let index = 0; index < chars.length; index++) {
    if (quoted[index]) continue;
    const ch = chars[index];
    if (ch === "{") {
      open = index;
      separated = false;
    } else if (open !== -1 && (ch === "," || ch === "." && chars[index + 1] === "." && !quoted[index + 1])) {
      separated = true;
    } else if (ch === "}" && open !== -1 && separated) return true;
  }
  return false;
}
function render(chars, raw) {
  if (chars.length === 0) return "''";
  let out = "";
  let run = "";
  for (let index = 0; index < chars.length; index++) {
    if (raw[index]) {
      if (run) out += quote(run);
      run = "";
      out += chars[index];
    } else run += chars[index];
  }
  return run ? out + quote(run) : out;
}

// ../../work/wt/allowlist/src/policy/shell.ts
var MAX_COMMAND_CHARS = 32 * 1024;
var RESERVED = new Map([
  ...["if", "then", "elif", "else", "fi"].map((word) => [word, "an if statement"]),
  ...["while", "until", "for", "select", "do", "done"].map((word) => [word, "a loop"]),
  ["case", "a case statement"],
  ["esac", "a case statement"],
  ["{", "a command group { \u2026 }"],
  ["}", "a command group { \u2026 }"],
  ["!", "a negated command (!)"],
  ["function", "a function definition"],
  ["[[", "a test expression [[ \u2026 ]]"],
  ["]]", "a test expression [[ \u2026 ]]"],
  ["time", "time (a reserved word in bash)"],
  ["coproc", "a coprocess (bash)"]
]);
var CONTROL = /[\0-\x08\x0b-\x1f\x7f]/;
var CONTROL_NAMES = {
  "\r": "carriage return (CR)",
  "\f": "form feed (FF)",
  "\v": "vertical tab (VT)",
  "\0": "NUL"
};
function parseShellSyntax(text) {
  if (text.length > MAX_COMMAND_CHARS) {
    return {
      ok: false,
      error: `the command is ${text.length} characters long; rune judges at most ${MAX_COMMAND_CHARS} (split it, or put long input in a file)`
    };
  }
  const control = CONTROL.exec(text);
  if (control) {
    const ch = control[0];
    const name = CONTROL_NAMES[ch] ?? `U+${ch.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`;
    return {
      ok: false,
      error: `the command holds a control character, ${name}, at position ${control.index}; shells and rune's parser could read it differently`
    };
  }
  return new LineParser(text).run();
}
var LineParser = class {
  constructor(text) {
    this.text = text;
  }
  text;
  at = 0;
  commands = [];
  redirects = [];
  script = "";
  words = [];
  own = [];
  redirectTexts = [];
  /** The connector before the current command (`&&`, `||`, `|`) needs a command after it. */
  pending;
  /** The operator before the current command. */
  connector;
  run() {
    const { text } = this;
    while (this.at < text.length) {
      const ch = text[this.at];
      if (ch === " " || ch === "	") this.at += 1;
      else if (ch === "\\" && text[this.at + 1] === "\n") this.at += 2;
      else if (ch === "#") {
        const newline = text.indexOf("\n", this.at);
        this.at = newline === -1 ? text.length : newline;
      } else {
        const stop = this.token(ch);
        if (stop) return stop;
      }
    }
    if (this.pending && this.empty()) return { ok: false, error: `the command ends after "${this.pending}"` };
    if (!this.empty()) {
      const hazard = this.endCommand();
      if (hazard) return this.stop(hazard);
    }
    return this.result([]);
  }
  /** One operator, redirection or word at `this.at`; a result ends the parse. */
  token(ch) {
    const { text } = this;
    const two = text.slice(this.at, this.at + 2);
    if (ch === "\n" || ch === ";" || ch === "|" || ch === "&") {
      const hazard2 = OPERATOR_HAZARDS[text.slice(this.at, this.at + 3)] ?? OPERATOR_HAZARDS[two];
      if (hazard2) return this.stop(hazard2);
      if (ch === "&" && two !== "&&") return this.stop("a background job (&)");
      const op = two === "&&" || two === "||" ? two : ch;
      this.at += op.length;
      return this.separate(op);
    }
    if (ch === "(") return this.stop("a subshell ( \u2026 ), arithmetic (( \u2026 )) or a function definition");
    if (ch === ")") return { ok: false, error: 'an unmatched ")"' };
    if (ch === "<" || ch === ">") return this.redirect(void 0);
    const { end, result } = readWord(text, this.at);
    this.at = end;
    if ("error" in result) return { ok: false, error: result.error };
    if ("hazard" in result) return this.stop(result.hazard);
    const next = text[this.at];
    if ((next === "<" || next === ">") && result.word.plain) {
      if (/^\d$/.test(result.word.value)) return this.redirect(Number(result.word.value));
      if (/^\d+$/.test(result.word.value))
        return this.stop("a descriptor number above 9 (dash reads only one digit)");
      if (/^\{[A-Za-z_]\w*\}$/.test(result.word.value))
        return this.stop("a {name} descriptor redirection (bash only)");
    }
    const hazard = this.addWord(result.word);
    return hazard ? this.stop(hazard) : void 0;
  }
  addWord(word) {
    if (this.words.length === 0) {
      const reserved = word.plain ? RESERVED.get(word.value) : void 0;
      if (reserved) return reserved;
      if (word.equals > 0 && /^[A-Za-z_]\w*(\[.*\])?\+?$/s.test(word.value.slice(0, word.equals))) {
        return "a variable assignment";
      }
      if (word.glob) return "a glob in the command name";
    }
    this.words.push(word);
    return void 0;
  }
  redirect(fd) {
    const { text } = this;
    const rest = text.slice(this.at, this.at + 3);
    if (rest[1] === "(") return this.stop("process substitution <( \u2026 ) or >( \u2026 )");
    for (const [prefix, hazard] of REDIRECT_HAZARDS) if (rest.startsWith(prefix)) return this.stop(hazard);
    const op = REDIRECT_OPERATORS.find((candidate) => rest.startsWith(candidate));
    this.at += op.length;
    while (text[this.at] === " " || text[this.at] === "	" || text.startsWith("\\\n", this.at)) {
      this.at += text[this.at] === "\\" ? 2 : 1;
    }
    const start = text[this.at];
    if (start === void 0 || "\n|&;()<>".includes(start)) {
      return { ok: false, error: `a redirection "${op}" without a target` };
    }
    if (start === "#")
      return { ok: false, error: `a redirection target starting with "#" (a comment to sh)` };
    const { end, result } = readWord(text, this.at);
    this.at = end;
    if ("error" in result) return { ok: false, error: result.error };
    if ("hazard" in result) return this.stop(result.hazard);
    const { word } = result;
    const operator = op === ">|" ? ">" : op;
    const dup = operator === "<&" || operator === ">&";
    if (dup && !(word.plain && /^(\d|-)$/.test(word.value))) {
      return this.stop(
        /^\d+$/.test(word.value) ? "a descriptor number above 9 (dash reads only one digit)" : `${op} FILE (bash sends both outputs to FILE, dash refuses it; write > FILE 2>&1)`
      );
    }
    if (word.glob) return this.stop("a glob in a redirection");
    this.own.push({
      fd: fd ?? (operator.startsWith("<") ? 0 : 1),
      operator,
      target: word.value,
      writes: operator === ">" || operator === ">>",
      dup,
      command: this.commands.length
    });
    const shown = fd === void 0 ? "" : String(fd);
    this.redirectTexts.push(`${shown}${operator}${dup ? word.value : word.text}`);
    return void 0;
  }
  empty() {
    return this.words.length === 0 && this.own.length === 0;
  }
  separate(op) {
    if (this.empty()) {
      if (op === "\n") return void 0;
      return { ok: false, error: `"${op}" without a command before it` };
    }
    const hazard = this.endCommand();
    if (hazard) return this.stop(hazard);
    this.script += op === "\n" || op === ";" ? "; " : ` ${op} `;
    this.pending = op === "\n" || op === ";" ? void 0 : op;
    this.connector = op === "\n" ? ";" : op;
    return void 0;
  }
  /** Closes the current command; a hazard when it has redirections but no words (unless `stop` asks). */
  endCommand(wordless = false) {
    if (this.words.length === 0 && !wordless) {
      return "a redirection without a command (write `: > FILE` or `true > FILE`)";
    }
    const texts = this.words.map(
      (word, index) => (
        // A word starting with a glob runs as ./WORD: no file name it expands to can become an option.
        index > 0 && word.glob && "*?[".includes(word.text[0]) ? `./${word.text}` : word.text
      )
    );
    const command = {
      argv: this.words.map((word) => word.value),
      globs: this.words.map((word) => word.glob),
      globbed: this.words.some((word) => word.glob),
      redirects: this.own,
      text: [...texts, ...this.redirectTexts].join(" "),
      ...this.connector ? { connector: this.connector } : {}
    };
    this.commands.push(command);
    this.redirects.push(...this.own);
    this.script += command.text;
    this.words = [];
    this.own = [];
    this.redirectTexts = [];
    return void 0;
  }
  /** Ends the parse at a hazard; the words read so far are still judged (paths, the floor). */
  stop(hazard) {
    if (!this.empty()) this.endCommand(true);
    return this.result([hazard]);
  }
  result(hazards) {
    return {
      ok: true,
      commands: this.commands,
      redirects: this.redirects,
      hazards,
      script: this.script.replace(/; $/, "")
    };
  }
};
var OPERATOR_HAZARDS = {
  ";;": "a case statement",
  ";&": "a case statement",
  "|&": "|& (bash pipes stderr too; dash runs the left side in the background)",
  "&>": "&> (bash writes both outputs to the file; dash runs the command in the background); write > FILE 2>&1",
  "&>>": "&>> (bash only); write >> FILE 2>&1"
};
var REDIRECT_HAZARDS = [
  ["<<<", "a here string (<<<)"],
  ["<<", "a here document"],
  ["<>", "a read-write redirection <>"]
];
var REDIRECT_OPERATORS = [">>", ">|", ">&", "<&", ">", "<"];

// ../../work/wt/allowlist/src/policy/shell-parser.ts
function parseShell(text) {
  const analysis = parseShellSyntax(text);
  if (!analysis.ok) return analysis;
  for (const command of analysis.commands) command.program = judgeProgram(command);
  return analysis;
}

// prof2.ts
async function main() {
  const LINE_200 = Array.from({ length: 20 }, (_, index) => `grep -n -e foo${index} -e 'bar baz' a.txt b.txt src/c${index}.ts ${index % 2 ? "|" : "&&"}`).join(" ").concat(" ls");
  for (let round = 0; round < 5; round++) {
    const t = performance.now();
    for (let i = 0; i < 1e3; i++) (process.env.SYN ? parseShellSyntax : parseShell)(LINE_200);
    console.log(((performance.now() - t) / 1e3).toFixed(3), "ms per parse of 200 words");
  }
  const big = "ls " + Array.from({ length: 4500 }, (_, i) => `w${i}`).join(" ");
  for (let round = 0; round < 3; round++) {
    const t = performance.now();
    parseShell(big);
    console.log((performance.now() - t).toFixed(2), "ms 4500 words");
  }
}
// Annotate the CommonJS export names for ESM import in node:
0 && (module.exports = {
  main
});
