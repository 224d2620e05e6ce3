package prompt_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/spf13/afero"

	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/tokens"
	"github.com/unfold-dev/unfold/tools"
	"github.com/unfold-dev/unfold/visibility"
)

// manySummarized returns n summarized sections, s0 to s<n-1>, each
// carrying a tool of its own, and their keys.
func manySummarized(n int) ([]*section.Section, []string) {
	type in struct{}
	handler := func(context.Context, tools.Context, in) (string, error) { return "done", nil }
	secs := make([]*section.Section, n)
	keys := make([]string, n)
	for i := range secs {
		keys[i] = fmt.Sprintf("s%d", i)
		secs[i] = section.New(section.Spec[section.None]{
			Key:        keys[i],
			Title:      fmt.Sprintf("Section %d", i),
			Body:       strings.Repeat("Details of this section. ", 8),
			Summary:    "A section.",
			Visibility: visibility.Const(visibility.Summary),
			Tools:      []*tools.Tool{tools.MustNew(fmt.Sprintf("tool_%d", i), "Does one thing.", handler)},
		})
	}
	return secs, keys
}

// BenchmarkOpenMany measures one opening of n summarized sections that
// carry tools, the way an open_sections call listing them all opens them:
// the overrides are applied and the prompt rendered in a transaction. The
// disclosure and its session are new in each iteration, and counted.
func BenchmarkOpenMany(b *testing.B) {
	for _, n := range []int{256, 1024} {
		secs, keys := manySummarized(n)
		p := prompt.MustNew("bench", "open", secs...).MustBind()
		b.Run(fmt.Sprintf("sections=%d", n), func(b *testing.B) {
			for b.Loop() {
				d, err := prompt.NewDisclosure(session.New(), afero.NewMemMapFs(), []prompt.Part{{Prompt: p}})
				if err != nil {
					b.Fatal(err)
				}
				if err := d.Render(); err != nil {
					b.Fatal(err)
				}
				op, err := d.Open(context.Background(), keys, "all of them")
				if err != nil {
					b.Fatal(err)
				}
				if len(op.NewTools) != n {
					b.Fatalf("%d new tools, want %d", len(op.NewTools), n)
				}
			}
		})
	}
}

// BenchmarkRefitMany measures Refit of a session that opened n sections
// under a budget that closing them all does not meet: it closes them one
// by one, rendering after each, and then gives up, dispatching nothing,
// so every iteration does the same work.
func BenchmarkRefitMany(b *testing.B) {
	for _, n := range []int{150, 600} {
		secs, keys := manySummarized(n)
		p := prompt.MustNew("bench", "refit", secs...).MustBind()
		b.Run(fmt.Sprintf("opened=%d", n), func(b *testing.B) {
			sess := session.New()
			if err := visibility.Register(sess); err != nil {
				b.Fatal(err)
			}
			for _, k := range keys {
				if err := sess.Dispatch(visibility.SetOverride{Path: k, Mode: visibility.Full}); err != nil {
					b.Fatal(err)
				}
			}
			d, err := prompt.NewDisclosure(sess, nil, []prompt.Part{{Prompt: p, Options: []prompt.RenderOption{prompt.WithBudget(n, tokens.Estimate)}}})
			if err != nil {
				b.Fatal(err)
			}
			seq := sess.Seq()
			for b.Loop() {
				closed, err := d.Refit()
				if !errors.Is(err, prompt.ErrOverBudget) || closed != nil {
					b.Fatalf("got %v, %v; want the budget's error", closed, err)
				}
			}
			if sess.Seq() != seq {
				b.Fatal("a refit that could not fit dispatched events")
			}
		})
	}
}
