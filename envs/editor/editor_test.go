package editor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/afero"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/envs/envtest"
	"github.com/unfold-dev/unfold/internal/golden"
	"github.com/unfold-dev/unfold/session"
)

// newMem returns an editor over an in-memory filesystem holding files.
func newMem(t *testing.T, files map[string]string, opts ...Option) (*Editor, afero.Fs) {
	t.Helper()
	fsys := afero.NewMemMapFs()
	for name, content := range files {
		if err := afero.WriteFile(fsys, name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e, err := NewFs(fsys, nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e, fsys
}

// run executes command and fails the test unless its success is want.
func run(t *testing.T, e *Editor, command string, want bool) string {
	t.Helper()
	r, err := e.Execute(context.Background(), command)
	if err != nil {
		t.Fatalf("Execute(%q): got error %v, want a response", command, err)
	}
	if r.Success != want {
		t.Fatalf("Execute(%q): got success %v, want %v; output:\n%s", command, r.Success, want, r.Output)
	}
	return r.Output
}

// ok executes command and fails the test unless it succeeds.
func ok(t *testing.T, e *Editor, command string) string {
	t.Helper()
	return run(t, e, command, true)
}

// fail executes command and fails the test unless it fails.
func fail(t *testing.T, e *Editor, command string) string {
	t.Helper()
	return run(t, e, command, false)
}

// contains fails the test unless got has each of wants in it; what
// names the step in the message.
func contains(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(got, want) {
			t.Errorf("%s: got %q, want it to contain %q", what, got, want)
		}
	}
}

// screen returns the screen content.
func screen(t *testing.T, e *Editor) string {
	t.Helper()
	s, err := e.Screen()
	if err != nil {
		t.Fatalf("Screen(): got error %v, want none", err)
	}
	if n := strings.Count(s.Content, "\n") + 1; s.MaxLines < n {
		t.Errorf("Screen(): got MaxLines %d, want at least the %d lines of the content", s.MaxLines, n)
	}
	return s.Content
}

// views returns the part of the screen above "Commands:".
func views(t *testing.T, e *Editor) string {
	t.Helper()
	s := screen(t, e)
	i := strings.Index(s, "\n\nCommands:")
	if i < 0 {
		t.Fatalf("screen has no Commands section:\n%s", s)
	}
	return s[:i]
}

// readFile returns a file's content from fsys.
func readFile(t *testing.T, fsys afero.Fs, name string) string {
	t.Helper()
	b, err := afero.ReadFile(fsys, name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// checkGolden compares got with testdata/<name>.golden, or rewrites it
// with UNFOLD_UPDATE_GOLDEN=1.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	golden.Check(t, name+".golden", got)
}

func TestConformance(t *testing.T) {
	const trivial = `search "x" *.txt`
	t.Run("memory", func(t *testing.T) {
		envtest.Run(t, func(t *testing.T) envs.Env {
			e, err := NewFs(afero.NewMemMapFs(), nil)
			if err != nil {
				t.Fatal(err)
			}
			return e
		}, trivial)
	})
	t.Run("root", func(t *testing.T) {
		envtest.Run(t, func(t *testing.T) envs.Env {
			e, err := New(t.TempDir(), session.New())
			if err != nil {
				t.Fatal(err)
			}
			return e
		}, trivial)
	})
}

// TestWalkthrough follows the help-system design's scenario "Adding
// Contributing Guidelines" (turns 1 to 3), then opens a view.
func TestWalkthrough(t *testing.T) {
	e, fsys := newMem(t, map[string]string{"src/main.py": mainPy})
	checkGolden(t, "walkthrough_1_initial", screen(t, e))

	const create = "create CONTRIBUTING.md\n# Contributing Guidelines\n\nPlease follow these steps to contribute:\n1. Fork the repository\n2. Create a feature branch\n3. Submit a pull request"
	if got, want := ok(t, e, create), "Created CONTRIBUTING.md"; got != want {
		t.Errorf("create: got %q, want %q", got, want)
	}
	afterCreate := screen(t, e)
	checkGolden(t, "walkthrough_2_create", afterCreate)

	// Turn 3: the agent reads the file with bash; the editor's screen is
	// unchanged.
	wantFile := "# Contributing Guidelines\n\nPlease follow these steps to contribute:\n1. Fork the repository\n2. Create a feature branch\n3. Submit a pull request\n"
	if got := readFile(t, fsys, "CONTRIBUTING.md"); got != wantFile {
		t.Errorf("CONTRIBUTING.md: got %q, want %q", got, wantFile)
	}
	if got := screen(t, e); got != afterCreate {
		t.Errorf("turn 3 screen: got\n%s\nwant it unchanged:\n%s", got, afterCreate)
	}

	if got, want := ok(t, e, "view src/main.py /^def main/ /^if __name__/"), `Added view [1] src/main.py /^def main/ to /^if __name__/`; got != want {
		t.Errorf("view: got %q, want %q", got, want)
	}
	checkGolden(t, "walkthrough_3_view", screen(t, e))
}

// mainPy has main() from line 45 to line 78, as the design's screens show.
var mainPy = func() string {
	var b strings.Builder
	b.WriteString("import argparse\nimport sys\n")
	for i := 3; i <= 44; i++ {
		fmt.Fprintf(&b, "# setting %d\n", i)
	}
	b.WriteString("def main():\n    parser = argparse.ArgumentParser()\n")
	for i := 47; i <= 76; i++ {
		fmt.Fprintf(&b, "    parser.add_argument('--opt%d')\n", i)
	}
	b.WriteString("    return parser.parse_args()\n\nif __name__ == '__main__':\n    main()\n")
	return b.String()
}()

// mainC has main() at lines 45-48 and main(argc, argv) at lines 120-124, as
// in the editor design's example workflow.
var mainC = func() string {
	var b strings.Builder
	for i := 1; i <= 130; i++ {
		switch i {
		case 45:
			b.WriteString("int main() {\n    printf(\"Hello\\n\");\n    return 0;\n}\n")
			i += 3
		case 120:
			b.WriteString("int main(int argc, char** argv) {\n    setup();\n    run();\n    return 0;\n}\n")
			i += 4
		default:
			fmt.Fprintf(&b, "// line %d\n", i)
		}
	}
	return b.String()
}()

// TestMainCWorkflow follows the editor design's example workflow.
func TestMainCWorkflow(t *testing.T) {
	e, fsys := newMem(t, map[string]string{"src/main.c": mainC})
	steps := []struct {
		name     string
		command  string // "" only takes a screen
		response string
		external func() // a change made outside the editor, before the command
	}{
		{name: "1_view", command: `view src/main.c /^int main\(/ /^}$/`, response: `Added view [1] src/main.c /^int main\(/ to /^}$/`},
		{name: "2_next_match", command: "next_match 1", response: "Showing match 2/2"},
		{name: "3_edit", command: "edit src/main.c 121-121\n    initialize();", response: "Edited src/main.c lines 121-121"},
		{name: "4_broken", external: func() {
			s := strings.ReplaceAll(readFile(t, fsys, "src/main.c"), "int main", "int start")
			if err := afero.WriteFile(fsys, "src/main.c", []byte(s), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "5_removed"},
	}
	for _, s := range steps {
		if s.external != nil {
			s.external()
		}
		if s.command != "" {
			if got := ok(t, e, s.command); got != s.response {
				t.Errorf("%s: got response %q, want %q", s.name, got, s.response)
			}
		}
		checkGolden(t, "main_c_"+s.name, views(t, e))
	}
	if got := readFile(t, fsys, "src/main.c"); !strings.Contains(got, "int start(int argc, char** argv) {\n    initialize();\n    run();\n") {
		t.Errorf("src/main.c does not hold the edit:\n%s", got)
	}
}

func TestSummary(t *testing.T) {
	e, _ := newMem(t, map[string]string{"a.txt": "one\ntwo\n"})
	want := []string{"Editor (no views)", "Editor (1 view: a.txt)", "Editor (2 views)"}
	for i, w := range want {
		if i > 0 {
			ok(t, e, "view a.txt /one/ /two/")
		}
		if got := e.Summary(); got != w {
			t.Errorf("after %d views: got %q, want %q", i, got, w)
		}
	}
}

func TestNewErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		new  func() (*Editor, error)
		want string
	}{
		{"missing dir", func() (*Editor, error) { return New(filepath.Join(t.TempDir(), "nope"), nil) }, "no such file or directory"},
		{"file as root", func() (*Editor, error) { return New(file, nil) }, "is not a directory"},
		{"nil fs", func() (*Editor, error) { return NewFs(nil, nil) }, "editor: new: nil filesystem"},
		{"max file size", func() (*Editor, error) { return NewFs(afero.NewMemMapFs(), nil, WithMaxFileSize(0)) }, "editor: new: max file size 0: want a positive number of bytes"},
		{"max matches", func() (*Editor, error) { return NewFs(afero.NewMemMapFs(), nil, WithMaxMatches(-1)) }, "editor: new: max matches -1: want a positive number"},
		{"max files", func() (*Editor, error) { return NewFs(afero.NewMemMapFs(), nil, WithMaxFiles(0)) }, "editor: new: max files 0: want a positive number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := tt.new()
			if err == nil {
				_ = e.Close()
				t.Fatalf("got no error, want one containing %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got error %q, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestUsageInSession(t *testing.T) {
	sess := session.New()
	e, err := NewFs(afero.NewMemMapFs(), sess)
	if err != nil {
		t.Fatal(err)
	}
	ok(t, e, "create a.txt\nx")
	if got := envs.GetUsage(sess).Used(Name, "create"); !got {
		t.Errorf("usage of create in the session: got %v, want true", got)
	}
	if e.Session() != sess {
		t.Errorf("Session(): got %p, want %p", e.Session(), sess)
	}
}
