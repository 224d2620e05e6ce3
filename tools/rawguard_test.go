package tools_test

import (
	"context"
	"encoding/json"
	"math/big"
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
	// for the guard's numbers and once to check, more under -race); the
	// check adds little. Without the guard the call took some 300 MB.
	if limit := 6*parse + 32<<20; total > limit {
		t.Errorf("the call allocated %d MB, decoding alone %d MB; want at most %d MB", total>>20, parse>>20, limit>>20)
	}
	t.Logf("decoding %d MB, the call %d MB", parse>>20, total>>20)
}

// TestRawGuardNumbers gives a raw tool numbers that jsonschema cannot
// parse safely: each is refused as out of range, wherever it is and
// whatever the schema says of it, and not by a nil pointer.
func TestRawGuardNumbers(t *testing.T) {
	tests := []struct{ schema, args, want string }{
		{`{"type":"object","properties":{"n":{"type":"number","maximum":5}}}`, `{"n":1e99999999}`, "Invalid arguments: n: number 1e99999999 is out of range: its exponent is beyond ±1000"},
		{`{"type":"object","properties":{"n":{"anyOf":[{"type":"number","maximum":5}]}}}`, `{"n":1e99999999}`, "Invalid arguments: n: number 1e99999999 is out of range: its exponent is beyond ±1000"},
		{`{"type":"object"}`, `{"deep":[{"x":-1E-999999999}]}`, "Invalid arguments: deep/0/x: number -1E-999999999 is out of range: its exponent is beyond ±1000"},
		{`{"type":"object"}`, `{"x":1e99999999999999999999}`, "Invalid arguments: x: number 1e99999999999999999999 is out of range: its exponent is beyond ±1000"},
		{`{"type":"object","properties":{"n":{"type":"integer"}}}`, `{"n":` + strings.Repeat("7", 10_001) + `}`, "Invalid arguments: n: number 7777777777777777777777777777777777777777 is too long: 10001 characters, more than 10000"},
	}
	for _, tt := range tests {
		t.Run(tt.args[:min(len(tt.args), 40)], func(t *testing.T) {
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

// TestRawGuardNumbersServersHold calls raw tools with numbers a server may
// well hold (Python's int, a decimal library) but no Go number type can:
// long, or with an exponent past float64's. They are not refused, whatever
// the schema says of them; jsonschema checks them.
func TestRawGuardNumbersServersHold(t *testing.T) {
	pi := "3.1415926535897932384626433832795028841971693993751058209749445923078164062862089986280348253421170679"
	pow := new(big.Int).Lsh(big.NewInt(1), 400).String() // 2^400, 121 digits
	tests := []struct{ schema, args, want string }{
		{`{"type":"object"}`, `{"x":` + pi + `}`, "ran"},
		{`{"type":"object","properties":{"x":{"type":"number"}}}`, `{"x":` + pi + `}`, "ran"},
		{`{"type":"object","properties":{"x":{"type":"number","minimum":3,"maximum":4}}}`, `{"x":` + pi + `}`, "ran"},
		{`{"type":"object","properties":{"x":{"type":"integer"}}}`, `{"x":` + pow + `}`, "ran"},
		{`{"type":"object"}`, `{"x":1e-401}`, "ran"},
		{`{"type":"object","properties":{"x":{"type":"number","minimum":0}}}`, `{"x":1e-1000}`, "ran"},
		{`{"type":"object","properties":{"x":{"type":"number","maximum":0}}}`, `{"x":1e-401}`, "Invalid arguments: x: must be <= 0 but found 1e-401"},
		{`{"type":"object","properties":{"x":{"type":"array","items":{"type":"number","maximum":0}}}}`, `{"x":[` + strings.Repeat("1e-401,", 100) + `1e-401]}`, "Invalid arguments: x/0: must be <= 0 but found 1e-401; x/1: must be <= 0 but found 1e-401; x/2: must be <= 0 but found 1e-401; and 98 more"},
	}
	for _, tt := range tests {
		t.Run(tt.args[:min(len(tt.args), 40)], func(t *testing.T) {
			res, err := rawTool(t, tt.schema).Call(context.Background(), tools.Context{}, json.RawMessage(tt.args))
			if err != nil || res.Message != tt.want {
				t.Errorf("got %q, %v; want %q", res.Message, err, tt.want)
			}
		})
	}
}

// TestRawGuardBoundsAsWritten calls raw tools whose schema's minimum or
// maximum a float64 cannot hold (0.1, 0.3, 2^53+1) with more values on the
// bound than the guard's flood limit: jsonschema takes the bound as written
// and so does the guard, which refuses none of them.
func TestRawGuardBoundsAsWritten(t *testing.T) {
	many := func(v string) string { return strings.Repeat(v+",", 150) + v }
	tests := []struct{ schema, args, want string }{
		{`{"type":"object","properties":{"w":{"type":"array","items":{"type":"number","minimum":0.1}}}}`, `{"w":[` + many("0.1") + `]}`, "ran"},
		{`{"type":"object","properties":{"w":{"type":"array","items":{"type":"number","maximum":0.3}}}}`, `{"w":[` + many("0.3") + `]}`, "ran"},
		{`{"type":"object","properties":{"w":{"type":"array","items":{"type":"integer","maximum":9007199254740993}}}}`, `{"w":[` + many("9007199254740993") + `]}`, "ran"},
		{`{"type":"object","properties":{"w":{"type":"array","items":{"type":"integer","minimum":-9007199254740993}}}}`, `{"w":[` + many("-9007199254740993") + `]}`, "ran"},
		// A bound a float64 holds is checked by the guard, flood and all.
		{`{"type":"object","properties":{"w":{"type":"array","items":{"type":"number","minimum":0.5}}}}`, `{"w":[` + many("0.25") + `]}`, "Invalid arguments: w/0: must be >= 0.5 but found 0.25; w/1: must be >= 0.5 but found 0.25; w/2: must be >= 0.5 but found 0.25; and 148 more"},
		// One the guard leaves is still jsonschema's to check.
		{`{"type":"object","properties":{"w":{"type":"number","maximum":0.3}}}`, `{"w":0.31}`, "Invalid arguments: w: must be <= 0.3 but found 0.31"},
	}
	for _, tt := range tests {
		t.Run(tt.schema[55:min(len(tt.schema), 100)], func(t *testing.T) {
			res, err := rawTool(t, tt.schema).Call(context.Background(), tools.Context{}, json.RawMessage(tt.args))
			if err != nil || res.Message != tt.want {
				t.Errorf("got %q, %v; want %q", res.Message, err, tt.want)
			}
		})
	}
}
