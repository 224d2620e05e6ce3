package section_test

import (
	"sync"
	"sync/atomic"
	"testing"

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
