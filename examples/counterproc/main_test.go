package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/orchestrator"
)

var update = flag.Bool("update", false, "rewrite testdata/output.golden")

func needPython(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed; the counter environment is a Python program")
	}
}

// TestRun runs the example and compares its output with the golden file.
func TestRun(t *testing.T) {
	needPython(t)
	var out bytes.Buffer
	if err := run(context.Background(), &out, "project"); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "output.golden")
	if *update {
		if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != string(want) {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestInterruptKeepsState interrupts a running Python command through the
// orchestrator: the process answers the interrupt and keeps its counter.
func TestInterruptKeepsState(t *testing.T) {
	needPython(t)
	o, err := orchestrator.New()
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if err := o.LoadSpecs("project"); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	steps := []struct {
		name    string
		cmd     string
		timeout time.Duration
		want    envs.Response
	}{
		{"add", "add 3", 0, envs.Response{Output: "Counter: 3", Success: true}},
		{"interrupted wait", "wait 60", 300 * time.Millisecond, envs.Response{Output: "Interrupted while waiting; the counter is still 3\n[the command timed out; the process answered the interrupt]", Success: false}},
		{"state kept", "add 1", 0, envs.Response{Output: "Counter: 4", Success: true}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			c := ctx
			if st.timeout > 0 {
				var cancel context.CancelFunc
				c, cancel = context.WithTimeout(ctx, st.timeout)
				defer cancel()
			}
			got := o.Execute(c, "counter", st.cmd).Response
			if got != st.want {
				t.Errorf("got %+v, want %+v", got, st.want)
			}
		})
	}
	if err := o.Close(); err != nil {
		t.Errorf("got close error %v, want nil", err)
	}
}

// TestRunFromElsewhere runs the example from another directory, as
// `go run ./examples/counterproc` from the repository's root does: it
// finds its project next to its source. A directory without the counter
// is refused, saying what to give.
func TestRunFromElsewhere(t *testing.T) {
	needPython(t)
	want, err := os.ReadFile(filepath.Join("testdata", "output.golden"))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	var out bytes.Buffer
	if err := run(context.Background(), &out, sourceProject()); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != string(want) {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	empty := t.TempDir()
	err = run(context.Background(), io.Discard, empty)
	if wantErr := empty + " declares no counter environment (env/counter.json): give -project DIR"; err == nil || !strings.HasPrefix(err.Error(), wantErr) {
		t.Errorf("got %v, want %q...", err, wantErr)
	}
}
