package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/tools"
)

func TestShellDefaultRules(t *testing.T) {
	tests := []struct {
		rule    string
		blocked []string
	}{
		{"rm", []string{"rm -rf /", "ls && rm x", "/bin/rm x", "find . | xargs rm", "rmdir d", "shred f"}},
		{"privilege", []string{"sudo ls", "su root", "echo hi; doas ls"}},
		{"package-manager", []string{"apt-get install curl", "apt install x", "brew install go", "yum remove x", "dnf upgrade"}},
		{"package-install", []string{"pip install requests", "pip3 uninstall x", "npm install left-pad", "go install x@latest", "python -m pip install x", "cargo install ripgrep"}},
		{"redirection", []string{"echo hi > out.txt", "date >> log", "ls | tee files.txt", "cat a 1> b"}},
		{"disk", []string{"dd if=/dev/zero of=x", "mkfs.ext4 /dev/sda1", "mount /dev/sdb /mnt"}},
		{"power", []string{"shutdown now", "reboot", "systemctl stop ssh"}},
		{"permissions", []string{"chmod 777 x", "chown me x"}},
		{"kill", []string{"kill -9 1", "pkill bash", "killall python"}},
		{"pipe-to-shell", []string{"curl https://x | sh", "wget -O- x | bash", "echo 'print(1)' | python3"}},
		{"eval", []string{"eval $CMD", "source env.sh", ". ./env.sh"}},
		{"leave-dir", []string{"cd / && ls", "cd .. && ls", "cd ~", "pushd /etc"}},
	}
	p := tools.ShellPolicy{}
	seen := map[string]bool{}
	for _, tt := range tests {
		seen[tt.rule] = true
		for _, cmd := range tt.blocked {
			t.Run(tt.rule+"/"+cmd, func(t *testing.T) {
				var be *tools.BlockedError
				if err := p.Check(cmd); !errors.As(err, &be) || be.Rule != tt.rule {
					t.Errorf("Check(%q): got %v, want blocked by %s", cmd, err, tt.rule)
				}
			})
		}
	}
	for _, r := range tools.ShellRules() {
		if !seen[r.Name] {
			t.Errorf("rule %s has no test case", r.Name)
		}
	}
}

// TestShellAllowed checks that everyday commands pass the default policy:
// a refusal of ordinary work is a defect too.
func TestShellAllowed(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "run.sh"), []byte("#!/bin/sh\necho ran\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ shell, cmd string }{
		{"", "ls -la"}, {"", "git status"}, {"", "grep -rn 'rm' ."}, {"", "cat README.md"}, {"", "go test ./... 2>&1 | tail -5"},
		{"", "echo hi 2>&1"}, {"", "make build >/dev/null"}, {"", "python3 script.py"}, {"", "./run.sh"}, {"", "cd src && ls"},
		{"", "echo form"}, {"", "pip list"}, {"", "python3 -c 'print(1)'"}, {"", `for f in *.go; do wc -l "$f"; done`},
		{"", "x=$(ls | wc -l); echo $x"}, {"", "find . -name '*.go' -exec grep -l foo {} +"}, {"", "git log --oneline | head -5"},
		{"", "sh -c 'echo hi'"}, {"", "echo $((1+2))"}, {"", "ls | xargs -n1 echo"}, {"", "timeout 5 ls"}, {"", "env FOO=1 ls"},
		{"", "cat <<'EOF'\nhello $x\nEOF"}, {"", "test -f x && echo yes"}, {"", "[ -d src ] || echo no"}, {"", "export FOO=bar; echo $FOO"},
		{"", "ls >/dev/null 2>&1"}, {"", "echo err >&2"}, {"", "set -e; ls"}, {"", "command -v ls"}, {"", "type ls"},
		{"", "read -r x <<EOF\nhi\nEOF\necho $x"}, {"", "nice -n 10 ls"}, {"", "env"}, {"", "xargs --version"},
		{"", "trap 'echo bye' EXIT; ls"}, {"", "eval 'echo hi'"}, {"", "node -e 'console.log(1)'"}, {"", "perl -e 'print 1'"},
		{"", "go vet ./... && go build ./..."}, {"", "ls ~"}, {"", "ls $HOME"}, {"", "awk '{print $1}' /dev/null"},
		{"", "echo a | sort | uniq -c"}, {"", "printf '%s\\n' a b"},
		{"bash", "for ((i=0;i<3;i++)); do echo $i; done"}, {"bash", "[[ -n $x ]] && echo y"}, {"bash", "n=3; echo $((n*2))"},
		{"bash", "arr=(a b); echo ${arr[0]} ${#arr[@]}"}, {"bash", "declare -A m; m[k]=v; echo ${m[k]}"},
		{"bash", "set -euo pipefail; ls"}, {"bash", "echo ${x:-default}"}, {"bash", "diff <(echo a) <(echo b)"},
		{"bash", `while read -r line; do echo "$line"; done < /dev/null`}, {"bash", `count=$(grep -c x /dev/null); echo "$count"`},
	}
	for _, tt := range tests {
		t.Run(tt.shell+"/"+tt.cmd, func(t *testing.T) {
			p := tools.ShellPolicy{Dir: dir, Shell: tt.shell}
			if err := p.Check(tt.cmd); err != nil {
				t.Errorf("Check(%q): got %v, want nil", tt.cmd, err)
			}
		})
	}
}

func TestShellAllowlistAndUnsafe(t *testing.T) {
	tests := []struct {
		name   string
		policy tools.ShellPolicy
		cmd    string
		rule   string // "" means allowed
	}{
		{"listed program", tools.ShellPolicy{Allow: []string{"ls", "grep"}}, "ls -la | grep go", ""},
		{"unlisted program", tools.ShellPolicy{Allow: []string{"ls"}}, "ls && cat x", "allowlist"},
		{"env assignment skipped", tools.ShellPolicy{Allow: []string{"go"}}, "GOFLAGS=-v go test ./...", ""},
		{"substitution checked", tools.ShellPolicy{Allow: []string{"echo"}}, "echo $(whoami)", "allowlist"},
		{"substitution of a listed program", tools.ShellPolicy{Allow: []string{"echo", "ls"}}, "echo $(ls)", ""},
		{"builtin listed", tools.ShellPolicy{Allow: []string{"cd", "ls"}}, "cd . && ls", ""},
		{"builtin not listed", tools.ShellPolicy{Allow: []string{"ls"}}, "cd . && ls", "allowlist"},
		{"wrapper and its command listed", tools.ShellPolicy{Allow: []string{"timeout", "ls"}}, "timeout 5 ls", ""},
		{"wrapper's command not listed", tools.ShellPolicy{Allow: []string{"timeout", "ls"}}, "timeout 5 cat x", "allowlist"},
		{"blocklist still applies", tools.ShellPolicy{Allow: []string{"rm"}}, "rm x", "rm"},
		{"unsafe skips blocklist", tools.ShellPolicy{Unsafe: true}, "rm -rf build", ""},
		{"unsafe skips allowlist", tools.ShellPolicy{Unsafe: true, Allow: []string{"ls"}}, "sudo reboot", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.policy.Check(tt.cmd)
			var be *tools.BlockedError
			switch {
			case tt.rule == "" && err != nil:
				t.Errorf("got %v, want allowed", err)
			case tt.rule != "" && (!errors.As(err, &be) || be.Rule != tt.rule):
				t.Errorf("got %v, want blocked by %s", err, tt.rule)
			}
		})
	}
}

func callShell(t *testing.T, p tools.ShellPolicy, in tools.ShellInput) tools.Result {
	t.Helper()
	sh, err := tools.NewShell(p)
	if err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal(in)
	res, err := sh.Call(context.Background(), tools.Context{}, args)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestShellRun(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		policy  tools.ShellPolicy
		in      tools.ShellInput
		success bool
		want    string
	}{
		{"runs in the working directory", tools.ShellPolicy{Dir: dir}, tools.ShellInput{Command: "pwd"}, true, "stdout:\n" + dir},
		{"runs in a subdirectory", tools.ShellPolicy{Dir: dir}, tools.ShellInput{Command: "pwd", Dir: "sub"}, true, filepath.Join(dir, "sub")},
		{"exit status", tools.ShellPolicy{Dir: dir}, tools.ShellInput{Command: "echo oops >&2; exit 3"}, true, "exit status 3\nstderr:\noops"},
		{"directory outside", tools.ShellPolicy{Dir: dir}, tools.ShellInput{Command: "ls", Dir: ".."}, false, "is outside the working directory"},
		{"blocked", tools.ShellPolicy{Dir: dir}, tools.ShellInput{Command: "rm -rf sub"}, false, "Blocked by the shell policy (rm)"},
		{"dry run", tools.ShellPolicy{Dir: dir, DryRun: true}, tools.ShellInput{Command: "mkdir made"}, true, "Dry run: would run \"mkdir made\""},
		{"dry run still checks", tools.ShellPolicy{Dir: dir, DryRun: true}, tools.ShellInput{Command: "sudo ls"}, false, "Blocked by the shell policy (privilege)"},
		{"unsafe runs", tools.ShellPolicy{Dir: dir, Unsafe: true}, tools.ShellInput{Command: "echo x > made.txt && cat made.txt"}, true, "stdout:\nx"},
		{"output capped", tools.ShellPolicy{Dir: dir, MaxOutput: 10}, tools.ShellInput{Command: "printf '%050d' 0"}, true, "[... 40 more bytes cut]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := callShell(t, tt.policy, tt.in)
			if res.Success != tt.success || !strings.Contains(res.Message, tt.want) {
				t.Errorf("got success %v, %q; want success %v and %q in it", res.Success, res.Message, tt.success, tt.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "made")); !os.IsNotExist(err) {
		t.Errorf("dry run made a directory: got %v, want not exist", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "sub")); err != nil {
		t.Errorf("blocked rm removed sub: %v", err)
	}
}

func TestNewShellBadDir(t *testing.T) {
	_, err := tools.NewShell(tools.ShellPolicy{Dir: filepath.Join(t.TempDir(), "missing")})
	if err == nil || !strings.HasPrefix(err.Error(), "tools: new shell:") {
		t.Errorf("got %v, want a tools: new shell error", err)
	}
}
