package confine_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/internal/confine"
)

// needLandlock skips the test where the kernel cannot confine, saying why.
func needLandlock(t *testing.T) {
	t.Helper()
	if abi := confine.ABI(); abi < confine.MinABI {
		t.Skipf("the kernel offers Landlock ABI %d, confinement needs %d (Linux 6.2 or later, with landlock in the lsm= boot list)", abi, confine.MinABI)
	}
}

func bash(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed")
	}
	return path
}

// TestWrites runs bash confined to one directory: what it may do there,
// and what it may not do anywhere else.
func TestWrites(t *testing.T) {
	needLandlock(t)
	sh := bash(t)
	base := t.TempDir()
	inside, outside := filepath.Join(base, "inside"), filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(inside, "a"), filepath.Join(inside, "b"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	canary := filepath.Join(outside, "canary")
	if err := os.WriteFile(canary, []byte("alive"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, script string
		ok           bool
	}{
		{"write inside", "echo x > a/new && cat a/new", true},
		{"rename between directories inside", "echo x > a/m && mv a/m b/m && cat b/m", true},
		{"truncate inside", "echo x > a/t && : > a/t", true},
		{"write to /dev/null", "echo x > /dev/null", true},
		{"write to standard output by name", "echo x > /dev/stdout", true},
		{"process substitution", "cat <(echo x)", true},
		{"read outside", "cat " + canary, true},
		{"run a program", "ls / > /dev/null", true},
		{"write outside", "echo x > " + filepath.Join(outside, "new"), false},
		{"overwrite outside", "echo dead > " + canary, false},
		{"truncate outside", ": > " + canary, false},
		{"remove outside", "rm -f " + canary, false},
		{"rename out", "echo x > a/o && mv a/o " + filepath.Join(outside, "o"), false},
		{"make a directory outside", "mkdir " + filepath.Join(outside, "d"), false},
		{"a grandchild writes outside", "sh -c 'echo x > " + filepath.Join(outside, "g") + "'", false},
		{"a link inside to outside", "ln -s " + outside + " a/l && echo x > a/l/new", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd, err := confine.Command(t.Context(), []string{inside}, sh, "bash", "-c", tt.script)
			if err != nil {
				t.Fatal(err)
			}
			cmd.Dir = inside
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err = cmd.Run()
			if tt.ok && err != nil {
				t.Errorf("got %v, want success; output:\n%s", err, out.String())
			}
			if !tt.ok && (err == nil || !strings.Contains(out.String(), "ermission denied")) {
				t.Errorf("got %v, want a failure saying permission denied; output:\n%s", err, out.String())
			}
		})
	}
	if data, err := os.ReadFile(canary); err != nil || string(data) != "alive" {
		t.Errorf("canary: got %q, %v; want it unchanged", data, err)
	}
	entries, _ := os.ReadDir(outside)
	if len(entries) != 1 {
		t.Errorf("outside holds %d entries, want only the canary", len(entries))
	}
}

// TestCommandErrors checks the refusals of Command and of the child.
func TestCommandErrors(t *testing.T) {
	needLandlock(t)
	if _, err := confine.Command(t.Context(), []string{t.TempDir()}, "sh", "sh"); err == nil {
		t.Error("a relative program path: got no error")
	}
	if _, err := confine.Command(t.Context(), []string{filepath.Join(t.TempDir(), "missing")}, "/bin/sh", "sh"); err == nil {
		t.Error("a missing writable directory: got no error")
	}
	cmd, err := confine.Command(t.Context(), []string{t.TempDir()}, "/no/such/program", "x")
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 126 || !strings.Contains(stderr.String(), "nothing was run") {
		t.Errorf("a missing program: got %v, %q; want exit 126 saying nothing was run", err, stderr.String())
	}
}

// TestUnconfinedParent checks that confining a child leaves this process
// free to write where it likes.
func TestUnconfinedParent(t *testing.T) {
	needLandlock(t)
	sh := bash(t)
	dir := t.TempDir()
	cmd, err := confine.Command(t.Context(), []string{dir}, sh, "bash", "-c", "true")
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "x"), []byte("x"), 0o644); err != nil {
		t.Errorf("this process can no longer write outside the child's directory: %v", err)
	}
}
