package prompt_test

import (
	"context"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/tools"
)

// TestMisuseIsAnError: what a program can get wrong when it uses the
// library (a tool looked up that is not offered, a part that does not
// exist, no keys to open, a zero tool) is an error that says so, not a
// panic.
func TestMisuseIsAnError(t *testing.T) {
	ctx := context.Background()
	p := prompt.MustNew("test", "misuse", text("task", "Task", "Do it.")).MustBind()
	r, err := p.Render(session.New(), nil)
	if err != nil {
		t.Fatal(err)
	}
	// Nothing is summarized, so open_sections is not offered.
	open := r.Tool(prompt.OpenSectionsName)
	if open != nil {
		t.Fatalf("open_sections is offered with nothing summarized")
	}
	if _, err := open.Call(ctx, tools.Context{}, []byte(`{"section_keys":["task"]}`)); err == nil || !strings.Contains(err.Error(), "nil tool") {
		t.Errorf("calling the tool Rendered.Tool did not find: got %v, want an error naming a nil tool", err)
	}

	d, err := prompt.NewDisclosure(nil, nil, []prompt.Part{{Prompt: p}})
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Rendered(0); got != nil {
		t.Errorf("Rendered(0) before Render: got %v, want nil", got)
	}
	if err := d.Render(); err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{-1, 1, 5} {
		if got := d.Rendered(i); got != nil {
			t.Errorf("Rendered(%d) of one part: got %v, want nil", i, got)
		}
	}
	if d.Rendered(0) == nil {
		t.Error("Rendered(0): got nil")
	}
	if res, err := d.Call(ctx, nil, []byte(`{}`)); err == nil || res.Success || !strings.Contains(err.Error(), "nil tool") {
		t.Errorf("Disclosure.Call of a nil tool: got %+v, %v; want an error naming a nil tool", res, err)
	}
	for _, keys := range [][]string{nil, {}} {
		_, err := d.Open(ctx, keys, "")
		if want := "prompt: open: At least one section key must be provided."; err == nil || err.Error() != want {
			t.Errorf("Open(%#v): got %v, want %q", keys, err, want)
		}
	}

	_, err = prompt.New("test", "zero", section.New(section.Spec[none]{Key: "a", Title: "A", Tools: []*tools.Tool{{}}}))
	if err == nil || !strings.Contains(err.Error(), "tool 1 has no name or handler") {
		t.Errorf("a zero tool: got %v, want the prompt refused", err)
	}
}
