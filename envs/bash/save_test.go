package bash_test

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/envs/bash"
)

// TestFloodSaveLimit: a command that floods past the memory limit, seen
// at a soft limit, again, and interrupted: each response names a saved
// file within the save limit, and says that the file leaves out part of
// the output rather than that it holds all of it.
func TestFloodSaveLimit(t *testing.T) {
	const saveLimit = 256 << 10
	saves := t.TempDir()
	s := newShell(t, bash.WithOutputLimit(64<<10), bash.WithSaveLimit(saveLimit), bash.WithSave(func(out io.Reader) (string, error) {
		return envs.SaveIn(saves, "out-*.txt", out)
	}))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i, command := range []string{"yes", "", envs.Interrupt} {
		resp, err := s.ExecuteLimited(ctx, command, envs.Limits{Until: time.Now().Add(time.Second)})
		if err != nil {
			t.Fatal(err)
		}
		if resp.Running != (i < 2) {
			t.Errorf("%q: got Running %v, want %v", command, resp.Running, i < 2)
		}
		fi, err := os.Stat(resp.OutputFile)
		if err != nil {
			t.Fatalf("%q: the saved output: %v (output %q)", command, err, resp.Output)
		}
		if fi.Size() > saveLimit+200 {
			t.Errorf("%q: the saved output takes %d bytes, want at most the limit of %d and a note", command, fi.Size(), saveLimit)
		}
		if i == 2 {
			// Ctrl-C stops the flood at once: what came after the last
			// response may fit.
			continue
		}
		if !strings.Contains(resp.Output, "of its middle, left out as a saved output holds at most 256.0 KB (the file marks the place)") || strings.Contains(resp.Output, "the whole output") {
			t.Errorf("%q: got %q, want a note saying that the saved file leaves out part of the output", command, resp.Output)
		}
	}
	if resp := run(t, s, "echo next"); resp.Output != "next" || !resp.Success {
		t.Errorf("the next command: got %+v, want its output", resp)
	}
}
