package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProjectRefused: every command that takes --project refuses one
// that does not exist, or is a file, with the same message and exit
// status 2, before starting anything; render did not look at it.
func TestProjectRefused(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "no-such-dir")
	file := filepath.Join(dir, "prompt.md")
	if err := os.WriteFile(file, []byte("# Task\n\nDo it.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	commands := map[string][]string{
		"serve":  {"serve", "--builtins", "none"},
		"repl":   {"repl", "--builtins", "none"},
		"mcp":    {"mcp", "--builtins", "none"},
		"agent":  {"agent", "a task", "--builtins", "none", "--base-url", "http://127.0.0.1:1/v1", "--model", "m"},
		"render": {"render", file},
	}
	for name, args := range commands {
		for _, tc := range []struct{ what, project, want string }{
			{"missing", missing, "unfold " + name + ": --project: directory " + missing + " does not exist; give a directory that exists\n"},
			{"a file", file, "unfold " + name + ": --project: " + file + " is not a directory; give the project's directory\n"},
		} {
			t.Run(name+"/"+tc.what, func(t *testing.T) {
				var stdout, stderr bytes.Buffer
				code := run(append(args, "--project", tc.project), strings.NewReader(""), &stdout, &stderr)
				if code != 2 || stderr.String() != tc.want || stdout.Len() != 0 {
					t.Errorf("exit %d, stderr %q, stdout %q; want 2, %q", code, stderr.String(), stdout.String(), tc.want)
				}
			})
		}
	}
}
