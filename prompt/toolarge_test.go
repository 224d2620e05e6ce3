package prompt_test

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/tokens"
	"github.com/unfold-dev/unfold/visibility"
)

// bigSummaries is a prompt of n summarized sections whose summaries take
// 15 MiB each, from params: three of them pass MaxPromptBytes.
func bigSummaries(t *testing.T, n int) *prompt.Prompt {
	t.Helper()
	type P struct{ S string }
	secs := []*section.Section{section.New(section.Spec[section.None]{Key: "task", Title: "Task", Body: "Do it."})}
	for i := range n {
		key := "s" + string(rune('a'+i))
		secs = append(secs, section.New(section.Spec[P]{Key: key, Title: key, Body: "body",
			Summary: "{{.S}}", Visibility: visibility.Const(visibility.Summary)}))
	}
	return prompt.MustNew("t", "big", secs...).MustBind(P{strings.Repeat("0123456789abcde\n", 15<<16)})
}

// TestPromptTooLargeSummaries renders twenty sections whose summaries take
// 15 MiB each (300 MiB) in every way a render can go: it fails with
// ErrPromptTooLarge naming the third, counted or not, and neither the
// render nor the Prompt after it holds more than a few times
// MaxPromptBytes. Counting used to keep and write every summary: a 1 GB
// text from a 1.4 KB prompt file.
func TestPromptTooLargeSummaries(t *testing.T) {
	for _, c := range []struct {
		name string
		opts []prompt.RenderOption
	}{
		{"no counter", nil},
		{"tokens", []prompt.RenderOption{prompt.WithTokens(tokens.Estimate)}},
		{"tokens not additive", []prompt.RenderOption{prompt.WithTokens(tokens.CounterFunc(func(s string) int { return len(s) / 4 }))}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := bigSummaries(t, 20)
			for round := range 2 { // the second finds what the first kept
				before := heap()
				_, err := p.Render(nil, nil, c.opts...)
				var se *section.Error
				if !errors.Is(err, prompt.ErrPromptTooLarge) || !errors.As(err, &se) || se.Path != "sc" {
					t.Fatalf("round %d: got %v, want %v at section sc", round, err, prompt.ErrPromptTooLarge)
				}
				if grew := heap().TotalAlloc - before.TotalAlloc; grew > 6*prompt.MaxPromptBytes {
					t.Errorf("round %d: the render allocated %d MiB, want at most %d", round, grew>>20, 6*prompt.MaxPromptBytes>>20)
				}
			}
			if held := heap().HeapAlloc; held > 3*prompt.MaxPromptBytes {
				t.Errorf("the Prompt holds %d MiB after the renders, want at most %d", held>>20, 3*prompt.MaxPromptBytes>>20)
			}
			runtime.KeepAlive(p)
		})
	}
}

// TestBudgetBigSummaries fits twenty sections whose summaries take 15
// MiB each, and whose bodies are short, into a budget: they show in full,
// and the summaries counted to find that out are not all kept.
func TestBudgetBigSummaries(t *testing.T) {
	p := bigSummaries(t, 20)
	for round := range 2 {
		r, err := p.Render(nil, nil, prompt.WithBudget(1<<30, tokens.Estimate))
		if err != nil || len(r.Text()) > 1000 {
			t.Fatalf("round %d: got %d bytes, %v, want every section in full", round, len(r.Text()), err)
		}
	}
	if held := heap().HeapAlloc; held > 3*prompt.MaxPromptBytes {
		t.Errorf("the Prompt holds %d MiB after the renders, want at most %d", held>>20, 3*prompt.MaxPromptBytes>>20)
	}
	runtime.KeepAlive(p)
}

// TestKeptBlocksCopied renders two sections of 15 MiB with one more
// small section each time, as a session opening sections one by one
// does: the small block kept from each render is a copy, not a slice that
// keeps that render's whole text.
func TestKeptBlocksCopied(t *testing.T) {
	type P struct{ S string }
	on := map[*session.Session]string{}
	secs := []*section.Section{
		section.New(section.Spec[P]{Key: "a", Title: "A", Body: "{{.S}}"}),
		section.New(section.Spec[P]{Key: "b", Title: "B", Body: "{{.S}}"}),
	}
	keys := []string{"c", "d", "e", "f", "g", "h"}
	for _, key := range keys {
		secs = append(secs, section.New(section.Spec[P]{Key: key, Title: key, Body: "small",
			EnabledIn: func(_ P, sess *session.Session) bool { return on[sess] == key }}))
	}
	p := prompt.MustNew("t", "big", secs...).MustBind(P{strings.Repeat("0123456789abcde\n", 15<<16)})
	for _, key := range keys {
		sess := session.New()
		on[sess] = key
		if _, err := p.Render(sess, nil); err != nil {
			t.Fatalf("section %s: %v", key, err)
		}
	}
	if held := heap().HeapAlloc; held > 3*prompt.MaxPromptBytes {
		t.Errorf("the Prompt holds %d MiB after the renders, want at most %d", held>>20, 3*prompt.MaxPromptBytes>>20)
	}
	runtime.KeepAlive(p)
}

// heap collects garbage and returns the memory statistics.
func heap() runtime.MemStats {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m
}

// TestPromptTooLargeKeptBlocks shows sections whose summaries take 15
// MiB each in renders with different sessions: each render is within
// MaxPromptBytes, the blocks the Prompt keeps stay within it too, and a
// render that shows blocks kept from earlier renders is refused past it.
func TestPromptTooLargeKeptBlocks(t *testing.T) {
	type P struct{ S string }
	on := map[*session.Session]string{}
	secs := []*section.Section{section.New(section.Spec[section.None]{Key: "task", Title: "Task", Body: "Do it."})}
	for _, key := range []string{"a", "b", "c", "d", "e", "f"} {
		secs = append(secs, section.New(section.Spec[P]{Key: key, Title: key, Body: "body",
			Summary: "{{.S}}", Visibility: visibility.Const(visibility.Summary),
			EnabledIn: func(_ P, sess *session.Session) bool { return strings.Contains(on[sess], key) }}))
	}
	p := prompt.MustNew("t", "big", secs...).MustBind(P{strings.Repeat("0123456789abcde\n", 15<<16)})
	render := func(keys string, opts ...prompt.RenderOption) error {
		sess := session.New()
		on[sess] = keys
		_, err := p.Render(sess, nil, opts...)
		return err
	}
	for _, keys := range []string{"bc", "de", "af"} {
		if err := render(keys); err != nil {
			t.Fatalf("sections %s: %v", keys, err)
		}
		if err := render(keys, prompt.WithTokens(tokens.Estimate)); err != nil {
			t.Fatalf("sections %s, counted: %v", keys, err)
		}
	}
	if held := heap().HeapAlloc; held > 3*prompt.MaxPromptBytes {
		t.Errorf("the Prompt holds %d MiB after the renders, want at most %d", held>>20, 3*prompt.MaxPromptBytes>>20)
	}
	// b and c are kept: the text passes the bound at c, copied as kept.
	err := render("abc")
	var se *section.Error
	if !errors.Is(err, prompt.ErrPromptTooLarge) || !errors.As(err, &se) || se.Path != "c" {
		t.Errorf("sections abc: got %v, want %v at section c", err, prompt.ErrPromptTooLarge)
	}
	runtime.KeepAlive(p)
}

// TestStandaloneTooLarge writes the context file of a section with
// separate children whose summaries take 15 MiB each: it fails with
// ErrPromptTooLarge naming the child that took it past MaxPromptBytes.
func TestStandaloneTooLarge(t *testing.T) {
	type P struct{ S string }
	var kids []*section.Section
	for _, key := range []string{"a", "b", "c", "d"} {
		kids = append(kids, section.New(section.Spec[P]{Key: key, Title: key, Body: "body", Summary: "{{.S}}", Separate: true}))
	}
	p := prompt.MustNew("t", "big", section.New(section.Spec[section.None]{Key: "top", Title: "Top", Body: "x", Children: kids})).
		MustBind(P{strings.Repeat("0123456789abcde\n", 15<<16)})
	_, err := p.Standalone("top")
	var se *section.Error
	if !errors.Is(err, prompt.ErrPromptTooLarge) || !errors.As(err, &se) || se.Path != "top.c" {
		t.Errorf("got %v, want %v at section top.c", err, prompt.ErrPromptTooLarge)
	}
}
