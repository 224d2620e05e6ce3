package gateway

import (
	"context"
	"io"
	"slices"
	"strings"

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

// ReadSavedWith returns, for [WithReadSaved], the ways a session whose
// environments are envs reads a saved result: with the editor ("editor"),
// grep ("bash"), python ("python", when neither of those is there), and,
// with resources, as an MCP resource. A session with none of them is told
// to ask the tool for less.
func ReadSavedWith(envs []string, resources bool) func(name string) string {
	var ways []string
	if slices.Contains(envs, "editor") {
		ways = append(ways, "view it with the editor")
	}
	if slices.Contains(envs, "bash") {
		ways = append(ways, "search it with grep")
	} else if len(ways) == 0 && slices.Contains(envs, "python") {
		ways = append(ways, "read it with python")
	}
	return func(name string) string {
		all := ways
		if resources {
			all = append(slices.Clip(all), "read it as the resource unfold://"+name)
		}
		switch len(all) {
		case 0:
			return "no tool of this session reads it; call the tool again asking for less (a range of lines, a head or a tail, a narrower query)"
		case 1:
			return all[0]
		}
		return strings.Join(all[:len(all)-1], ", ") + ", or " + all[len(all)-1]
	}
}
