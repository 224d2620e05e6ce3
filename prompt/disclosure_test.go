package prompt_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/spf13/afero"

	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/tools"
	"github.com/unfold-dev/unfold/visibility"
)

// twoParts is a disclosure of the open fixture (part 1) and a second
// prompt with a summarized, tool-bearing "shell" and a summarized content
// section "notes" (part 2).
func twoParts(t *testing.T, opts ...prompt.DisclosureOption) (*prompt.Disclosure, *session.Session, afero.Fs) {
	t.Helper()
	p, sess := openFixture(t)
	second := prompt.MustNew("test", "screens",
		summarized("shell", "Shell", "The shell is ready.", "A shell.", []*tools.Tool{echoTool("shell")}),
		summarized("notes", "Notes", "Remember the milk.", "Some notes.", nil),
	).MustBind()
	fs := afero.NewMemMapFs()
	d, err := prompt.NewDisclosure(sess, fs, []prompt.Part{{Prompt: p}, {Prompt: second}}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Render(); err != nil {
		t.Fatal(err)
	}
	return d, sess, fs
}

func names(ts []*tools.Tool) string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name())
	}
	return strings.Join(out, ",")
}

// open calls the disclosure's open_sections as a model would.
func open(t *testing.T, d *prompt.Disclosure, keys ...string) (tools.Result, error) {
	t.Helper()
	var ot *tools.Tool
	for _, x := range d.Tools() {
		if x.Name() == prompt.OpenSectionsName {
			ot = x
		}
	}
	if ot == nil {
		t.Fatal("open_sections not offered")
	}
	args, _ := json.Marshal(prompt.OpenSectionsInput{SectionKeys: keys, Reason: "the task needs it"})
	return d.Call(context.Background(), ot, args)
}

func TestDisclosureTools(t *testing.T) {
	d, _, _ := twoParts(t)
	// One open_sections for both parts, last.
	if got, want := names(d.Tools()), "open_sections"; got != want {
		t.Errorf("got tools %s, want %s", got, want)
	}
	if d.Rendered(0) == nil || d.Rendered(1) == nil {
		t.Fatal("a part has no render")
	}
}

func TestDisclosureOpenContentAcrossParts(t *testing.T) {
	d, sess, fs := twoParts(t)
	res, err := open(t, d, "notes", "guide")
	if err != nil || !res.Success {
		t.Fatalf("got %+v, %v", res, err)
	}
	if want := "Section content written to: context/notes.md, context/guide.md"; res.Message != want {
		t.Errorf("got message %q, want %q", res.Message, want)
	}
	op, ok := res.Value.(*prompt.Opened)
	if !ok || op.Expanded() || !slices.Equal(op.Files, []string{"context/notes.md", "context/guide.md"}) {
		t.Errorf("got value %#v, want the two files written", res.Value)
	}
	data, err := afero.ReadFile(fs, "context/notes.md")
	if err != nil || string(data) != "## Notes (notes)\n\nRemember the milk.\n" {
		t.Errorf("context/notes.md: got %q, %v", data, err)
	}
	if len(visibility.Get(sess).Paths()) != 0 {
		t.Errorf("content-only opening set overrides %v, want none", visibility.Get(sess).Paths())
	}
}

func TestDisclosureOpenToolsAcrossParts(t *testing.T) {
	d, sess, fs := twoParts(t)
	// A mixed request across parts: the content-only guide opens in place
	// with the shell, as docs/design.md opens mixed requests.
	res, err := open(t, d, "guide", "shell")
	if err != nil || !res.Success {
		t.Fatalf("got %+v, %v", res, err)
	}
	if want := "Opened sections: guide, shell. New tools: shell."; res.Message != want {
		t.Errorf("got message %q, want %q", res.Message, want)
	}
	op := res.Value.(*prompt.Opened)
	if !op.Expanded() || !slices.Equal(op.NewTools, []string{"shell"}) || op.Reason != "the task needs it" {
		t.Errorf("got %+v", op)
	}
	if files := files(t, fs); len(files) != 0 {
		t.Errorf("an opening in place wrote %v", files)
	}
	if got, want := visibility.Get(sess).Paths(), []string{"guide", "shell"}; !slices.Equal(got, want) {
		t.Errorf("overrides: got %v, want %v", got, want)
	}
	if !strings.Contains(d.Rendered(1).Text(), "The shell is ready.") || !strings.Contains(d.Rendered(0).Text(), "The whole guide.") {
		t.Errorf("parts not rendered again:\n%s\n---\n%s", d.Rendered(0).Text(), d.Rendered(1).Text())
	}
	if got, want := names(d.Tools()), "shell,open_sections"; got != want {
		t.Errorf("tools: got %s, want %s", got, want)
	}
	res, err = open(t, d, "shell")
	wantFailure(t, res, err, "Section 'shell' is already expanded.")
}

func TestDisclosureFailuresChangeNothing(t *testing.T) {
	tests := []struct {
		keys []string
		want string
	}{
		{[]string{}, "At least one section key must be provided."},
		{[]string{"notes", "nope"}, "Section 'nope' does not exist in this prompt."},
		{[]string{"shell", "intro"}, "Section 'intro' is already expanded."},
		{[]string{"guide.old"}, "Section 'guide.old' does not exist in this prompt."},
		{manyKeys(1025), "At most 1024 section keys can be opened at a time; 1025 were given. Open the sections needed now."},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(len(tt.keys), tt.keys[:min(len(tt.keys), 2)]), func(t *testing.T) {
			d, sess, fs := twoParts(t)
			seq := sess.Seq()
			res, err := open(t, d, tt.keys...)
			wantFailure(t, res, err, tt.want)
			onlyFailureSince(t, sess, seq, tt.want)
			if len(files(t, fs)) != 0 {
				t.Errorf("a failed opening wrote %v", files(t, fs))
			}
		})
	}
}

func TestDisclosureContentAnswers(t *testing.T) {
	d, _, _ := twoParts(t, prompt.WithContentAnswers())
	res, err := open(t, d, "kit.run")
	if err != nil || !res.Success {
		t.Fatalf("got %+v, %v", res, err)
	}
	want := "Opened sections: kit, kit.run. New tools: run.\n\n## Run (kit.run)\n\nRun it."
	if res.Message != want {
		t.Errorf("got\n%s\nwant\n%s", res.Message, want)
	}
}

// TestDisclosureAnyToolExpands: a tool of the caller's that asks for
// sections to open goes through the same path.
func TestDisclosureAnyToolExpands(t *testing.T) {
	d, _, _ := twoParts(t)
	opener := tools.MustNew("need_shell", "Asks for the shell.", func(context.Context, tools.Context, struct{}) (string, error) {
		return "", tools.Halt(&prompt.VisibilityExpansionError{Keys: []string{"shell"}, Overrides: prompt.Overrides{"shell": visibility.Full}})
	})
	res, err := d.Call(context.Background(), opener, nil)
	if err != nil || !res.Success || res.Message != "Opened sections: shell. New tools: shell." {
		t.Errorf("got %+v, %v", res, err)
	}
}

func TestDisclosureOpenWithoutModel(t *testing.T) {
	d, _, _ := twoParts(t)
	op, err := d.Open(context.Background(), []string{"verify"}, "")
	if err != nil || !slices.Equal(op.Paths, []string{"verify"}) {
		t.Errorf("got %+v, %v", op, err)
	}
	if _, err := d.Open(context.Background(), []string{"nope"}, ""); err == nil || !strings.Contains(err.Error(), "Section 'nope' does not exist") {
		t.Errorf("got %v, want the unknown-section failure", err)
	}
}

func TestDisclosureErrors(t *testing.T) {
	p, sess := openFixture(t)
	if _, err := prompt.NewDisclosure(sess, nil, nil); err == nil {
		t.Error("no parts: got nil error")
	}
	_, err := prompt.NewDisclosure(sess, nil, []prompt.Part{{Prompt: p}, {Prompt: p}})
	if err == nil || !strings.Contains(err.Error(), `parts 1 and 2 both have a section "intro"`) {
		t.Errorf("same paths in two parts: got %v", err)
	}
	d, err := prompt.NewDisclosure(sess, nil, []prompt.Part{{Prompt: p}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Open(context.Background(), []string{"guide"}, ""); err == nil || !strings.Contains(err.Error(), "call Render first") {
		t.Errorf("before Render: got %v", err)
	}
	if _, err := d.Expand(errors.New("other")); err == nil {
		t.Error("Expand of another error: got nil error")
	}
}

// TestDisclosureConcurrentOpenings opens sections from many goroutines at
// once, as MCP clients do: every opening applies, none is lost (run with
// -race).
func TestDisclosureConcurrentOpenings(t *testing.T) {
	var secs []*section.Section
	for i := range 16 {
		key := fmt.Sprintf("s%d", i)
		secs = append(secs, summarized(key, key, "Body.", "Summary.", []*tools.Tool{echoTool("t" + key)}))
	}
	p := prompt.MustNew("test", "many", secs...).MustBind()
	sess := session.New()
	d, err := prompt.NewDisclosure(sess, nil, []prompt.Part{{Prompt: p}})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Render(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			if _, err := d.Open(context.Background(), []string{fmt.Sprintf("s%d", i)}, ""); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if got := len(visibility.Get(sess).Paths()); got != 16 {
		t.Errorf("got %d overrides, want 16", got)
	}
	if got := len(d.Tools()); got != 16 {
		t.Errorf("got %d tools, want 16 and no open_sections", got)
	}
}

func TestDisclosureDeferred(t *testing.T) {
	d, _, _ := twoParts(t)
	list := func() string {
		var out []string
		for _, g := range d.Deferred() {
			out = append(out, g.Path+"="+names(g.Tools)+" ("+g.Summary+")")
		}
		return strings.Join(out, "; ")
	}
	// The kit's child carries run: its own section is the group, though
	// only the kit shows (as a summary).
	if got, want := list(), "verify=verify (Verification tools.); kit.run=run (); shell=shell (A shell.)"; got != want {
		t.Errorf("deferred: got %s, want %s", got, want)
	}
	if _, err := open(t, d, "shell"); err != nil {
		t.Fatal(err)
	}
	if got, want := list(), "verify=verify (Verification tools.); kit.run=run ()"; got != want {
		t.Errorf("after opening shell: got %s, want %s", got, want)
	}
}

// TestDisclosureExpansionByKeys checks a tool that asks for sections by key
// alone, with an answer of its own: the disclosure finds the overrides
// against the latest render, and the answer carries the tool's text.
func TestDisclosureExpansionByKeys(t *testing.T) {
	d, sess, _ := twoParts(t)
	search := tools.MustNew("search", "Find and open.", func(context.Context, tools.Context, struct{}) (struct{}, error) {
		return struct{}{}, tools.Halt(&prompt.VisibilityExpansionError{Keys: []string{"shell"}, Reason: "search", Answer: "Found: shell."})
	})
	res, err := d.Call(t.Context(), search, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "Opened sections: shell. New tools: shell.\n\nFound: shell."; res.Message != want {
		t.Errorf("got %q, want %q", res.Message, want)
	}
	if m, ok := visibility.Get(sess).Mode("shell"); !ok || m != visibility.Full {
		t.Errorf("got shell override %v %v, want FULL", m, ok)
	}
	// Shown in full already: nothing to open, the answer alone.
	res, err = d.Call(t.Context(), search, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Message != "Found: shell." {
		t.Errorf("got %q, want the answer alone", res.Message)
	}
}

// TestDisclosureReplace swaps a part's prompt for one with another tool
// under the same opened section: the opening stays, the new tool is offered.
func TestDisclosureReplace(t *testing.T) {
	d, _, _ := twoParts(t)
	if _, err := open(t, d, "shell"); err != nil {
		t.Fatal(err)
	}
	next := prompt.MustNew("test", "screens",
		summarized("shell", "Shell", "The shell is ready.", "A shell.", []*tools.Tool{echoTool("shell2")}),
	).MustBind()
	if err := d.Replace(1, next); err != nil {
		t.Fatal(err)
	}
	if got := names(d.Tools()); !strings.Contains(got, "shell2") || strings.Contains(got, "shell,") {
		t.Errorf("got tools %s, want shell2 offered in place of shell", got)
	}
	clash := prompt.MustNew("test", "screens", summarized("guide", "Guide", "x", "y", nil)).MustBind()
	if err := d.Replace(1, clash); err == nil || !strings.Contains(err.Error(), `already has a section "guide"`) {
		t.Errorf("got %v, want an error naming the clashing section", err)
	}
	if got := names(d.Tools()); !strings.Contains(got, "shell2") {
		t.Errorf("got tools %s after a failed replace, want them unchanged", got)
	}
}

// TestDisclosureAddRemove adds a part while the session goes on and takes
// it away again: an opening made meanwhile stays in the session, so the
// part added back shows its section open; a part that clashes, or
// removing the only part, changes nothing.
func TestDisclosureAddRemove(t *testing.T) {
	p, sess := openFixture(t)
	d, err := prompt.NewDisclosure(sess, afero.NewMemMapFs(), []prompt.Part{{Prompt: p}})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Render(); err != nil {
		t.Fatal(err)
	}
	screens := prompt.MustNew("test", "screens",
		summarized("shell", "Shell", "The shell is ready.", "A shell.", []*tools.Tool{echoTool("shell")}),
	).MustBind()
	if err := d.Add(prompt.Part{Prompt: screens}); err != nil {
		t.Fatal(err)
	}
	if r := d.Rendered(1); r == nil || !strings.Contains(r.Text(), "A shell.") {
		t.Fatalf("added: got render %v, want the shell summarized", r)
	}
	if _, err := open(t, d, "shell"); err != nil {
		t.Fatal(err)
	}
	if got, want := names(d.Tools()), "shell,open_sections"; got != want {
		t.Errorf("opened: got tools %s, want %s", got, want)
	}
	clash := prompt.MustNew("test", "more", summarized("guide", "Guide", "x", "y", nil)).MustBind()
	if err := d.Add(prompt.Part{Prompt: clash}); err == nil || !strings.Contains(err.Error(), `already has a section "guide"`) {
		t.Errorf("a clashing part: got %v, want an error naming the section", err)
	}
	if err := d.Remove(1); err != nil {
		t.Fatal(err)
	}
	if got, want := names(d.Tools()), "open_sections"; got != want {
		t.Errorf("removed: got tools %s, want %s", got, want)
	}
	if strings.Contains(d.Rendered(0).Text(), "shell") {
		t.Errorf("removed: got %q, want no shell", d.Rendered(0).Text())
	}
	if err := d.Remove(0); err == nil || !strings.Contains(err.Error(), "only part") {
		t.Errorf("the only part: got %v, want an error", err)
	}
	if err := d.Remove(3); err == nil {
		t.Error("no part 3: got nil, want an error")
	}
	if err := d.Add(prompt.Part{Prompt: screens}); err != nil {
		t.Fatal(err)
	}
	if r := d.Rendered(1); !strings.Contains(r.Text(), "The shell is ready.") {
		t.Errorf("added back: got %q, want the shell open as it was", r.Text())
	}
}

// manyKeys returns n different keys of no section.
func manyKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("nope-%d", i)
	}
	return keys
}
