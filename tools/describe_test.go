package tools_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/tools"
)

type describedInput struct {
	N int    `json:"n" description:"How many (default 3)."`
	S string `json:"s,omitempty" description:"A word."`
}

// TestWithInputDescriptions: the copy describes the fields it is given
// in their new words and runs as the original; the original, and other
// tools of the same input type, keep theirs.
func TestWithInputDescriptions(t *testing.T) {
	newTool := func() *tools.Tool {
		return tools.MustNew("count", "Counts.", func(_ context.Context, _ tools.Context, in describedInput) (int, error) { return in.N, nil })
	}
	orig := newTool()
	before := string(orig.InputSchema())
	c, err := orig.WithInputDescriptions(map[string]string{"n": "How many (default 7)."})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(before, "(default 3)", "(default 7)", 1)
	if got := string(c.InputSchema()); got != want {
		t.Errorf("the copy's schema:\ngot  %s\nwant %s", got, want)
	}
	if got := string(orig.InputSchema()); got != before {
		t.Errorf("the original's schema changed: %s", got)
	}
	if got := string(newTool().InputSchema()); got != before {
		t.Errorf("another tool's schema changed: %s", got)
	}
	other, err := newTool().WithInputDescriptions(map[string]string{"s": "Another word."})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(other.InputSchema()); !strings.Contains(got, "(default 3)") || !strings.Contains(got, "Another word.") {
		t.Errorf("another copy of the same type: got %s, want n as at first", got)
	}
	res, err := c.Call(t.Context(), tools.Context{}, json.RawMessage(`{"n":5}`))
	if err != nil || !res.Success || res.Message != "5" {
		t.Errorf("the copy's call: got %+v, %v; want 5", res, err)
	}
	if res, _ := c.Call(t.Context(), tools.Context{}, json.RawMessage(`{"s":"x"}`)); res.Success {
		t.Errorf("a call without the required n: got %+v, want a failure", res)
	}
	if _, err := orig.WithInputDescriptions(map[string]string{"m": "x"}); err == nil || !strings.Contains(err.Error(), `no field "m"`) {
		t.Errorf("an unknown field: got %v, want an error naming it", err)
	}
	raw, err := tools.NewRaw("raw", "Raw.", json.RawMessage(`{"type":"object"}`), nil, func(context.Context, tools.Context, json.RawMessage) (tools.Result, error) {
		return tools.Result{Success: true}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.WithInputDescriptions(map[string]string{"n": "x"}); err == nil {
		t.Error("a raw tool: got no error, want one")
	}
}
