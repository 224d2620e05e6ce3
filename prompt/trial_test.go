package prompt_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/spf13/afero"

	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/tokens"
	"github.com/unfold-dev/unfold/tools"
	"github.com/unfold-dev/unfold/visibility"
)

// rendered returns a disclosure of parts for sess, rendered.
func rendered(t *testing.T, sess *session.Session, fs afero.Fs, parts ...prompt.Part) *prompt.Disclosure {
	t.Helper()
	d, err := prompt.NewDisclosure(sess, fs, parts)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Render(); err != nil {
		t.Fatal(err)
	}
	return d
}

// budgetParts is a disclosure of a prompt fitted into 170 tokens, with
// three summarized sections that have tools: wide (about 250 tokens) does
// not fit, left and right (about 65 each) fit one at a time; and a second
// part without a budget.
func budgetParts(t *testing.T, sess *session.Session) *prompt.Disclosure {
	t.Helper()
	p := prompt.MustNew("test", "budget",
		text("task", "Task", "Do it."),
		summarized("wide", "Wide", strings.Repeat("wide text ", 120), "Wide notes.", []*tools.Tool{echoTool("wide_tool")}),
		summarized("left", "Left", strings.Repeat("left ", 55), "Left notes.", []*tools.Tool{echoTool("left_tool")}),
		summarized("right", "Right", strings.Repeat("right ", 55), "Right notes.", []*tools.Tool{echoTool("right_tool")}),
	).MustBind()
	second := prompt.MustNew("test", "screens",
		summarized("shell", "Shell", "The shell is ready.", "A shell.", []*tools.Tool{echoTool("shell")}),
	).MustBind()
	return rendered(t, sess, afero.NewMemMapFs(),
		prompt.Part{Prompt: p, Options: []prompt.RenderOption{prompt.WithBudget(170, tokens.Estimate)}},
		prompt.Part{Prompt: second})
}

// TestDisclosureOpeningOverBudget: an opening that does not fit a part's
// budget fails, by every way of opening, with a message that names the
// sections, their tokens, the budget and what to do, and changes nothing:
// no event, the same renders, the same tools.
func TestDisclosureOpeningOverBudget(t *testing.T) {
	ctx := context.Background()
	// failure is the message of a failed call, nil after a success.
	failure := func(res tools.Result, err error) error {
		if err != nil || res.Success {
			return err
		}
		return errors.New(res.Message)
	}
	call := func(d *prompt.Disclosure, keys ...string) error {
		args, _ := json.Marshal(prompt.OpenSectionsInput{SectionKeys: keys, Reason: "needed"})
		return failure(d.Call(ctx, d.Tools()[len(d.Tools())-1], args))
	}
	tests := []struct {
		name string
		open func(*prompt.Disclosure) error
		want string // the start of the message, up to the tokens
	}{
		{"call", func(d *prompt.Disclosure) error { return call(d, "wide") }, "Section wide ("},
		{"call two", func(d *prompt.Disclosure) error { return call(d, "left", "right") }, "Sections left ("},
		{"open", func(d *prompt.Disclosure) error {
			_, err := d.Open(ctx, []string{"wide"}, "")
			return err
		}, "prompt: expand: Section wide ("},
		{"expand", func(d *prompt.Disclosure) error {
			_, err := d.Expand(&prompt.VisibilityExpansionError{Keys: []string{"wide"}})
			return err
		}, "prompt: expand: Section wide ("},
		{"any tool", func(d *prompt.Disclosure) error {
			opener := tools.MustNew("need_wide", "Asks for wide.", func(context.Context, tools.Context, struct{}) (string, error) {
				return "", tools.Halt(&prompt.VisibilityExpansionError{Keys: []string{"wide"}, Overrides: prompt.Overrides{"wide": visibility.Full}})
			})
			return failure(d.Call(ctx, opener, nil))
		}, "Section wide ("},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sess := session.New()
			d := budgetParts(t, sess)
			seq, r0, r1, offered := sess.Seq(), d.Rendered(0), d.Rendered(1), names(d.Tools())
			err := tt.open(d)
			if err == nil {
				t.Fatal("the opening succeeded")
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, tt.want) || !strings.Contains(msg, " tokens) ") ||
				!strings.Contains(msg, "not fit the token budget of 170 tokens: with ") ||
				!strings.Contains(msg, " open the prompt would take at least ") ||
				!strings.Contains(msg, "Nothing was opened. Open fewer or smaller sections, or go on without") {
				t.Errorf("got %q", msg)
			}
			if n := sess.Seq(); n != seq {
				t.Errorf("the refused opening dispatched %d events: %v", n-seq, sess.Events()[seq:])
			}
			if d.Rendered(0) != r0 || d.Rendered(1) != r1 || names(d.Tools()) != offered {
				t.Error("the refused opening changed the renders or the tools")
			}
			// What fits still opens.
			if op, err := d.Open(ctx, []string{"left"}, ""); err != nil || !slices.Equal(op.Paths, []string{"left"}) {
				t.Errorf("opening left after: got %+v, %v", op, err)
			}
		})
	}
}

// TestOpenErrorCarriesTheBudget: the error of a refused opening is an
// *OpenError with the requested sections' tokens, matching ErrOverBudget
// and the render's *BudgetError.
func TestOpenErrorCarriesTheBudget(t *testing.T) {
	d := budgetParts(t, session.New())
	_, err := d.Open(context.Background(), []string{"left", "right"}, "")
	oe, ok := errors.AsType[*prompt.OpenError](err)
	if !ok || !errors.Is(err, prompt.ErrOverBudget) {
		t.Fatalf("got %v, want an *OpenError over the budget", err)
	}
	be, ok := errors.AsType[*prompt.BudgetError](err)
	if !ok || be.Budget != 170 {
		t.Fatalf("got %v, want the render's *BudgetError", err)
	}
	if len(oe.Sections) != 2 || oe.Sections[0].Path != "left" || oe.Sections[1].Path != "right" {
		t.Fatalf("got sections %+v, want left and right", oe.Sections)
	}
	want := tokens.Estimate.Count(strings.Repeat("left ", 55))
	if got := oe.Sections[0].Tokens; got < want || got > want+20 {
		t.Errorf("got left at %d tokens, want its body's %d and its heading", got, want)
	}
	if !slices.Equal(oe.Keys, []string{"left", "right"}) {
		t.Errorf("got keys %v", oe.Keys)
	}
	if got := oe.Error(); !strings.HasPrefix(got, "Sections left ("+itoa(oe.Sections[0].Tokens)+" tokens), right (") ||
		!strings.Contains(got, "do not fit the token budget of 170 tokens: with them open the prompt would take at least "+itoa(be.Minimum)+" tokens.") ||
		!strings.HasSuffix(got, "or go on without them.") {
		t.Errorf("got %q", got)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestDisclosureOpeningThatFailsToRender: a section whose content fails
// when it opens is refused the same way, with the render's error.
func TestDisclosureOpeningThatFailsToRender(t *testing.T) {
	sess := session.New()
	p := prompt.MustNew("test", "broken",
		text("task", "Task", "Do it."),
		section.New(section.Spec[none]{Key: "live", Title: "Live", Summary: "Live data.",
			Visibility: visibility.Const(visibility.Summary), Tools: []*tools.Tool{echoTool("live_tool")},
			Content: func(none) (string, error) { return "", errors.New("the feed is down") }}),
	).MustBind()
	d := rendered(t, sess, nil, prompt.Part{Prompt: p})
	seq := sess.Seq()
	_, err := d.Open(context.Background(), []string{"live"}, "")
	if _, ok := errors.AsType[*prompt.OpenError](err); !ok || !strings.Contains(err.Error(), "Section live could not be opened: ") ||
		!strings.Contains(err.Error(), "the feed is down") || !strings.HasSuffix(err.Error(), ". Nothing was opened.") {
		t.Errorf("got %v", err)
	}
	if sess.Seq() != seq {
		t.Errorf("the refused opening dispatched %v", sess.Events()[seq:])
	}
}

// refitStands checks that the render Refit left for each of d's parts is
// the one a fresh render of the session gives: Refit keeps the last of its
// trial renders that fitted, which must be the one of what it committed.
func refitStands(t *testing.T, d *prompt.Disclosure, parts int) {
	t.Helper()
	kept := make([]*prompt.Rendered, parts)
	for i := range kept {
		kept[i] = d.Rendered(i)
	}
	if err := d.Render(); err != nil {
		t.Fatalf("render after the refit: %v", err)
	}
	for i, k := range kept {
		r := d.Rendered(i)
		if k == nil || k.Text() != r.Text() || names(k.Tools()) != names(r.Tools()) || !slices.Equal(k.Report(), r.Report()) {
			t.Errorf("part %d: the refit left a render that is not the session's:\n%v\nwant\n%v", i, k, r.Text())
		}
	}
}

// TestDisclosureRefit: sections a session opened that no longer fit the
// budget are closed, the most recently opened first, and only as many as
// needed; when closing them all does not help, nothing is closed.
func TestDisclosureRefit(t *testing.T) {
	sess := session.New()
	if err := visibility.Register(sess); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"right", "left"} { // left opened last
		if err := sess.Dispatch(visibility.SetOverride{Path: p, Mode: visibility.Full}); err != nil {
			t.Fatal(err)
		}
	}
	d, err := prompt.NewDisclosure(sess, nil, []prompt.Part{{Prompt: prompt.MustNew("test", "budget",
		text("task", "Task", "Do it."),
		summarized("left", "Left", strings.Repeat("left ", 55), "Left notes.", nil),
		summarized("right", "Right", strings.Repeat("right ", 55), "Right notes.", nil),
	).MustBind(), Options: []prompt.RenderOption{prompt.WithBudget(130, tokens.Estimate)}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Render(); !errors.Is(err, prompt.ErrOverBudget) {
		t.Fatalf("render: got %v, want the budget's error", err)
	}
	closed, err := d.Refit()
	if err != nil || !slices.Equal(closed, []string{"left"}) {
		t.Fatalf("got %v, %v; want left closed", closed, err)
	}
	if m, _ := visibility.Get(sess).Mode("right"); m != visibility.Full {
		t.Error("right was closed too")
	}
	if r := d.Rendered(0); r == nil || !strings.Contains(r.Text(), "right right") || strings.Contains(r.Text(), "left left") {
		t.Errorf("the render does not show right alone:\n%v", r)
	}
	refitStands(t, d, 1)
	if closed, err := d.Refit(); err != nil || len(closed) != 0 {
		t.Errorf("again: got %v, %v; want nothing to close", closed, err)
	}

	tiny, err := prompt.NewDisclosure(sess, nil, []prompt.Part{{Prompt: prompt.MustNew("test", "tiny",
		text("task", "Task", strings.Repeat("task ", 50)),
		summarized("right", "Right", strings.Repeat("right ", 55), "Right notes.", nil),
	).MustBind(), Options: []prompt.RenderOption{prompt.WithBudget(20, tokens.Estimate)}}})
	if err != nil {
		t.Fatal(err)
	}
	seq := sess.Seq()
	if closed, err := tiny.Refit(); !errors.Is(err, prompt.ErrOverBudget) || closed != nil {
		t.Errorf("got %v, %v; want the budget's error", closed, err)
	}
	if sess.Seq() != seq {
		t.Errorf("a refit that could not fit dispatched %v", sess.Events()[seq:])
	}
}

// TestDisclosureOpeningOverBudgetFolded: a folded section whose opening
// does not fit does not open. Expand puts the parts and renders back as
// they were; open_sections has found its children (it checks keys below a
// folded section against them), which shows nothing more.
func TestDisclosureOpeningOverBudgetFolded(t *testing.T) {
	for _, viaExpand := range []bool{true, false} {
		t.Run(map[bool]string{true: "expand", false: "open_sections"}[viaExpand], func(t *testing.T) {
			sess := session.New()
			var calls atomic.Int32
			big := folded("big", "A big one.", &calls, func() []*section.Section {
				return []*section.Section{section.New(section.Spec[none]{Key: "part", Title: "Part", Body: strings.Repeat("part ", 300), Tools: []*tools.Tool{echoTool("part_tool")}})}
			})
			p := prompt.MustNew("test", "folded", text("task", "Task", "Do it."), big).MustBind()
			d := rendered(t, sess, nil, prompt.Part{Prompt: p, Options: []prompt.RenderOption{prompt.WithBudget(100, tokens.Estimate)}})
			r0, seq := d.Rendered(0), sess.Seq()
			var err error
			if viaExpand {
				_, err = d.Expand(&prompt.VisibilityExpansionError{Keys: []string{"big"}})
			} else {
				_, err = d.Open(context.Background(), []string{"big"}, "")
			}
			if !errors.Is(err, prompt.ErrOverBudget) {
				t.Fatalf("got %v, want the opening refused for the budget", err)
			}
			if calls.Load() == 0 {
				t.Fatal("the opening did not unfold big: the case tests nothing")
			}
			if sess.Seq() != seq {
				t.Errorf("the refused opening dispatched %v", sess.Events()[seq:])
			}
			if names(d.Tools()) != "open_sections" || strings.Contains(d.Rendered(0).Text(), "part part") {
				t.Errorf("big opened: tools %s, text\n%s", names(d.Tools()), d.Rendered(0).Text())
			}
			if viaExpand && d.Rendered(0) != r0 {
				t.Error("Expand did not put the render back")
			}
		})
	}
}

// TestContentAnswerThatFailsChangesNothing opens, with the content in
// the answer, a section whose render succeeds but whose content cannot be
// built (a child summarized in the prompt fails in full): the opening is
// refused and leaves no event in the session.
func TestContentAnswerThatFailsChangesNothing(t *testing.T) {
	sess := session.New()
	p := prompt.MustNew("test", "broken",
		text("task", "Task", "Do it."),
		summarized("a", "A", "Tools of A.", "A's tools.", []*tools.Tool{echoTool("a_tool")},
			section.New(section.Spec[none]{Key: "feed", Title: "Feed", Summary: "A feed.", Visibility: visibility.Const(visibility.Summary),
				Content: func(none) (string, error) { return "", errors.New("the feed is down") }})),
	).MustBind()
	d, err := prompt.NewDisclosure(sess, nil, []prompt.Part{{Prompt: p}}, prompt.WithContentAnswers())
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Render(); err != nil {
		t.Fatal(err)
	}
	seq := sess.Seq()
	_, err = d.Open(context.Background(), []string{"a"}, "")
	if _, ok := errors.AsType[*prompt.OpenError](err); !ok || !strings.Contains(err.Error(), "the feed is down") {
		t.Errorf("got %v, want the opening refused", err)
	}
	if sess.Seq() != seq {
		t.Errorf("the refused opening dispatched %v", sess.Events()[seq:])
	}
	for _, tl := range d.Tools() {
		if tl.Name() == "a_tool" {
			t.Errorf("a_tool is offered after the refused opening")
		}
	}
}

// TestRefitClosesOnlyWhatHelps: Refit closes neither a path no part has
// (a section opened by an earlier version of the prompt) nor a section
// whose closing changed nothing (its content costs no more than its
// summary, so the budget shows it in full anyway): closing the large one
// alone makes the prompt fit, and only it is closed and reported. The
// render left is the session's: of the trials that fitted (small and big
// closed, then big alone), the last.
func TestRefitClosesOnlyWhatHelps(t *testing.T) {
	big := section.New(section.Spec[section.None]{Key: "big", Title: "Big", Body: strings.Repeat("many words here ", 200), Summary: "big summary"})
	small := section.New(section.Spec[section.None]{Key: "small", Title: "Small", Body: "tiny", Summary: "s"})
	p := prompt.MustNew("test", "refit", big, small).MustBind()
	sess := session.New()
	for _, path := range []string{"big", "removed", "small"} {
		if err := (prompt.Overrides{path: visibility.Full}).Apply(sess); err != nil {
			t.Fatal(err)
		}
	}
	d, err := prompt.NewDisclosure(sess, nil, []prompt.Part{{Prompt: p, Options: []prompt.RenderOption{prompt.WithBudget(100, tokens.Estimate)}}})
	if err != nil {
		t.Fatal(err)
	}
	closed, err := d.Refit()
	if err != nil || !slices.Equal(closed, []string{"big"}) {
		t.Fatalf("got %v, %v; want [big], no error", closed, err)
	}
	if got := visibility.Get(sess).Paths(); !slices.Equal(got, []string{"removed", "small"}) {
		t.Errorf("overrides left: got %v, want [removed small]", got)
	}
	refitStands(t, d, 1)
}
