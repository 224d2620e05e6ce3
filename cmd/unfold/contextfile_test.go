package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAgentContextInTheWay: a file where the context directory goes, or a
// directory where a context file goes, fails open_sections with a message
// saying what is in the way and what to do; the run goes on and nothing
// in the way is changed.
func TestAgentContextInTheWay(t *testing.T) {
	for _, tt := range []struct {
		name  string
		setup func(t *testing.T, project string) string // returns the path in the way
		want  string
	}{
		{"a file where the directory goes", func(t *testing.T, project string) string {
			p := filepath.Join(project, "context")
			if err := os.WriteFile(p, []byte("notes"), 0o644); err != nil {
				t.Fatal(err)
			}
			return p
		}, "Failed to write context for 'reference': context is a file, not a directory; move or remove it so that context files can be written in a directory of that name"},
		{"a directory where the file goes", func(t *testing.T, project string) string {
			p := filepath.Join(project, "context", "reference.md")
			if err := os.MkdirAll(filepath.Join(p, "inside"), 0o755); err != nil {
				t.Fatal(err)
			}
			return p
		}, "Failed to write context for 'reference': context/reference.md is a directory, not a file; move or remove it so that the section's context file can be written there"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			project := writeProject(t, mcpProject)
			inTheWay := tt.setup(t, project)
			url, reqs := fakeEndpoint(t, `call open_sections {"section_keys":["reference"],"reason":"read it"}`, "Done.")
			var stdout, stderr bytes.Buffer
			code := run([]string{"agent", "read the reference", "--project", project, "--prompt", filepath.Join(project, "prompt.md"),
				"--base-url", url, "--model", "m", "--builtins", "none"}, strings.NewReader(""), &stdout, &stderr)
			if code != 0 || len(*reqs) != 2 {
				t.Fatalf("exit %d after %d requests, want 0 after 2; stderr:\n%s", code, len(*reqs), stderr.String())
			}
			if got := toolResults((*reqs)[1])["call0"]; !strings.Contains(got, tt.want) {
				t.Errorf("the model was told %q; want %q in it", got, tt.want)
			}
			if _, err := os.Stat(inTheWay); err != nil {
				t.Errorf("what was in the way: %v", err)
			}
		})
	}
}
