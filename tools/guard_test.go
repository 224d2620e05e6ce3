package tools

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

type guardIn struct {
	Name  string          `json:"name"`
	Count int8            `json:"count"`
	Size  uint16          `json:"size,omitempty"`
	Ratio float64         `json:"ratio,omitempty"`
	Flag  bool            `json:"flag,omitempty"`
	Mode  string          `json:"mode,omitempty" enum:"fast,slow"`
	One   string          `json:"one,omitempty" enum:"only"`
	Keys  []string        `json:"keys,omitempty"`
	Pair  [2]int          `json:"pair,omitempty"`
	Meta  map[string]uint `json:"meta,omitempty"`
	At    time.Time       `json:"at,omitzero"`
	Blob  []byte          `json:"blob,omitempty"`
	Any   any             `json:"any,omitempty"`
	Raw   json.RawMessage `json:"raw,omitempty"`
	Sub   *struct {
		Deep  []map[string]bool `json:"deep"`
		Empty struct{}          `json:"empty,omitempty"`
	} `json:"sub,omitempty"`
}

// FuzzGuard checks that the guard finds exactly the problems jsonschema finds
// and words them the same, so a flood of problems reads like a trickle.
func FuzzGuard(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{"name":"a","count":1}`, `{"name":1,"count":"x","extra":1,"Name":2}`,
		`{"name":"a","count":1.5,"size":-1,"mode":"x","one":"y","keys":[1,"a",null],"pair":[1,2,3]}`,
		`{"name":"a","count":1,"meta":{"a":-1,"b":1.0,"c":"x"},"at":"2024-02-30T00:00:00Z","blob":"%%"}`,
		`{"name":"a","count":1,"sub":{"deep":[{"a":1},[]],"empty":{"x":1},"y":2}}`,
		`{"name":"a","count":1e3,"size":2E+2,"ratio":-0.0,"at":"2024-01-01T23:59:60Z"}`,
		`{"name":"a","count":-129,"size":65536,"pair":[1],"keys":null,"sub":null,"meta":null}`,
		`[]`, `"x"`, `1`, `{"a/b~c":1,"":2}`,
	} {
		f.Add([]byte(seed))
	}
	tool := MustNew("guard", "Guard target.", func(context.Context, Context, guardIn) (string, error) { return "ok", nil })
	compiled, err := tool.compiled()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		_, doc, problem := parseArgs(args)
		if problem != "" {
			return
		}
		var g guard
		g.check(tool.inputSchema, doc)
		if g.hazard {
			return // jsonschema must not see this number
		}
		err := compiled.Validate(doc)
		if (err == nil) != (g.count == 0) {
			t.Fatalf("jsonschema says %v, the guard found %d problems: %q", err, g.count, g.report())
		}
		if err == nil {
			return
		}
		ve, ok := err.(*jsonschema.ValidationError)
		if !ok {
			t.Fatalf("got %T %v from jsonschema, want a *ValidationError", err, err)
		}
		ps := tool.problems(ve, doc)
		if len(ps) != g.count {
			t.Fatalf("guard found %d problems (%q), jsonschema %d (%q)", g.count, g.report(), len(ps), formatProblems(ps, len(ps)))
		}
		if hasEmptyKey(doc) {
			return // jsonschema drops empty property names from its locations
		}
		if got, want := g.report(), formatProblems(ps, len(ps)); got != want {
			t.Fatalf("guard report %q, want jsonschema's %q", got, want)
		}
	})
}

func hasEmptyKey(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if k == "" || hasEmptyKey(e) {
				return true
			}
		}
	case []any:
		for _, e := range v {
			if hasEmptyKey(e) {
				return true
			}
		}
	}
	return false
}
