package prompt_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/tokens"
	"github.com/unfold-dev/unfold/visibility"
)

// TestConcurrentRender renders one bound prompt from many goroutines at
// once, plain, with token counts and under a budget, each with its own
// session or none, while other goroutines open sections in their sessions.
// Under -race it shows rendering shares no mutable state; every result must
// equal the same render done alone.
func TestConcurrentRender(t *testing.T) {
	p := prompt.MustNew("bench", "budget", budgetSections()...).MustBind(benchBind)
	small := prompt.MustNew("bench", "render", benchSections(4, 3)...).MustBind(benchBind)
	counter := tokens.Estimate
	kinds := []struct {
		name string
		p    *prompt.Prompt
		opts []prompt.RenderOption
	}{
		{"plain", small, nil},
		{"tokens", p, []prompt.RenderOption{prompt.WithTokens(counter)}},
		{"budget", p, []prompt.RenderOption{prompt.WithBudget(8000, counter)}},
	}
	want := make([]string, len(kinds))
	for i, k := range kinds {
		r, err := k.p.Render(nil, nil, k.opts...)
		if err != nil {
			t.Fatalf("%s: %v", k.name, err)
		}
		want[i] = r.Text()
	}
	const goroutines, each = 16, 8
	errs := make(chan error, goroutines*each)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			k := kinds[g%len(kinds)]
			var sess *session.Session
			if g%2 == 0 {
				sess = session.New()
			}
			for range each {
				r, err := k.p.Render(sess, nil, k.opts...)
				switch {
				case err != nil:
					errs <- fmt.Errorf("%s: %v", k.name, err)
				case r.Text() != want[g%len(kinds)]:
					errs <- fmt.Errorf("%s: got %d bytes, want the %d bytes of a render done alone", k.name, len(r.Text()), len(want[g%len(kinds)]))
				}
			}
		})
	}
	// Sessions of their own, opened while the others render: the shared
	// prompt must not see them.
	for g := range 4 {
		wg.Go(func() {
			sess := session.New()
			if err := visibility.Register(sess); err != nil {
				errs <- err
				return
			}
			for i := range each {
				key := fmt.Sprintf("section-%d.child-%d", g%4, 2*(i%2)+1)
				if err := sess.Dispatch(visibility.SetOverride{Path: key, Mode: visibility.Full}); err != nil {
					errs <- err
					return
				}
				if _, err := small.Render(sess, nil); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
