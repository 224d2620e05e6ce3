package tools_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/internal/confine"
	"github.com/unfold-dev/unfold/tools"
)

// TestShellAllowlistProgram checks that the allowlist matches the program
// that would run, not its name: a copy of ls in the project, or one in
// another directory, is not ls.
func TestShellAllowlistProgram(t *testing.T) {
	lsPath, err := exec.LookPath("ls")
	if err != nil {
		t.Skip("ls is not installed")
	}
	data, err := os.ReadFile(lsPath)
	if err != nil {
		t.Fatal(err)
	}
	dir, other := t.TempDir(), t.TempDir()
	for _, d := range []string{dir, other} {
		if err := os.WriteFile(filepath.Join(d, "ls"), data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(dir, "list")
	if err := os.Symlink(lsPath, link); err != nil {
		t.Fatal(err)
	}
	p := tools.ShellPolicy{Dir: dir, Allow: []string{"ls"}}
	tests := []struct {
		cmd  string
		rule string
	}{
		{"ls", ""},
		{lsPath, ""},
		{"./ls", "allowlist"},
		{filepath.Join(other, "ls"), "allowlist"},
		{"./list", "allowlist"}, // the same file by another name
		{"cd . && ./ls", "allowlist"},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			err := p.Check(tt.cmd)
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

// TestShellConfined runs commands the policy lets through (it does not
// look into cp or a script file) that write outside the project: where
// the kernel offers Landlock the writes fail and the canary outside
// survives; unconfined, the same command destroys it.
func TestShellConfined(t *testing.T) {
	if abi := confine.ABI(); abi < confine.MinABI {
		t.Skipf("the kernel offers Landlock ABI %d; confinement needs %d (Linux 6.2 or later, landlock in the lsm= boot list)", abi, confine.MinABI)
	}
	base := t.TempDir()
	project, tmp, outside := filepath.Join(base, "project"), filepath.Join(base, "tmp"), filepath.Join(base, "outside")
	for _, d := range []string{project, tmp, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The system temporary directory is writable; make it one the canary
	// is not in.
	t.Setenv("TMPDIR", tmp)
	canary := filepath.Join(outside, "canary")
	script := filepath.Join(project, "w.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho dead > "+canary+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	reset := func() {
		t.Helper()
		if err := os.WriteFile(canary, []byte("alive\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	alive := func() bool {
		data, err := os.ReadFile(canary)
		return err == nil && string(data) == "alive\n"
	}
	sh, err := tools.NewShell(tools.ShellPolicy{Dir: project})
	if err != nil {
		t.Fatal(err)
	}
	if want := "can write only in " + project + ", " + tmp; !strings.Contains(sh.Description(), want) {
		t.Errorf("description %q does not say %q", sh.Description(), want)
	}
	outsideWrites := []string{
		"cp /dev/null " + canary,
		"sh ./w.sh",
		"find " + outside + " -name canary -exec cp /dev/null {} +",
	}
	for _, cmd := range outsideWrites {
		t.Run(cmd, func(t *testing.T) {
			reset()
			res := runShell(t, tools.ShellPolicy{Dir: project}, cmd)
			if strings.HasPrefix(res.Message, "Blocked") {
				t.Fatalf("the policy refused it (%s); the test needs a command it lets through", res.Message)
			}
			if !alive() || !strings.Contains(res.Message, "ermission denied") {
				t.Errorf("confined: got %q, canary alive %v; want permission denied and the canary alive", res.Message, alive())
			}
			reset()
			runShell(t, tools.ShellPolicy{Dir: project, Unconfined: true}, cmd)
			if alive() {
				t.Errorf("unconfined, the command left the canary alive: it does not write outside")
			}
		})
	}
	inside := "cp /dev/null made && mkdir -p a b && echo x > /dev/null && cp made a/m && mv a/m b/m && cp made \"$TMPDIR/t\" && ls b"
	res := runShell(t, tools.ShellPolicy{Dir: project, Unsafe: true}, inside)
	if !res.Success || !strings.Contains(res.Message, "stdout:\nm") {
		t.Errorf("writes inside the project and the temporary directory: got %q", res.Message)
	}
}

func TestShellDescription(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name   string
		policy tools.ShellPolicy
		want   []string
		not    []string
	}{
		{"default", tools.ShellPolicy{Dir: dir}, []string{"every command it would run is checked", "Not checked: what a program does itself", "cannot be checked"}, []string{"other than these"}},
		{"allowlist", tools.ShellPolicy{Dir: dir, Allow: []string{"ls", "git"}}, []string{"any program or builtin other than these (the same file, by the same name): ls, git"}, nil},
		{"unsafe", tools.ShellPolicy{Dir: dir, Unsafe: true}, []string{"Commands are not checked."}, []string{"Refused"}},
		{"unconfined", tools.ShellPolicy{Dir: dir, Unconfined: true}, []string{"Writes are not confined"}, []string{"Landlock"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sh, err := tools.NewShell(tt.policy)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(sh.Description(), w) {
					t.Errorf("description %q lacks %q", sh.Description(), w)
				}
			}
			for _, w := range tt.not {
				if strings.Contains(sh.Description(), w) {
					t.Errorf("description %q says %q", sh.Description(), w)
				}
			}
		})
	}
}

func TestNewShellUncheckedShell(t *testing.T) {
	dir := t.TempDir()
	zsh := filepath.Join(dir, "zsh")
	if err := os.WriteFile(zsh, []byte("#!/bin/sh\nexec /bin/sh \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := tools.NewShell(tools.ShellPolicy{Dir: dir, Shell: zsh}); err == nil || !strings.Contains(err.Error(), "checks sh, dash and bash") {
		t.Errorf("got %v, want a refusal of a shell the policy cannot check", err)
	}
	if _, err := tools.NewShell(tools.ShellPolicy{Dir: dir, Shell: zsh, Unsafe: true}); err != nil {
		t.Errorf("unsafe: got %v, want the shell accepted", err)
	}
}
