package prompt_test

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/spf13/afero"

	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/session"
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

// TestUnfoldInvalid finds children a template refuses: unfolding fails
// with the problem, and a disclosure's opening fails without changing what
// it shows.
func TestUnfoldInvalid(t *testing.T) {
	calls := new(atomic.Int32)
	twins := folded("twins", "Two of a kind.", calls, func() []*section.Section {
		return []*section.Section{
			summarized("same", "One", "one", "One.", nil),
			summarized("same", "Two", "two", "Two.", nil),
		}
	})
	p := prompt.MustNew("test", "invalid", twins).MustBind()
	if _, err := p.Unfold("twins"); err == nil || !strings.Contains(err.Error(), `duplicate key "same"`) {
		t.Errorf("got %v, want the duplicate key reported", err)
	}
	d := disclose(t, nil, afero.NewMemMapFs(), p)
	before := d.Rendered(0).Text()
	res, err := open(t, d, "twins")
	if err == nil && res.Success {
		t.Errorf("opening: got %+v, want a failure", res)
	}
	if !strings.Contains(res.Message, `duplicate key "same"`) {
		t.Errorf("opening: got message %q, want the duplicate key named", res.Message)
	}
	if d.Rendered(0).Text() != before {
		t.Errorf("a failed opening changed the prompt")
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

// TestUnfoldConcurrent unfolds one section from many goroutines and many
// disclosures at once: its children are found once, and every prompt has
// them.
func TestUnfoldConcurrent(t *testing.T) {
	p, shelfCalls, _ := shelf(t)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			d, err := prompt.NewDisclosure(nil, afero.NewMemMapFs(), []prompt.Part{{Prompt: p}})
			if err == nil {
				err = d.Render()
			}
			if err != nil {
				t.Error(err)
				return
			}
			if res, err := open(t, d, "shelf.atlas"); err != nil || !res.Success {
				t.Errorf("got %+v, %v", res, err)
			}
			u, err := p.Unfold("shelf.book")
			if err != nil || len(u.Template().Paths()) < 4 {
				t.Errorf("got %v, %v", u.Template().Paths(), err)
			}
		})
	}
	wg.Wait()
	if shelfCalls.Load() != 1 {
		t.Errorf("the shelf's books were found %d times, want once", shelfCalls.Load())
	}
}
