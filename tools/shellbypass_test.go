package tools_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/tools"
)

// bypass is a command that destroys the canary file in the project when it
// runs. The shell policy must refuse it.
type bypass struct {
	name    string
	command string
	shell   string   // "" is /bin/sh
	allow   []string // an allowlist, for the entries that get around one
	needs   []string // programs the attack needs to work when unchecked
}

// bypasses are the ways around a policy that reads command text as a
// string: quoting, structure, wrappers that run their arguments, text run
// again, and bash's evaluation of names and arithmetic.
var bypasses = []bypass{
	// Quoting and words.
	{name: "backslash", command: `\rm canary`},
	{name: "empty quotes", command: `r''m canary`},
	{name: "double quotes", command: `"rm" canary`},
	{name: "escaped letter", command: `r\m canary`},
	{name: "mixed quotes", command: `'r'"m" canary`},
	{name: "line continuation", command: "r\\\nm canary"},
	{name: "ANSI-C quoting", command: `$'\x72m' canary`, shell: "bash"},
	{name: "absolute path", command: `/bin/rm canary`},
	{name: "dot-dot path", command: `/usr/bin/../bin/rm canary`},
	{name: "glob", command: `/bin/r[m] canary`},
	{name: "brace expansion", command: `{rm,canary}`, shell: "bash"},
	{name: "variable", command: `x=rm; $x canary`},
	{name: "positional parameters", command: `set -- rm canary; "$@"`},
	{name: "field splitting", command: `IFS=,; x=rm,canary; $x`},
	{name: "substitution as the name", command: `"$(echo rm)" canary`},
	{name: "backquotes as the name", command: "`echo rm` canary"},
	{name: "read into the name", command: `read x <<EOF
rm
EOF
$x canary`},
	// Structure.
	{name: "pipeline", command: `echo x | rm canary`},
	{name: "and list", command: `true && rm canary`},
	{name: "or list", command: `false || rm canary`},
	{name: "sequence", command: "true; rm canary"},
	{name: "newline", command: "true\nrm canary"},
	{name: "background", command: `rm canary & wait`},
	{name: "negation", command: `! rm canary`},
	{name: "subshell", command: `(rm canary)`},
	{name: "group", command: `{ rm canary; }`},
	{name: "function", command: `f() { rm canary; }; f`},
	{name: "function named like a builtin", command: `cd() { rm canary; }; cd .`},
	{name: "if", command: `if true; then rm canary; fi`},
	{name: "for", command: `for f in canary; do rm "$f"; done`},
	{name: "while", command: `while true; do rm canary; break; done`},
	{name: "case", command: `case x in x) rm canary;; esac`},
	{name: "command substitution", command: `echo $(rm canary)`},
	{name: "quoted substitution", command: `echo "$(rm canary)"`},
	{name: "backquotes", command: "echo `rm canary`"},
	{name: "substitution in a default", command: `echo ${x:-$(rm canary)}`},
	{name: "substitution in an assignment", command: `x=$(rm canary)`},
	{name: "substitution in a redirection", command: `cat < "$(rm canary)"`},
	{name: "here-document", command: "cat <<EOF\n$(rm canary)\nEOF"},
	{name: "process substitution", command: `cat <(rm canary)`, shell: "bash"},
	{name: "output process substitution", command: `echo x > >(rm canary)`, shell: "bash"},
	{name: "coprocess", command: `coproc rm canary; wait`, shell: "bash"},
	{name: "time keyword", command: `time rm canary`, shell: "bash"},
	{name: "not-found handler", command: `command_not_found_handle() { rm canary; }; no-such-program-here`, shell: "bash"},
	// Text run again.
	{name: "eval", command: `eval 'rm canary'`},
	{name: "eval of joined words", command: `eval r"m" canary`},
	{name: "eval of a variable", command: `x='rm canary'; eval "$x"`},
	{name: "eval of a substitution", command: `eval "$(echo rm canary)"`},
	{name: "escaped eval", command: `\eval 'rm canary'`},
	{name: "trap", command: `trap 'rm canary' EXIT`},
	{name: "trap on signal 0", command: `trap "rm canary" 0`},
	{name: "sh -c", command: `sh -c 'rm canary'`},
	{name: "bash -c", command: `bash -c 'rm canary'`, needs: []string{"bash"}},
	{name: "bash -ec", command: `bash -ec 'rm canary'`, needs: []string{"bash"}},
	{name: "nested sh -c", command: `sh -c 'sh -c "rm canary"'`},
	{name: "sh -c with $0", command: `sh -c '$0 canary' rm`},
	{name: "sh -c of a substitution", command: `sh -c "$(printf 'rm canary')"`},
	{name: "pipe into sh", command: `echo 'rm canary' | sh`},
	{name: "here-document into sh", command: "sh <<EOF\nrm canary\nEOF"},
	{name: "bash -s", command: `echo 'rm canary' | bash -s`, needs: []string{"bash"}},
	{name: "source", command: `. ./evil.sh`},
	{name: "source by name", command: `source ./evil.sh`, shell: "bash"},
	{name: "alias", command: "alias ls='rm canary'\nls"},
	{name: "pipe into python", command: `echo 'import os; os.remove("canary")' | python3`, needs: []string{"python3"}},
	{name: "pipe into perl", command: `echo 'unlink "canary"' | perl`, needs: []string{"perl"}},
	// Wrappers that run their arguments.
	{name: "env", command: `env rm canary`},
	{name: "env -i", command: `env -i rm canary`},
	{name: "env with a variable", command: `env X=1 rm canary`},
	{name: "env by path", command: `/usr/bin/env rm canary`},
	{name: "env -S", command: `env -S 'rm canary'`},
	{name: "env running its input", command: `echo rm canary | xargs env`},
	{name: "timeout", command: `timeout 5 rm canary`},
	{name: "timeout with options", command: `timeout -s KILL -k 1 5 rm canary`},
	{name: "nice", command: `nice rm canary`},
	{name: "nice -n", command: `nice -n 5 rm canary`},
	{name: "nice -N", command: `nice -5 rm canary`},
	{name: "nohup", command: `nohup rm canary`},
	{name: "stdbuf", command: `stdbuf -o0 rm canary`},
	{name: "setsid", command: `setsid -w rm canary`},
	{name: "ionice", command: `ionice -c 3 rm canary`},
	{name: "xargs", command: `echo canary | xargs rm`},
	{name: "xargs -I", command: `echo canary | xargs -I{} rm {}`},
	{name: "xargs sh -c", command: `echo canary | xargs sh -c 'rm "$0"'`},
	{name: "exec", command: `exec rm canary`},
	{name: "exec -a", command: `exec -a other rm canary`, shell: "bash"},
	{name: "command", command: `command rm canary`},
	{name: "command -p", command: `command -p rm canary`},
	{name: "builtin eval", command: `builtin eval 'rm canary'`, shell: "bash"},
	{name: "find -delete", command: `find . -name canary -delete`},
	{name: "find -exec ;", command: `find . -name canary -exec rm {} \;`},
	{name: "find -exec +", command: `find . -name canary -exec rm {} +`},
	{name: "find -execdir", command: `find . -name canary -execdir rm {} \;`},
	{name: "find -exec sh -c", command: `find . -name canary -exec sh -c 'rm "$1"' _ {} \;`},
	{name: "find -exec env", command: `find . -name canary -exec env rm {} \;`},
	{name: "flock", command: `flock ./lock rm canary`},
	{name: "flock -c", command: `flock ./lock -c 'rm canary'`},
	{name: "watch", command: `timeout 2 watch -n 0.1 rm canary`},
	{name: "timeout bash -c", command: `timeout 5 bash -c 'rm canary'`, needs: []string{"bash"}},
	{name: "sudo", command: `sudo rm canary`, needs: []string{"sudo"}},
	{name: "busybox", command: `busybox rm canary`, needs: []string{"busybox"}},
	// A program that is not what its name says.
	{name: "link made on the way", command: `ln -s /bin/rm del && ./del canary`},
	{name: "PATH changed", command: `PATH=./bin:$PATH ls`},
	{name: "PATH exported", command: `export PATH=./bin:$PATH; ls`},
	{name: "hash -p", command: `hash -p /bin/rm ls; ls canary`, shell: "bash"},
	{name: "BASH_CMDS", command: `BASH_CMDS[ls]=/bin/rm; ls canary`, shell: "bash"},
	{name: "BASH_ENV", command: `BASH_ENV=./evil.sh bash -c true`, needs: []string{"bash"}},
	{name: "BASH_ENV through env", command: `env BASH_ENV=./evil.sh bash -c true`, needs: []string{"bash"}},
	{name: "exported function through env", command: `env 'BASH_FUNC_ls%%=() { rm canary; }' bash -c ls`, needs: []string{"bash"}},
	{name: "PS4 with tracing", command: `PS4='$(rm canary)'; set -x; true`, shell: "bash"},
	{name: "read into PATH", command: "read PATH <<EOF\n./bin\nEOF\nls"},
	{name: "for over PATH", command: `for PATH in ./bin; do ls; done`},
	{name: "PATH by a parameter default", command: `unset PATH; : ${PATH:=./bin}; ls`},
	{name: "PATH by arithmetic", command: `: $((PATH=1)); ls`},
	{name: "PATH through a name reference", command: `declare -n r=PATH; r=./bin; ls`, shell: "bash"},
	{name: "sh given an option at run time", command: `x=-c; sh $x 'rm canary'`},
	{name: "find given an action at run time", command: `x=-delete; find . -name canary $x`},
	{name: "xargs -I into sh -c", command: `echo canary | xargs -I% sh -c 'rm %'`},
	// Writing over the canary.
	{name: "truncating redirection", command: `: > canary`},
	{name: "redirection", command: `echo x > canary`},
	{name: "appending redirection", command: `echo x >> canary`},
	{name: "read-write redirection", command: `echo x 1<> canary`},
	{name: "clobbering redirection", command: `echo x >| canary`},
	{name: "redirection of both", command: `echo x &> canary`, shell: "bash"},
	{name: "redirection on exec", command: `exec 3> canary`},
	{name: "tee", command: `tee canary < /dev/null`},
	{name: "find -fprint", command: `find . -name nothing -fprint canary`},
	{name: "dd", command: `dd if=/dev/null of=canary`},
	// bash evaluates names and arithmetic.
	{name: "arithmetic on a variable", command: `x='a[$(rm canary)]'; echo $((x))`, shell: "bash"},
	{name: "arithmetic in [[ -eq ]]", command: `x='a[$(rm canary)]'; [[ $x -eq 1 ]]`, shell: "bash"},
	{name: "arithmetic in a loop", command: `x='a[$(rm canary)]'; for ((i=0; i<x; i++)); do :; done`, shell: "bash"},
	{name: "arithmetic in a subscript", command: `x='a[$(rm canary)]'; a=(1); echo ${a[x]}`, shell: "bash"},
	{name: "let", command: `let 'x=a[$(rm canary)]'`, shell: "bash"},
	{name: "integer variable", command: `declare -i n; n='a[$(rm canary)]'`, shell: "bash"},
	{name: "test -v", command: `test -v 'a[$(rm canary)]'`, shell: "bash"},
	{name: "printf -v", command: `printf -v 'a[$(rm canary)]' x`, shell: "bash"},
	{name: "read into a subscript", command: `read 'a[$(rm canary)]' <<< x`, shell: "bash"},
	{name: "unset a subscript", command: `a=(1); unset 'a[$(rm canary)]'`, shell: "bash"},
	{name: "indirect expansion", command: `x='a[$(rm canary)]'; echo ${!x}`, shell: "bash"},
	{name: "prompt expansion", command: `x='$(rm canary)'; echo ${x@P}`, shell: "bash"},
	{name: "mapfile callback", command: `mapfile -C 'rm canary' -c 1 <<< x`, shell: "bash"},
	// Around an allowlist of ls, cat, echo and true.
	{name: "allowlist: a program of the same name", command: `./bin/ls`, allow: allowlisted},
	{name: "allowlist: PATH", command: `PATH=./bin ls`, allow: allowlisted},
	{name: "allowlist: substitution", command: `echo $(rm canary)`, allow: allowlisted},
	{name: "allowlist: process substitution", command: `cat <(rm canary)`, shell: "bash", allow: allowlisted},
	{name: "allowlist: sequence", command: `ls; rm canary`, allow: allowlisted},
	{name: "allowlist: a program the allowed one runs", command: `echo canary | xargs rm`, allow: []string{"echo", "xargs"}},
}

var allowlisted = []string{"ls", "cat", "echo", "true"}

// newCanaryProject makes a project with the canary, a script that removes
// it (evil.sh) and an ls that removes it (bin/ls, and 1/ls for PATH=1).
func newCanaryProject(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"canary":  "alive\n",
		"evil.sh": "rm -f canary\n",
		"bin/ls":  "#!/bin/sh\n/bin/rm -f canary\n",
		"1/ls":    "#!/bin/sh\n/bin/rm -f canary\n",
	}
	for name, text := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// canaryAlive reports whether the canary in dir still holds what it held.
func canaryAlive(dir string) bool {
	data, err := os.ReadFile(filepath.Join(dir, "canary"))
	return err == nil && string(data) == "alive\n"
}

func runShell(t *testing.T, p tools.ShellPolicy, command string) tools.Result {
	t.Helper()
	sh, err := tools.NewShell(p)
	if err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal(tools.ShellInput{Command: command})
	res, err := sh.Call(context.Background(), tools.Context{}, args)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestShellBypasses runs each bypass through the shell tool: it must be
// refused and the canary must survive. Each is also run with the checks
// off, where it must destroy the canary: an entry that does not is not an
// attack, and the test says so.
func TestShellBypasses(t *testing.T) {
	for _, b := range bypasses {
		t.Run(b.name, func(t *testing.T) {
			shell := b.shell
			if shell != "" {
				if _, err := exec.LookPath(shell); err != nil {
					t.Skipf("%s is not installed", shell)
				}
			}
			dir := newCanaryProject(t)
			res := runShell(t, tools.ShellPolicy{Dir: dir, Shell: shell, Allow: b.allow}, b.command)
			if res.Success || !strings.HasPrefix(res.Message, "Blocked by the shell policy") {
				t.Errorf("got success %v, %q; want it blocked", res.Success, res.Message)
			}
			if !canaryAlive(dir) {
				t.Errorf("the canary did not survive")
			}
			for _, prog := range b.needs {
				if _, err := exec.LookPath(prog); err != nil {
					t.Logf("%s is not installed: the attack itself is not shown here", prog)
					return
				}
			}
			dir = newCanaryProject(t)
			res = runShell(t, tools.ShellPolicy{Dir: dir, Shell: shell, Unsafe: true}, b.command)
			if canaryAlive(dir) {
				t.Errorf("unchecked, the command left the canary alive: not an attack (%s)", res.Message)
			}
		})
	}
}
