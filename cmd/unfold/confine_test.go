package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// mkfifo makes a named pipe at path, skipping the test where there are none.
func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
}

// TestRenderNotRegular runs the binary on inputs that never end or never
// start: named pipes with no writer, /dev/zero, and a template that doubles
// itself. Each must end with an error naming the problem. The binary runs
// with a 2 GiB address-space limit and a deadline, so a reader that fills
// memory or waits forever fails the test instead of the machine.
func TestRenderNotRegular(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("sh is not installed; the test limits the binary's memory with ulimit")
	}
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.md")
	mkfifo(t, fifo)
	prompt := filepath.Join(dir, "prompt.md")
	var doubling strings.Builder
	doubling.WriteString("# Big\n\n")
	for i := range 15 {
		doubling.WriteString(`{{define "t` + string(rune('a'+i)) + `"}}{{template "t` + string(rune('b'+i)) + `"}}{{template "t` + string(rune('b'+i)) + `"}}{{end}}`)
	}
	doubling.WriteString(`{{define "tp"}}` + strings.Repeat("x", 1024) + `{{end}}{{template "ta"}}` + "\n")
	big := filepath.Join(dir, "big.md")
	for path, text := range map[string]string{prompt: "# A\n\nHello {{.name}}.\n", big: doubling.String()} {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"prompt file is a named pipe", []string{fifo}, fifo + ": not a regular file: it is a named pipe (FIFO)"},
		{"prompt file is /dev/zero", []string{"/dev/zero"}, "/dev/zero: not a regular file: it is a character device"},
		{"params file is a named pipe", []string{prompt, "--params", fifo}, "--params: " + fifo + ": not a regular file: it is a named pipe (FIFO)"},
		{"params file is /dev/zero", []string{prompt, "--params", "/dev/zero"}, "--params: /dev/zero: not a regular file: it is a character device"},
		{"template that doubles itself", []string{big}, "the body is larger than 16777216 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, "sh", append([]string{"-c", `ulimit -v 2097152 && exec "$0" render "$@"`, binary}, tt.args...)...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			switch {
			case ctx.Err() != nil:
				t.Fatalf("unfold render did not end: %v; stderr:\n%s", ctx.Err(), stderr.String())
			case !errors.As(err, &exit) || exit.ExitCode() != 1:
				t.Fatalf("got %v, want exit status 1; stderr:\n%s", err, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("got stderr %q, want it to contain %q", stderr.String(), tt.want)
			}
		})
	}
}

// TestMCPSpecNamedForTool starts the server on a project whose env/help.json
// takes the name of the server's help tool: the file is skipped with an
// error, and the server starts with its help tool and the other spec.
func TestMCPSpecNamedForTool(t *testing.T) {
	needSh(t)
	project := writeProject(t, map[string]string{
		"env/tally.sh":   tallyEnv,
		"env/tally.json": `{"kind":"process","executable":"sh","args":["env/tally.sh"],"description":"A tally"}`,
		"env/help.json":  `{"kind":"process","executable":"sh","args":["env/tally.sh"],"description":"Not the help tool"}`,
	})
	cs, stop := startStdio(t, "--builtins", "none", "--project", project)
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if tool.Name == "help" && strings.Contains(tool.Description, "Not the help tool") {
			t.Error("the help tool is the spec file's environment")
		}
	}
	slices.Sort(names)
	if want := []string{"help", "tally"}; !slices.Equal(names, want) {
		t.Errorf("got tools %v, want %v", names, want)
	}
	code, stderr := stop()
	if code != 0 {
		t.Errorf("got exit %d, want 0; stderr:\n%s", code, stderr)
	}
	if want := "skipped env/help.json: the name help is taken by a tool the front ends offer"; !strings.Contains(stderr, want) {
		t.Errorf("got stderr %q, want it to contain %q", stderr, want)
	}
}

// outsideProject returns a project made from files and an empty directory
// beside it that nothing may reach.
func outsideProject(t *testing.T, files map[string]string) (project, outside string) {
	t.Helper()
	project = writeProject(t, files)
	outside = t.TempDir()
	return project, outside
}

// assertEmpty fails the test if anything was written in dir.
func assertEmpty(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("%s was written outside the project", filepath.Join(dir, e.Name()))
	}
}

func symlink(t *testing.T, target, name string) {
	t.Helper()
	if err := os.Symlink(target, name); err != nil {
		t.Skipf("symbolic links unavailable: %v", err)
	}
}

// TestMCPContextConfined serves a prompt from a project whose context
// directory, or a context file in it, is a symbolic link leading outside
// the project: open_sections writes nothing outside, and reading a context
// file as a resource neither reads outside nor waits on a named pipe.
func TestMCPContextConfined(t *testing.T) {
	needSh(t)
	t.Run("context directory links outside", func(t *testing.T) {
		project, outside := outsideProject(t, mcpProject)
		symlink(t, outside, filepath.Join(project, "context"))
		cs, stop := startStdio(t, "--builtins", "none", "--project", project, "--prompt", filepath.Join(project, "prompt.md"))
		res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "open_sections", Arguments: map[string]any{"section_keys": []string{"reference"}, "reason": "read it"}})
		if err != nil {
			t.Fatal(err)
		}
		text := ""
		for _, c := range res.Content {
			if tc, ok := c.(*sdk.TextContent); ok {
				text += tc.Text
			}
		}
		if !res.IsError || !strings.Contains(text, "Failed to write context for 'reference'") {
			t.Errorf("got error %v, %q; want the write refused", res.IsError, text)
		}
		stop()
		assertEmpty(t, outside)
	})
	t.Run("context files link outside", func(t *testing.T) {
		project, outside := outsideProject(t, mcpProject)
		if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("the secret outside"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(filepath.Join(project, "context"), 0o755); err != nil {
			t.Fatal(err)
		}
		symlink(t, filepath.Join(outside, "secret"), filepath.Join(project, "context", "reference.md"))
		mkfifo(t, filepath.Join(project, "context", "pipe.md"))
		cs, stop := startStdio(t, "--builtins", "none", "--project", project, "--prompt", filepath.Join(project, "prompt.md"))
		defer stop()
		for _, uri := range []string{"unfold://context/reference.md", "unfold://context/pipe.md"} {
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
			ended := ctx.Err() == nil
			cancel()
			switch {
			case !ended:
				t.Errorf("%s: the read did not end", uri)
			case err == nil:
				t.Errorf("%s: got %q, want an error", uri, res.Contents[0].Text)
			}
		}
	})
}

// TestAgentContextConfined runs the agent on a project whose context
// directory links outside it; the model opens a content-only section.
func TestAgentContextConfined(t *testing.T) {
	project, outside := outsideProject(t, mcpProject)
	symlink(t, outside, filepath.Join(project, "context"))
	url, reqs := fakeEndpoint(t, `call open_sections {"section_keys":["reference"],"reason":"read it"}`, "Done.")
	var stdout, stderr bytes.Buffer
	code := run([]string{"agent", "read the reference", "--project", project, "--prompt", filepath.Join(project, "prompt.md"),
		"--base-url", url, "--model", "m", "--builtins", "none"}, strings.NewReader(""), &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit: got %d, want 0; stderr:\n%s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "tool open_sections: failed") {
		t.Errorf("stderr: got\n%s\nwant open_sections to fail", stderr.String())
	}
	if len(*reqs) == 2 && !strings.Contains(string(mustJSON(t, (*reqs)[1])), "Failed to write context for 'reference'") {
		t.Errorf("the model was not told the write failed: %s", mustJSON(t, (*reqs)[1]))
	}
	assertEmpty(t, outside)
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
