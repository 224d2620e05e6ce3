package tools_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/tools"
)

type benchIn struct {
	Path  string `json:"path"`
	Line  int    `json:"line"`
	Count int    `json:"count,omitempty"`
}

func benchTool(b *testing.B) *tools.Tool {
	return tools.MustNew("read", "Read lines.", func(ctx context.Context, tc tools.Context, in benchIn) (int, error) {
		return in.Line + in.Count, nil
	})
}

func BenchmarkCall(b *testing.B) {
	tool := benchTool(b)
	for _, c := range []struct {
		name string
		args json.RawMessage
		ok   bool
	}{
		{"valid", json.RawMessage(`{"path":"main.go","line":10,"count":5}`), true},
		{"invalid", json.RawMessage(`{"path":1,"line":"x","extra":true}`), false},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				res, err := tool.Call(context.Background(), tools.Context{}, c.args)
				if err != nil || res.Success != c.ok {
					b.Fatalf("got %+v, %v", res, err)
				}
			}
		})
	}
}

func BenchmarkNew(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		benchTool(b)
	}
}

// BenchmarkShellCheck measures the policy check of a typical command: a
// parse, the walk, and finding each program on PATH.
func BenchmarkShellCheck(b *testing.B) {
	p := tools.ShellPolicy{Dir: b.TempDir()}
	const command = `go test ./... 2>&1 | tail -5 && git status --short | grep -v '^??' || echo "none: $(date)"`
	for b.Loop() {
		if err := p.Check(command); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkShellRun runs `true` through the shell tool, with writes
// confined by Landlock (the tool starts itself again to confine the shell)
// and without, side by side.
func BenchmarkShellRun(b *testing.B) {
	args := json.RawMessage(`{"command":"true"}`)
	for _, c := range []struct {
		name       string
		unconfined bool
	}{{"unconfined", true}, {"confined", false}} {
		b.Run(c.name, func(b *testing.B) {
			sh, err := tools.NewShell(tools.ShellPolicy{Dir: b.TempDir(), Unconfined: c.unconfined})
			if err != nil {
				b.Fatal(err)
			}
			if !c.unconfined && !strings.Contains(sh.Description(), "Landlock") {
				b.Skip("the kernel offers no Landlock")
			}
			for b.Loop() {
				res, err := sh.Call(context.Background(), tools.Context{}, args)
				if err != nil || !res.Success {
					b.Fatal(err, res.Message)
				}
			}
		})
	}
}
