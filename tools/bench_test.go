package tools_test

import (
	"context"
	"encoding/json"
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
