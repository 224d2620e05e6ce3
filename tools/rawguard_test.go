package tools_test

import (
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/tools"
)

func rawTool(t testing.TB, schema string) *tools.Tool {
	t.Helper()
	tl, err := tools.NewRaw("up", "A proxied tool.", json.RawMessage(schema), nil,
		func(context.Context, tools.Context, json.RawMessage) (tools.Result, error) {
			return tools.Result{Message: "ran", Success: true}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestRawGuardFlood calls a raw tool, as the gateway makes from an MCP
// server's schema, with 200,000 wrong items: the guard counts the
// problems in constant memory, as for a typed tool, where jsonschema keeps
// every one of them (about 600 bytes each).
func TestRawGuardFlood(t *testing.T) {
	tl := rawTool(t, `{"type":"object","properties":{"a":{"type":"array","items":{"type":"string"}}},"required":["a"]}`)
	const n = 200_000
	args := json.RawMessage(`{"a":[` + strings.Repeat("1,", n-1) + `1]}`)
	var res tools.Result
	var err error
	parse := allocated(func() {
		var v any
		_ = json.Unmarshal(args, &v)
	})
	total := allocated(func() { res, err = tl.Call(context.Background(), tools.Context{}, args) })
	if err != nil || res.Success {
		t.Fatalf("got %+v, %v; want a failed result", res, err)
	}
	want := "Invalid arguments: a/0: expected string, but got number; a/1: expected string, but got number; a/2: expected string, but got number; and 199997 more"
	if res.Message != want {
		t.Errorf("got %q, want %q", res.Message, want)
	}
	// Decoding the arguments takes what it takes (about twice here, once
	// for the guard's numbers and once to check); the check adds little.
	if limit := 4*parse + 16<<20; total > limit {
		t.Errorf("the call allocated %d MB, decoding alone %d MB; want at most %d MB", total>>20, parse>>20, limit>>20)
	}
	t.Logf("decoding %d MB, the call %d MB", parse>>20, total>>20)
}

// TestRawGuardNumbers gives a raw tool numbers that jsonschema cannot
// parse safely: each is refused as out of range, wherever it is and
// whatever the schema says of it, and not by a nil pointer.
func TestRawGuardNumbers(t *testing.T) {
	tests := []struct{ schema, args, want string }{
		{`{"type":"object","properties":{"n":{"type":"number","maximum":5}}}`, `{"n":1e99999999}`, "Invalid arguments: n: number 1e99999999 is out of range for any number type"},
		{`{"type":"object","properties":{"n":{"anyOf":[{"type":"number","maximum":5}]}}}`, `{"n":1e99999999}`, "Invalid arguments: n: number 1e99999999 is out of range for any number type"},
		{`{"type":"object"}`, `{"deep":[{"x":-1E-999999999}]}`, "Invalid arguments: deep/0/x: number -1E-999999999 is out of range for any number type"},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			res, err := rawTool(t, tt.schema).Call(context.Background(), tools.Context{}, json.RawMessage(tt.args))
			if err != nil || res.Message != tt.want {
				t.Errorf("got %q, %v; want %q", res.Message, err, tt.want)
			}
		})
	}
}

// TestRawGuardKeepsValid calls raw tools whose schemas use keywords the
// guard does not read, or reads only in part, with valid arguments: the
// guard refuses none of them, and jsonschema still refuses what is wrong.
func TestRawGuardKeepsValid(t *testing.T) {
	tests := []struct{ schema, args, want string }{
		{`{"type":"object","properties":{"t":{"type":"array","prefixItems":[{"type":"integer"}],"items":{"type":"string"}}}}`, `{"t":[1,"a"]}`, "ran"},
		{`{"type":"object","properties":{"m":{"type":"object","patternProperties":{"^x":{"type":"integer"}},"additionalProperties":false}}}`, `{"m":{"x1":1}}`, "ran"},
		{`{"type":"object","$defs":{"s":{"type":"string"}},"properties":{"r":{"$ref":"#/$defs/s"}}}`, `{"r":"a"}`, "ran"},
		{`{"type":"object","properties":{"u":{"type":["string","null"]}}}`, `{"u":null}`, "ran"},
		{`{"type":"object","properties":{"i":{"type":"integer","minimum":1}},"additionalProperties":{"type":"boolean"}}`, `{"i":1.0,"b":true}`, "ran"},
		{`{"type":"object","properties":{"e":{"type":"string","enum":["a","b"]}},"additionalProperties":false}`, `{"e":"c"}`, `Invalid arguments: e: value must be one of "a", "b"`},
		{`{"type":"object","properties":{"r":{"$ref":"#/$defs/s"}},"$defs":{"s":{"type":"string"}}}`, `{"r":1}`, "Invalid arguments: r: expected string, but got number"},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			res, err := rawTool(t, tt.schema).Call(context.Background(), tools.Context{}, json.RawMessage(tt.args))
			if err != nil || res.Message != tt.want {
				t.Errorf("got %q, %v; want %q", res.Message, err, tt.want)
			}
		})
	}
}
