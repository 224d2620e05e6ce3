package section_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/visibility"
)

// foldedSpec is a summarized section whose children find gives.
func foldedSpec(key string, find func() []*section.Section) section.Spec[section.None] {
	return section.Spec[section.None]{
		Key: key, Title: key, Summary: "Folded.", Visibility: visibility.Const(visibility.Summary),
		LazyChildren: find,
	}
}

// TestLazyChildren unfolds a section whose children are found when it
// opens: none before, found once however many ask at once, the same ever
// after.
func TestLazyChildren(t *testing.T) {
	calls := 0
	var mu sync.Mutex // guards calls
	s := section.New(foldedSpec("shelf", func() []*section.Section {
		mu.Lock()
		calls++
		mu.Unlock()
		return []*section.Section{section.New(section.Spec[section.None]{Key: "book", Title: "Book"})}
	}))
	if !s.Folded() || len(s.Children()) != 0 {
		t.Fatalf("before: got folded %v and %d children, want folded and none", s.Folded(), len(s.Children()))
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if err := s.Unfold(nil); err != nil {
				t.Error(err)
			}
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
	if err := plain.Unfold(nil); err != nil || plain.Folded() || len(plain.Children()) != 0 {
		t.Errorf("a section without LazyChildren: got %v, folded %v, %d children", err, plain.Folded(), len(plain.Children()))
	}
}

// TestLazyChildrenFail finds children that break the rules, that hold
// the section itself, that the caller's check refuses, and children whose
// finding panics: the section keeps none, and the Unfold that looked says
// why.
func TestLazyChildrenFail(t *testing.T) {
	book := func(key string) *section.Section {
		return section.New(section.Spec[section.None]{Key: key, Title: "Book"})
	}
	var s *section.Section
	tests := []struct {
		name  string
		find  func() []*section.Section
		check func([]*section.Section) error
		want  string
	}{
		{"duplicate keys", func() []*section.Section { return []*section.Section{book("same"), book("same")} }, nil, `duplicate key "same" among siblings`},
		{"a bad key", func() []*section.Section { return []*section.Section{book("Not A Key")} }, nil, "the subsections of shelf: "},
		{"a nil child", func() []*section.Section { return []*section.Section{nil} }, nil, "child 1 is nil"},
		{"a panic", func() []*section.Section { panic("the disk is gone") }, nil, "the subsections of shelf: finding them panicked: the disk is gone"},
		{"itself", func() []*section.Section { return []*section.Section{s} }, nil, "the subsections of shelf: they hold shelf itself"},
		{"itself below", func() []*section.Section {
			return []*section.Section{section.New(section.Spec[section.None]{Key: "box", Title: "Box", Children: []*section.Section{s}})}
		}, nil, "they hold shelf itself"},
		{"the check", func() []*section.Section { return []*section.Section{book("book")} },
			func(kids []*section.Section) error { return fmt.Errorf("%s: the prompt has that tool", kids[0].Key()) },
			"the subsections of shelf: book: the prompt has that tool"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s = section.New(foldedSpec("shelf", tt.find))
			err := s.Unfold(tt.check)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "the subsections of shelf: ") {
				t.Errorf("got %v, want %q in it", err, tt.want)
			}
			if again := s.Unfold(nil); again != nil {
				t.Errorf("again: got %v, want nil: the call that looked said why", again)
			}
			if s.Folded() || len(s.Children()) != 0 {
				t.Errorf("got folded %v and %d children, want unfolded with none", s.Folded(), len(s.Children()))
			}
			if err := section.Validate([]*section.Section{s}); err != nil {
				t.Errorf("a tree holding it: %v", err)
			}
		})
	}
}

// TestLazyChildrenSpec refuses a section given children both ways, and a
// folded section that could show in full without being opened.
func TestLazyChildrenSpec(t *testing.T) {
	find := func() []*section.Section { return nil }
	plain := section.New(section.Spec[section.None]{Key: "plain", Title: "Plain"})
	tests := []struct {
		name string
		spec section.Spec[section.None]
		want string
	}{
		{"both", section.Spec[section.None]{Key: "both", Title: "Both", Summary: "S.", Visibility: visibility.Const(visibility.Summary), Children: []*section.Section{plain}, LazyChildren: find}, "both Children and LazyChildren are set"},
		{"full", section.Spec[section.None]{Key: "full", Title: "Full", Summary: "S.", LazyChildren: find}, "LazyChildren needs a summary and Visibility: visibility.Const(visibility.Summary)"},
		{"no summary", section.Spec[section.None]{Key: "bare", Title: "Bare", Visibility: visibility.Const(visibility.Summary), LazyChildren: find}, "LazyChildren needs a summary"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := section.Validate([]*section.Section{section.New(tt.spec)})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want %q in it", err, tt.want)
			}
		})
	}
}

// TestStable unfolds a section while Stable runs: the children appear
// only after it returns, and every read inside sees the same tree.
func TestStable(t *testing.T) {
	release := make(chan struct{})
	s := section.New(foldedSpec("shelf", func() []*section.Section {
		<-release
		return []*section.Section{section.New(section.Spec[section.None]{Key: "book", Title: "Book"})}
	}))
	done := make(chan struct{})
	section.Stable(func() {
		go func() {
			defer close(done)
			s.Unfold(nil)
		}()
		close(release)
		// Unfolding takes microseconds: a tenth of a second of reads
		// would see it.
		for end := time.Now().Add(100 * time.Millisecond); time.Now().Before(end); {
			if !s.Folded() || len(s.Children()) != 0 {
				t.Fatal("the section unfolded while Stable ran")
			}
		}
	})
	<-done
	if s.Folded() || len(s.Children()) != 1 {
		t.Errorf("after Stable: got folded %v and %d children, want 1", s.Folded(), len(s.Children()))
	}
}
