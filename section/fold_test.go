package section_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/unfold-dev/unfold/section"
)

// TestLazyChildren unfolds a section whose children are found when it
// opens: none before, found once however many ask at once, the same ever
// after; and a section given children both ways is refused.
func TestLazyChildren(t *testing.T) {
	calls := 0
	var mu sync.Mutex // guards calls
	s := section.New(section.Spec[section.None]{
		Key: "shelf", Title: "Shelf", Summary: "Books.",
		LazyChildren: func() []*section.Section {
			mu.Lock()
			calls++
			mu.Unlock()
			return []*section.Section{section.New(section.Spec[section.None]{Key: "book", Title: "Book"})}
		},
	})
	if !s.Folded() || len(s.Children()) != 0 {
		t.Fatalf("before: got folded %v and %d children, want folded and none", s.Folded(), len(s.Children()))
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			s.Unfold()
			if kids := s.Children(); len(kids) != 1 || kids[0].Key() != "book" {
				t.Errorf("after Unfold returned: got %d children", len(kids))
			}
		})
	}
	wg.Wait()
	if s.Folded() || calls != 1 {
		t.Errorf("after: got folded %v and %d calls, want unfolded and 1", s.Folded(), calls)
	}
	if err := section.Validate([]*section.Section{s}); err != nil {
		t.Errorf("unfolded: %v", err)
	}

	plain := section.New(section.Spec[section.None]{Key: "plain", Title: "Plain"})
	plain.Unfold() // does nothing
	if plain.Folded() || len(plain.Children()) != 0 {
		t.Errorf("a section without LazyChildren: got folded %v, %d children", plain.Folded(), len(plain.Children()))
	}

	both := section.New(section.Spec[section.None]{
		Key: "both", Title: "Both", Children: []*section.Section{plain},
		LazyChildren: func() []*section.Section { return nil },
	})
	err := section.Validate([]*section.Section{both})
	if err == nil || !strings.Contains(err.Error(), "both Children and LazyChildren are set") {
		t.Errorf("both: got %v, want both named", err)
	}
}
