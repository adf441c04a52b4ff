// Programs that talk to other machines: the files they write or upload, and the options that run
// a local program of the caller's choosing (a proxy command, a remote shell, a config file that
// can name one).
import { parseArgs, type Rule } from './files.ts';
import { getopt, named } from './options.ts';
import { type CommandWords, judgement, type ProgramJudgement, refuse } from './types.ts';

const CURL = getopt(
  'a:A:b:c:C:d:D:e:E:F:H:h:K:m:o:Q:r:t:T:u:U:w:x:X:y:Y:z:0123456789BfgGiIjJkLlMnNOpqRsSvVZ:#',
  `output= remote-name remote-name-all output-dir= create-dirs dump-header= cookie-jar= trace=
   trace-ascii= stderr= libcurl= etag-save= hsts= alt-svc= config= upload-file= data= data-binary=
   data-raw= data-ascii= data-urlencode= form= form-string= json= cookie= header= proxy-header=
   url= request= user= user-agent= referer= proxy= max-time= connect-timeout= retry= write-out=
   cert= key= cacert= capath= netrc-file= netrc netrc-optional location silent show-error fail
   include head insecure verbose compressed help version`,
);

/** `@file` (or `<file` for -F) reads a file and sends it. */
function uploaded(value: string): string | undefined {
  const at = value.search(/[@<]/);
  return at === -1 ? undefined : value.slice(at + 1).split(';')[0];
}

function curl(words: CommandWords): ProgramJudgement {
  const parsed = parseArgs(words, CURL);
  // A config file can set any option (an output file, a command-line in a proxy setting).
  if (named(parsed, 'K', 'config').length > 0)
    return refuse('-K reads options from a file rune cannot check');
  const value = (...names: string[]) => named(parsed, ...names).map((option) => option.value ?? '');
  const remoteName = named(parsed, 'O', 'remote-name', 'remote-name-all').length > 0;
  const writes = [
    ...value('o', 'output', 'D', 'dump-header', 'c', 'cookie-jar', 'trace', 'trace-ascii', 'stderr'),
    ...value('libcurl', 'etag-save', 'hsts', 'alt-svc'),
    ...(remoteName ? [value('output-dir').at(-1) ?? '.'] : []),
  ];
  const reads = [
    ...value('T', 'upload-file', 'netrc-file', 'E', 'cert', 'key', 'cacert', 'b', 'cookie'),
    ...value('d', 'data', 'data-binary', 'data-ascii', 'data-urlencode', 'F', 'form', 'json')
      .map(uploaded)
      .filter((path): path is string => path !== undefined),
  ];
  return judgement({ writes: writes.filter((path) => path !== '-' && path !== ''), reads });
}

const WGET = getopt(
  'a:A:B:e:i:l:o:O:P:Q:R:t:T:U:w:X:D:I:bcdEFhHkKLmnNpqrSvVx46',
  `output-document= output-file= append-output= directory-prefix= input-file= execute= config= post-file=
   body-file= load-cookies= save-cookies= certificate= private-key= ca-certificate= recursive level=
   mirror page-requisites no-directories force-directories timestamping continue quiet verbose
   no-verbose user= password= header= user-agent= tries= timeout= wait= help version`,
);

function wget(words: CommandWords): ProgramJudgement {
  const parsed = parseArgs(words, WGET);
  const hit = named(parsed, 'e', 'execute', 'config')[0];
  if (hit) return refuse(`${hit.word} runs wgetrc commands rune cannot check`);
  const value = (...names: string[]) => named(parsed, ...names).map((option) => option.value ?? '');
  const document = value('O', 'output-document');
  const writes = [
    ...(document.length > 0 ? document : [value('P', 'directory-prefix').at(-1) ?? '.']),
    ...value('o', 'output-file', 'a', 'append-output', 'save-cookies'),
  ];
  const reads = value(
    'i',
    'input-file',
    'post-file',
    'body-file',
    'load-cookies',
    'certificate',
    'private-key',
  );
  return judgement({ writes: writes.filter((path) => path !== '-' && path !== ''), reads });
}

/** `host:path`, `user@host:path`, `rsync://…`: not a local file. */
const REMOTE = /^[^/]*:/;

const RSYNC = getopt(
  'e:f:B:T:M:avrRbulLkKHpEAXogDtOJUNSnWxyz0qhcdPiIC46',
  `rsh= rsync-path= log-file= write-batch= only-write-batch= read-batch= backup-dir= temp-dir=
   partial-dir= files-from= exclude-from= include-from= filter= exclude= include= password-file=
   compare-dest= copy-dest= link-dest= suffix= chmod= chown= usermap= groupmap= config= daemon
   archive verbose recursive relative delete dry-run help version`,
);

function rsync(words: CommandWords): ProgramJudgement {
  const parsed = parseArgs(words, RSYNC);
  const hit = named(parsed, 'e', 'rsh', 'rsync-path', 'files-from', 'config', 'daemon', 'read-batch')[0];
  if (hit) return refuse(`${hit.word} runs a program or reads names rune cannot check`);
  const local = parsed.operands.filter((operand) => !REMOTE.test(operand));
  const destination = parsed.operands.at(-1);
  const value = (...names: string[]) => named(parsed, ...names).map((option) => option.value ?? '');
  const writes = [
    ...(destination !== undefined && !REMOTE.test(destination) && parsed.operands.length > 1
      ? [destination]
      : []),
    ...value('log-file', 'write-batch', 'only-write-batch', 'backup-dir', 'temp-dir', 'partial-dir'),
  ];
  return judgement({ writes, trees: local.slice(0, -1), reads: value('password-file') });
}

const SSH = getopt('B:b:c:D:E:e:F:I:i:J:L:l:m:O:o:P:p:Q:R:S:W:w:46AaCfGgKkMNnqsTtVvXxYy', '');

function ssh(words: CommandWords): ProgramJudgement {
  const parsed = sshArgs(words, SSH);
  const hit = named(parsed, 'o', 'F', 'J', 'w', 'L', 'R', 'D', 'S', 'E', 'O', 'W')[0];
  if (hit) return refuse(`${hit.word} can run commands, forward connections or write files`);
  return judgement({ reads: named(parsed, 'i').map((option) => option.value ?? '') });
}

const SCP = getopt('c:D:F:i:J:l:o:P:S:X:346ABCOpqRrTv', '');

function scp(words: CommandWords): ProgramJudgement {
  const parsed = parseArgs(words, SCP);
  const hit = named(parsed, 'S', 'o', 'F', 'J', 'D')[0];
  if (hit) return refuse(`${hit.word} runs a program or reads a configuration`);
  const destination = parsed.operands.at(-1);
  const local = parsed.operands.filter((operand) => !REMOTE.test(operand));
  return judgement({
    writes:
      destination !== undefined && !REMOTE.test(destination) && parsed.operands.length > 1
        ? [destination]
        : [],
    trees: named(parsed, 'r').length > 0 ? local.filter((path) => path !== destination) : [],
    reads: named(parsed, 'i').map((option) => option.value ?? ''),
  });
}

/** ssh stops reading options at the host: what follows is the remote command. */
function sshArgs(words: CommandWords, spec: ReturnType<typeof getopt>) {
  return parseArgs(words, { ...spec, stopAtOperand: true });
}

export const NETWORK_RULES: Readonly<Record<string, Rule>> = { curl, wget, rsync, ssh, scp };
