package section_test

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/visibility"
)

// TestLazySummary: a lazy summary counts as a summary for validation
// without being computed, and is computed once, by the first call.
func TestLazySummary(t *testing.T) {
	var calls atomic.Int32
	s := section.New(section.Spec[none]{
		Key: "a", Title: "A", Body: "body",
		LazySummary: func() string { calls.Add(1); return "computed" },
		Visibility:  visibility.Const(visibility.Summary),
		Separate:    true,
		Brief:       "short",
	})
	if err := section.Validate([]*section.Section{s}); err != nil {
		t.Fatalf("validate: %v", err)
	}
	if !s.HasSummary() || calls.Load() != 0 {
		t.Fatalf("before any call: has summary %v, computed %d times; want true and 0", s.HasSummary(), calls.Load())
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if got := s.Summary(); got != "computed" {
				t.Errorf("summary: got %q", got)
			}
		})
	}
	wg.Wait()
	if calls.Load() != 1 {
		t.Errorf("computed %d times, want once", calls.Load())
	}
	both := section.New(section.Spec[none]{Key: "b", Title: "B", Summary: "s", LazySummary: func() string { return "l" }})
	if err := section.Validate([]*section.Section{both}); err == nil {
		t.Errorf("Summary and LazySummary both set: got no error")
	}
}

// TestLazySummaryFails: a lazy summary that panics, or gives no text, is
// an error naming the section at every render that shows it, not a crash
// and then an empty summary.
func TestLazySummaryFails(t *testing.T) {
	for name, tt := range map[string]struct {
		lazy func() string
		says string
	}{
		"panics":     {func() string { panic("lazy") }, "section s: lazy summary panicked: lazy"},
		"empty":      {func() string { return "" }, "section s: lazy summary returned no text; a LazySummary must return the summary"},
		"only space": {func() string { return " \n" }, "lazy summary returned no text"},
	} {
		t.Run(name, func(t *testing.T) {
			s := section.New(section.Spec[none]{Key: "s", Title: "S", Body: "b", LazySummary: tt.lazy, Visibility: visibility.Const(visibility.Summary)})
			p := prompt.MustNew("a", "b", section.New(section.Spec[none]{Key: "task", Title: "Task", Body: "x"}), s)
			for range 2 {
				pb, err := p.Bind()
				if err != nil {
					t.Fatal(err)
				}
				r, err := pb.Render(nil, nil)
				if err == nil || !strings.Contains(err.Error(), tt.says) {
					t.Errorf("render: got %v, want %q", err, tt.says)
				}
				if r != nil && strings.Contains(r.Text(), "## 2. S") {
					t.Errorf("rendered with no summary: %q", r.Text())
				}
			}
		})
	}
}
