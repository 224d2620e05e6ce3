package prompt_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
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

// folded returns a summarized section whose children are found when it
// opens, by find, and counts the calls of find in calls.
func folded(key, summary string, calls *atomic.Int32, find func() []*section.Section) *section.Section {
	return section.New(section.Spec[none]{
		Key: key, Title: strings.ToUpper(key[:1]) + key[1:], Body: "The " + key + " itself.", Summary: summary,
		Visibility: visibility.Const(visibility.Summary),
		LazyChildren: func() []*section.Section {
			calls.Add(1)
			return find()
		},
	})
}

// shelf is a prompt with a folded "shelf" of two summarized books, one of
// them folded in turn (its chapter is found when it opens), and a plain
// "desk" section.
func shelf(t *testing.T) (p *prompt.Prompt, shelfCalls, bookCalls *atomic.Int32) {
	t.Helper()
	shelfCalls, bookCalls = new(atomic.Int32), new(atomic.Int32)
	book := folded("book", "A book.", bookCalls, func() []*section.Section {
		return []*section.Section{summarized("chapter", "Chapter", "It was a dark night.", "The first chapter.", nil)}
	})
	s := folded("shelf", "Two books.", shelfCalls, func() []*section.Section {
		return []*section.Section{book, summarized("atlas", "Atlas", "Maps of the world.", "An atlas.", nil)}
	})
	desk := section.New(section.Spec[none]{Key: "desk", Title: "Desk", Body: "A desk."})
	return prompt.MustNew("test", "shelf", desk, s).MustBind(), shelfCalls, bookCalls
}

func TestUnfold(t *testing.T) {
	p, shelfCalls, bookCalls := shelf(t)
	if got := strings.Join(p.Template().Paths(), ","); got != "desk,shelf" {
		t.Errorf("folded: got paths %s, want desk,shelf", got)
	}
	r, err := p.Render(session.New(), nil)
	if err != nil {
		t.Fatal(err)
	}
	// A folded section names no subsections: it has none yet.
	if want := `[This section is summarized. To view full content, call ` + "`open_sections`" + ` with key "shelf". The content will be written to context/shelf.md for you to read.]`; !strings.Contains(r.Text(), want) {
		t.Errorf("folded: got\n%s\nwant the suffix %s", r.Text(), want)
	}
	if shelfCalls.Load() != 0 {
		t.Errorf("rendering folded: the children were found %d times, want 0", shelfCalls.Load())
	}

	for _, paths := range [][]string{nil, {"desk"}, {"nowhere.at.all"}, {""}} {
		if same, err := p.Unfold(paths...); same != p || err != nil {
			t.Errorf("Unfold(%q): got a new prompt (%v), want p itself", paths, err)
		}
	}
	if shelfCalls.Load() != 0 {
		t.Errorf("unfolding elsewhere: the children were found %d times, want 0", shelfCalls.Load())
	}

	// A path below two folded sections unfolds both.
	u, err := p.Unfold("shelf.book.chapter")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(u.Template().Paths(), ","), "desk,shelf,shelf.book,shelf.book.chapter,shelf.atlas"; got != want {
		t.Errorf("unfolded: got paths %s, want %s", got, want)
	}
	if shelfCalls.Load() != 1 || bookCalls.Load() != 1 {
		t.Errorf("children found %d and %d times, want once each", shelfCalls.Load(), bookCalls.Load())
	}
	// p keeps the tree it was built with; unfolding it again builds the
	// tree with the children found before.
	if got := strings.Join(p.Template().Paths(), ","); got != "desk,shelf" {
		t.Errorf("p after unfolding: got paths %s, want desk,shelf", got)
	}
	again, err := p.Unfold("shelf")
	if err != nil || len(again.Template().Paths()) != 5 || shelfCalls.Load() != 1 {
		t.Errorf("unfold again: got paths %v, %v, found %d times", again.Template().Paths(), err, shelfCalls.Load())
	}
	if same, err := u.Unfold("shelf.book.chapter"); same != u || err != nil {
		t.Errorf("unfolding an unfolded prompt: got a new prompt (%v), want it itself", err)
	}

	// Rendered.Open refuses a folded section, and says what to do.
	_, err = r.Open("shelf")
	if err == nil || !strings.Contains(err.Error(), "section shelf is folded") || !strings.Contains(err.Error(), "Prompt.Unfold") {
		t.Errorf("Rendered.Open on a folded section: got %v, want an error naming it and Prompt.Unfold", err)
	}
}

// TestUnfoldParams binds the params again: a child found when its section
// opens may take the prompt's params.
func TestUnfoldParams(t *testing.T) {
	type task struct{ Goal string }
	calls := new(atomic.Int32)
	steps := folded("steps", "The steps.", calls, func() []*section.Section {
		return []*section.Section{section.New(section.Spec[task]{Key: "first", Title: "First", Body: "Start with {{.Goal}}."})}
	})
	intro := section.New(section.Spec[task]{Key: "intro", Title: "Intro", Body: "Goal: {{.Goal}}."})
	p, err := prompt.MustNew("test", "params", intro, steps).Bind(task{Goal: "the tests"})
	if err != nil {
		t.Fatal(err)
	}
	u, err := p.Unfold("steps")
	if err != nil {
		t.Fatal(err)
	}
	sess := session.New()
	if err := (prompt.Overrides{"steps": visibility.Full}).Apply(sess); err != nil {
		t.Fatal(err)
	}
	r, err := u.Render(sess, nil)
	if err != nil || !strings.Contains(r.Text(), "Start with the tests.") {
		t.Errorf("got %v\n%s\nwant the child rendered with the params", err, r.Text())
	}
}

// TestUnfoldInvalid finds children that break a template's rules, break
// the rules of the prompt they would join, hold their own section, or
// whose finding panics: the opening fails with the reason, the prompt
// stays as it was, the disclosure goes on working, and the section is
// from then on one without children, in every prompt built from it.
func TestUnfoldInvalid(t *testing.T) {
	type task struct{ Goal string }
	var twins *section.Section
	for _, tt := range []struct {
		name string
		find func() []*section.Section
		want string
	}{
		{"duplicate keys", func() []*section.Section {
			return []*section.Section{summarized("same", "One", "one", "One.", nil), summarized("same", "Two", "two", "Two.", nil)}
		}, `cannot open twins.same: the subsections of twins: section same: duplicate key "same" among siblings`},
		{"a tool of the prompt", func() []*section.Section {
			return []*section.Section{summarized("same", "One", "one", "One.", []*tools.Tool{echoTool("desk_tool")})}
		}, `cannot open twins.same: the subsections of twins: section same: tool name "desk_tool" is taken by a tool of desk; rename the tool`},
		{"open_sections", func() []*section.Section {
			return []*section.Section{summarized("same", "One", "one", "One.", []*tools.Tool{echoTool(prompt.OpenSectionsName)})}
		}, `cannot open twins.same: the subsections of twins: section same: tool name "open_sections" is taken by open_sections, the prompt's own tool`},
		{"params not given", func() []*section.Section {
			return []*section.Section{section.New(section.Spec[task]{Key: "same", Title: "One", Body: "{{.Goal}}"})}
		}, `cannot open twins.same: the subsections of twins: prompt: bind test/invalid: missing params of type prompt_test.task (needed by section same)`},
		{"itself", func() []*section.Section { return []*section.Section{twins} },
			"cannot open twins.same: the subsections of twins: they hold twins itself"},
		{"a panic", func() []*section.Section { panic("the disk is gone") },
			"cannot open twins.same: the subsections of twins: finding them panicked: the disk is gone"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			calls := new(atomic.Int32)
			twins = folded("twins", "Two of a kind.", calls, tt.find)
			desk := section.New(section.Spec[none]{Key: "desk", Title: "Desk", Body: "A desk.", Tools: []*tools.Tool{echoTool("desk_tool")}})
			p := prompt.MustNew("test", "invalid", desk, twins).MustBind()
			d := disclose(t, nil, afero.NewMemMapFs(), p)
			before := d.Rendered(0).Text()
			res, err := open(t, d, "twins.same")
			if err == nil && res.Success || !strings.HasPrefix(res.Message, tt.want) {
				t.Errorf("opening: got %q, %v, want a failure starting %q", res.Message, err, tt.want)
			}
			if d.Rendered(0).Text() != before {
				t.Errorf("a failed opening changed the prompt")
			}
			// The section opens by its own key, without children, here
			// and in a prompt built again.
			res, _ = open(t, d, "twins")
			if !res.Success {
				t.Errorf("opening again: got %+v, want it written", res)
			}
			if _, err := prompt.New("test", "again", desk, twins); err != nil {
				t.Errorf("a prompt built again: %v", err)
			}
			if calls.Load() != 1 {
				t.Errorf("the children were looked for %d times, want once", calls.Load())
			}
		})
	}
}

// TestUnfoldFailsToRender unfolds a section whose children make every
// render fail (a predicate that panics): the opening fails, and the
// disclosure keeps the prompt it last rendered, so the next opening fails
// the same way rather than finding no section.
func TestUnfoldFailsToRender(t *testing.T) {
	calls := new(atomic.Int32)
	box := folded("box", "A box.", calls, func() []*section.Section {
		return []*section.Section{
			summarized("good", "Good", "Fine.", "Fine.", nil),
			section.New(section.Spec[none]{Key: "bad", Title: "Bad", Body: "Never.", Enabled: func(none) bool { panic("the predicate broke") }}),
		}
	})
	d := disclose(t, nil, afero.NewMemMapFs(), prompt.MustNew("test", "failing", box).MustBind())
	for range 2 {
		res, _ := open(t, d, "box.good")
		if res.Success || !strings.Contains(res.Message, "the predicate broke") {
			t.Errorf("got %q, want the render's failure", res.Message)
		}
	}
	if err := d.Render(); err != nil {
		t.Errorf("render: %v", err)
	}
}

// TestUnfoldNone opens a folded section that finds no children, as a
// skill without files does: it opens like a section without any.
func TestUnfoldNone(t *testing.T) {
	calls := new(atomic.Int32)
	empty := folded("empty", "Nothing inside.", calls, func() []*section.Section { return nil })
	fs := afero.NewMemMapFs()
	d := disclose(t, nil, fs, prompt.MustNew("test", "none", empty).MustBind())
	if res, err := open(t, d, "empty"); err != nil || !res.Success {
		t.Fatalf("got %+v, %v", res, err)
	}
	if data, err := afero.ReadFile(fs, "context/empty.md"); err != nil || string(data) != "## Empty (empty)\n\nThe empty itself.\n" {
		t.Errorf("context/empty.md: got %q, %v", data, err)
	}
	if calls.Load() != 1 {
		t.Errorf("looked for children %d times, want once", calls.Load())
	}
}

// TestUnfoldUnknownKey asks to open a section below a folded one with a
// key no section has: the request fails, and nothing unfolds.
func TestUnfoldUnknownKey(t *testing.T) {
	p, shelfCalls, _ := shelf(t)
	d := disclose(t, nil, afero.NewMemMapFs(), p)
	if res, _ := open(t, d, "shelf.atlas", "nowhere"); res.Success || res.Message != "Section 'nowhere' does not exist in this prompt." {
		t.Errorf("got %+v, want a failure naming nowhere", res)
	}
	if shelfCalls.Load() != 0 {
		t.Errorf("the shelf unfolded for a request naming an unknown key")
	}
}

// TestUnfoldBudget renders a folded section whose body costs less than its
// summary under a budget: it stays summarized, since shown in full it
// would lack the children it has once opened.
func TestUnfoldBudget(t *testing.T) {
	calls := new(atomic.Int32)
	box := section.New(section.Spec[none]{
		Key: "box", Title: "Box", Body: "Tools.", Summary: strings.Repeat("A box of many tools, each for a job of its own. ", 5),
		Visibility:   visibility.Const(visibility.Summary),
		LazyChildren: func() []*section.Section { calls.Add(1); return nil },
	})
	plain := summarized("bag", "Bag", "Tools.", strings.Repeat("A bag of many tools, each for a job of its own. ", 5), nil)
	r, err := prompt.MustNew("test", "budget", box, plain).MustBind().Render(session.New(), nil, prompt.WithBudget(10000, tokens.Estimate))
	if err != nil {
		t.Fatal(err)
	}
	modes := map[string]visibility.Mode{}
	for _, s := range r.Report() {
		modes[s.Path] = s.Mode
	}
	if modes["box"] != visibility.Summary || modes["bag"] != visibility.Full {
		t.Errorf("got box %v and bag %v, want the folded box summarized and the bag in full (its content costs less)", modes["box"], modes["bag"])
	}
	if calls.Load() != 0 {
		t.Errorf("the budget unfolded the box")
	}
}

// TestExpandUnfolds opens a section below a folded one through a tool that
// names keys only, as a search does: the disclosure unfolds it first.
func TestExpandUnfolds(t *testing.T) {
	p, _, _ := shelf(t)
	d := disclose(t, nil, afero.NewMemMapFs(), p)
	find := tools.MustNew("find", "Finds a book.", func(context.Context, tools.Context, echoIn) (string, error) {
		return "", tools.Halt(&prompt.VisibilityExpansionError{Keys: []string{"shelf.book.chapter"}, Reason: "found it", Answer: "The chapter has it."})
	})
	res, err := d.Call(context.Background(), find, json.RawMessage(`{"text":"night"}`))
	if err != nil || !res.Success {
		t.Fatalf("got %+v, %v", res, err)
	}
	op := res.Value.(*prompt.Opened)
	if strings.Join(op.Paths, ",") != "shelf,shelf.book,shelf.book.chapter" || op.Answer != "The chapter has it." {
		t.Errorf("got opened %v and answer %q", op.Paths, op.Answer)
	}
	if !strings.Contains(d.Rendered(0).Text(), "It was a dark night.") {
		t.Errorf("got\n%s\nwant the chapter in full", d.Rendered(0).Text())
	}

	// A tool that sets the overrides itself, answered with content: the
	// content shows what opening the shelf unfolds below it.
	p, _, _ = shelf(t)
	d, err = prompt.NewDisclosure(nil, nil, []prompt.Part{{Prompt: p}}, prompt.WithContentAnswers())
	if err == nil {
		err = d.Render()
	}
	if err != nil {
		t.Fatal(err)
	}
	pick := tools.MustNew("pick", "Picks the shelf.", func(context.Context, tools.Context, echoIn) (string, error) {
		return "", tools.Halt(&prompt.VisibilityExpansionError{Keys: []string{"shelf"}, Overrides: prompt.Overrides{"shelf": visibility.Full}})
	})
	res, err = d.Call(context.Background(), pick, json.RawMessage(`{"text":"x"}`))
	if err != nil || !res.Success || !strings.Contains(res.Value.(*prompt.Opened).Content, "It was a dark night.") {
		t.Errorf("got %+v, %v, want the chapter in the content", res, err)
	}
}

// disclose returns a disclosure of p, rendered.
func disclose(t *testing.T, sess *session.Session, fs afero.Fs, p *prompt.Prompt) *prompt.Disclosure {
	t.Helper()
	d, err := prompt.NewDisclosure(sess, fs, []prompt.Part{{Prompt: p}})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Render(); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestDisclosureUnfolds opens folded sections as a model would: by their
// key, by a key below them that the prompt did not have, with and without
// tools, and from a session whose overrides opened them before.
func TestDisclosureUnfolds(t *testing.T) {
	t.Run("content", func(t *testing.T) {
		p, shelfCalls, _ := shelf(t)
		fs := afero.NewMemMapFs()
		d := disclose(t, nil, fs, p)
		// A key below the folded shelf, which the model may know from
		// elsewhere.
		res, err := open(t, d, "shelf.atlas")
		if err != nil || !res.Success {
			t.Fatalf("got %+v, %v", res, err)
		}
		data, err := afero.ReadFile(fs, "context/shelf.atlas.md")
		if err != nil || string(data) != "## Atlas (shelf.atlas)\n\nMaps of the world.\n" {
			t.Errorf("context/shelf.atlas.md: got %q, %v", data, err)
		}
		// The shelf itself: its context file shows its books.
		if res, err = open(t, d, "shelf"); err != nil || !res.Success {
			t.Fatalf("got %+v, %v", res, err)
		}
		data, _ = afero.ReadFile(fs, "context/shelf.md")
		// The book shows in full with it, and so does its chapter, found
		// too.
		for _, want := range []string{"The shelf itself.", "### Book (shelf.book)", "The book itself.", "#### Chapter (shelf.book.chapter)", "It was a dark night.", "### Atlas (shelf.atlas)"} {
			if !strings.Contains(string(data), want) {
				t.Errorf("context/shelf.md: got\n%s\nwant %q in it", data, want)
			}
		}
		if shelfCalls.Load() != 1 {
			t.Errorf("the shelf's books were found %d times, want once", shelfCalls.Load())
		}
		// The prompt now names the books in the shelf's suffix.
		if text := d.Rendered(0).Text(); !strings.Contains(text, "including subsections: book, atlas") {
			t.Errorf("after opening: got\n%s\nwant the books named", text)
		}
	})

	t.Run("tools", func(t *testing.T) {
		calls := new(atomic.Int32)
		box := folded("box", "A toolbox.", calls, func() []*section.Section {
			return []*section.Section{summarized("hammer", "Hammer", "Hits nails.", "A hammer.", []*tools.Tool{echoTool("hammer")})}
		})
		d := disclose(t, nil, afero.NewMemMapFs(), prompt.MustNew("test", "tools", box).MustBind())
		res, err := open(t, d, "box.hammer")
		if err != nil || !res.Success {
			t.Fatalf("got %+v, %v", res, err)
		}
		op := res.Value.(*prompt.Opened)
		if strings.Join(op.Paths, ",") != "box,box.hammer" || strings.Join(op.NewTools, ",") != "hammer" {
			t.Errorf("got opened %v and new tools %v, want box,box.hammer and hammer", op.Paths, op.NewTools)
		}
		if !strings.Contains(d.Rendered(0).Text(), "Hits nails.") {
			t.Errorf("got\n%s\nwant the hammer shown in full", d.Rendered(0).Text())
		}
	})

	t.Run("resumed", func(t *testing.T) {
		// A session whose overrides opened a section below the shelf, as
		// a session read back from an earlier run has: the first render
		// unfolds it.
		p, _, bookCalls := shelf(t)
		sess := session.New()
		if err := (prompt.Overrides{"shelf": visibility.Full, "shelf.book": visibility.Full, "shelf.book.chapter": visibility.Full}).Apply(sess); err != nil {
			t.Fatal(err)
		}
		d := disclose(t, sess, nil, p)
		if text := d.Rendered(0).Text(); !strings.Contains(text, "It was a dark night.") {
			t.Errorf("got\n%s\nwant the chapter shown in full", text)
		}
		if bookCalls.Load() != 1 {
			t.Errorf("the book's chapter was found %d times, want once", bookCalls.Load())
		}
	})
}

// TestUnfoldConcurrent opens different folded sections of one prompt
// from many disclosures at once, while prompts are built from the same
// sections: each section's children are found once, and every prompt is
// built from one view of the tree.
func TestUnfoldConcurrent(t *testing.T) {
	const n = 24
	var calls atomic.Int32
	var roots []*section.Section
	for i := range n {
		key := fmt.Sprintf("s%d", i)
		roots = append(roots, folded(key, "Folded.", &calls, func() []*section.Section {
			var kids []*section.Section
			for j := range 8 {
				kids = append(kids, summarized(fmt.Sprintf("c%d", j), "Child", "A child.", "A child.", nil))
			}
			return kids
		}))
	}
	p := prompt.MustNew("test", "concurrent", roots...).MustBind()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			d := disclose(t, nil, afero.NewMemMapFs(), p)
			for i := g; i < n; i += 2 {
				if _, err := d.Open(context.Background(), []string{fmt.Sprintf("s%d.c1", i)}, "the task needs it"); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	for range 2 {
		wg.Go(func() {
			for range 50 {
				if _, err := prompt.New("test", "again", roots...); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if calls.Load() != n {
		t.Errorf("children found %d times, want once for each of %d sections", calls.Load(), n)
	}
}
