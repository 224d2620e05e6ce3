package tools_test

import (
	"context"
	"testing"

	"github.com/unfold-dev/unfold/tools"
)

func TestHints(t *testing.T) {
	plain := tools.MustNew("plain", "Does something.", func(context.Context, tools.Context, struct{}) (string, error) { return "ran", nil })
	if h, ok := plain.Hints(); ok || h != tools.AssumedHints {
		t.Errorf("a tool without hints: got %+v, %v; want the assumed hints and false", h, ok)
	}
	want := tools.Hints{ReadOnly: true, Idempotent: true}
	hinted := plain.WithHints(want)
	if h, ok := hinted.Hints(); !ok || h != want {
		t.Errorf("got %+v, %v; want %+v, true", h, ok, want)
	}
	if _, ok := plain.Hints(); ok {
		t.Error("WithHints changed the tool it was called on")
	}
	res, err := hinted.Call(t.Context(), tools.Context{}, nil)
	if err != nil || res.Message != "ran" || hinted.Name() != "plain" {
		t.Errorf("the copy: got %q, %v, name %q; want it to run as the original", res.Message, err, hinted.Name())
	}

	help, err := tools.NewHelp(func() tools.HelpIndex { return tools.HelpIndex{} })
	if err != nil {
		t.Fatal(err)
	}
	if h, ok := help.Hints(); !ok || !h.ReadOnly || h.OpenWorld {
		t.Errorf("help: got %+v, %v; want read-only and closed", h, ok)
	}
}
