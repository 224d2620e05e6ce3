package python

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/envs"
)

// TestFloodSaveLimit: a cell that floods past the memory limit, seen at a
// soft limit and again: each response names a saved file within the save
// limit, and says that the file leaves out part of the output rather
// than that it holds all of it; the namespace survives the interrupt.
func TestFloodSaveLimit(t *testing.T) {
	const saveLimit = 256 << 10
	saves := t.TempDir()
	r := newREPL(t, WithOutputLimit(64<<10), WithSaveLimit(saveLimit), WithSave(func(out io.Reader) (string, error) {
		return envs.SaveIn(saves, "out-*.txt", out)
	}))
	execute(t, r, "x = 'kept'")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	flood := "import sys\nwhile True:\n    sys.stdout.write('y\\n' * 4096)"
	for i, code := range []string{flood, "", envs.Interrupt} {
		resp, err := r.ExecuteLimited(ctx, code, envs.Limits{Until: time.Now().Add(time.Second)})
		if err != nil {
			t.Fatal(err)
		}
		if resp.Running != (i < 2) {
			t.Errorf("%q: got Running %v, want %v", code, resp.Running, i < 2)
		}
		if resp.OutputFile == "" {
			if i < 2 {
				t.Errorf("%q: got %q and no saved file, want one", code, resp.Output)
			}
			continue
		}
		fi, err := os.Stat(resp.OutputFile)
		if err != nil {
			t.Fatalf("%q: the saved output: %v", code, err)
		}
		if fi.Size() > saveLimit+200 {
			t.Errorf("%q: the saved output takes %d bytes, want at most the limit of %d and a note", code, fi.Size(), saveLimit)
		}
		if i == 2 {
			continue // what came after the last response may fit
		}
		if !strings.Contains(resp.Output, "of its middle, left out as a saved output holds at most 256.0 KB (the file marks the place)") || strings.Contains(resp.Output, "the whole output") {
			t.Errorf("%q: got %q, want a note saying that the saved file leaves out part of the output", code, resp.Output)
		}
	}
	if resp := execute(t, r, "print(x)"); resp.Output != "kept" {
		t.Errorf("after the interrupt: got %+v, want the variable kept", resp)
	}
}
