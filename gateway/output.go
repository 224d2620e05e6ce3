package gateway

import (
	"context"
	"io"

	"github.com/spf13/afero"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/rootfs"
)

// OutputDir is where, in the file system a call gets (tools.Context.FS,
// the project's directory), the whole result of a call cut to the budget
// is saved: where environments save their cut output.
const OutputDir = "context/output"

// fitResult cuts text, the result of the tool called name, to budget
// tokens as an environment's output is cut ([envs.Limits.Fit]): the head
// and the tail are kept, and a note between them names the file under
// OutputDir of fsys that holds the whole (a temporary file when fsys is
// nil); the oldest files saved there go past [envs.DefaultSaveTotal]. ok is false when text fits, or when budget is negative (no
// bound); 0 means [envs.DefaultBudget].
func fitResult(ctx context.Context, text string, budget int, name string, fsys afero.Fs) (cut string, ok bool) {
	if budget < 0 {
		return "", false
	}
	if budget == 0 {
		budget = envs.DefaultBudget
	}
	l := envs.Limits{Budget: budget}
	if read, ok := ctx.Value(readSavedKey{}).(func(string) string); ok {
		l.Read = read
	}
	if fsys != nil {
		l.Save = func(r io.Reader) (string, error) {
			return rootfs.SaveNew(fsys, OutputDir, name, r, envs.DefaultSaveTotal)
		}
	}
	resp := l.Fit(envs.Response{Output: text})
	if resp.Output == text {
		return "", false
	}
	return resp.Output, true
}

// readSavedKey carries how to read a saved result in a context.
type readSavedKey struct{}

// WithReadSaved returns a context whose calls, when their result is cut
// to the budget, say how to read the whole with read: given the saved
// file's name under the call's file system ("context/output/..."), it
// returns the words that follow "the whole output is saved in NAME: "
// ("read it as the resource ..."). Without it the note says to view the
// file with the editor or search it with grep, which a session without
// those tools cannot do.
func WithReadSaved(ctx context.Context, read func(name string) string) context.Context {
	return context.WithValue(ctx, readSavedKey{}, read)
}
