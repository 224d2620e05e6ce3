package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeBuiltins drives the built-in environments through the real
// binary: each gets a command and shows its screen.
func TestServeBuiltins(t *testing.T) {
	project := t.TempDir()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed; the python environment needs it")
	}
	lines := []string{
		`{"type":"command","environment":"editor","command":"create notes.md\n# Notes\nfirst line"}`,
		`{"type":"command","environment":"python","command":"n = len(open('notes.md').read().splitlines())\nn * 10"}`,
		`{"type":"command","environment":"bash","command":"cd /tmp && wc -l < $OLDPWD/notes.md"}`,
	}
	cmd := exec.Command(binary, "serve", "--batch", "--project", project)
	cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	answers := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
	if len(answers) != len(lines) {
		t.Fatalf("got %d answers, want %d: %s", len(answers), len(lines), out)
	}
	var m serveMessage
	if err := json.Unmarshal(answers[0], &m); err != nil {
		t.Fatal(err)
	}
	if !m.Response.Success {
		t.Errorf("editor create failed: %+v", m.Response)
	}
	if !strings.Contains(m.Screen["editor"].Content, "Commands:") {
		t.Errorf("editor screen missing its help: %q", m.Screen["editor"].Content)
	}
	if err := json.Unmarshal(answers[1], &m); err != nil {
		t.Fatal(err)
	}
	if !m.Response.Success || m.Response.Output != "20" {
		t.Errorf("python: got %+v, want 20", m.Response)
	}
	if !strings.Contains(m.Screen["python"].Content, "  n: int") {
		t.Errorf("python screen: %q", m.Screen["python"].Content)
	}
	m = serveMessage{}
	if err := json.Unmarshal(answers[2], &m); err != nil {
		t.Fatal(err)
	}
	if !m.Response.Success || strings.TrimSpace(m.Response.Output) != "2" {
		t.Errorf("bash: got %+v, want 2", m.Response)
	}
	if !strings.HasPrefix(m.Screen["bash"].Content, "Working directory: /tmp\nLast exit code: 0") {
		t.Errorf("bash screen: %q", m.Screen["bash"].Content)
	}
	data, err := os.ReadFile(filepath.Join(project, "notes.md"))
	if err != nil || string(data) != "# Notes\nfirst line\n" {
		t.Errorf("notes.md: got %q, %v", data, err)
	}
}

func TestBuiltinsFlag(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run([]string{"serve", "--builtins", "nope", "--project", t.TempDir()}, strings.NewReader(""), &stdout, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), `--builtins: unknown environment "nope"`) {
		t.Errorf("exit %d, stderr %q; want 1 and the unknown environment named", code, stderr.String())
	}
	for _, names := range []string{"all", "none", "editor", "python,editor", "bash"} {
		stdout.Reset()
		stderr.Reset()
		if code := run([]string{"serve", "--builtins", names, "--project", t.TempDir()}, strings.NewReader(""), &stdout, &stderr); code != 0 {
			t.Errorf("--builtins %s: exit %d, stderr %q", names, code, stderr.String())
		}
	}
}
