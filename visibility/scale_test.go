package visibility_test

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"

	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/visibility"
)

// withOverrides returns a session holding n overrides of distinct paths,
// each set by its own event.
func withOverrides(tb testing.TB, n int) *session.Session {
	tb.Helper()
	sess := session.New()
	if err := visibility.Register(sess); err != nil {
		tb.Fatal(err)
	}
	for i := range n {
		if err := sess.Dispatch(visibility.SetOverride{Path: fmt.Sprintf("s%d", i), Mode: visibility.Full}); err != nil {
			tb.Fatal(err)
		}
	}
	return sess
}

// bytesPerEvent is what one more override event allocates, on average over
// a batch, in a session that holds n overrides.
func bytesPerEvent(t *testing.T, n int) float64 {
	t.Helper()
	sess := withOverrides(t, n)
	const batch = 256
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range batch {
		p := fmt.Sprintf("new%d", i)
		if err := sess.Dispatch(visibility.SetOverride{Path: p, Mode: visibility.Full}); err != nil {
			t.Fatal(err)
		}
		if err := sess.Dispatch(visibility.ClearOverride{Path: p}); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	return float64(after.TotalAlloc-before.TotalAlloc) / (2 * batch)
}

// TestOverrideEventCostDoesNotGrowWithCount: an override event copies what
// it changes, not every override the session holds, so that a session that
// opens n sections costs about n events to build and to replay, not n².
// It measures bytes allocated, not time: with a copy of the whole map each
// time, an event in a session of 4,096 overrides allocates 16 times what
// one in a session of 256 does.
func TestOverrideEventCostDoesNotGrowWithCount(t *testing.T) {
	small, large := bytesPerEvent(t, 256), bytesPerEvent(t, 4096)
	if large > 3*small {
		t.Errorf("an override event allocates %.0f bytes in a session of 4096 overrides, %.0f in one of 256; want about the same", large, small)
	}
}

// TestOverridesHeldDoNotChange: a value taken from a session is not
// changed by the events dispatched after it.
func TestOverridesHeldDoNotChange(t *testing.T) {
	sess := withOverrides(t, 100)
	held := visibility.Get(sess)
	for _, e := range []any{
		visibility.SetOverride{Path: "s1", Mode: visibility.Summary},
		visibility.ClearOverride{Path: "s2"},
		visibility.SetOverride{Path: "late", Mode: visibility.Full},
	} {
		if err := sess.Dispatch(e); err != nil {
			t.Fatal(err)
		}
	}
	if m, _ := held.Mode("s1"); m != visibility.Full {
		t.Errorf("s1: got %s, want FULL", m)
	}
	if _, ok := held.Mode("s2"); !ok {
		t.Error("s2: cleared in the value held")
	}
	if _, ok := held.Mode("late"); ok || held.Len() != 100 {
		t.Errorf("got %d overrides, late set %v; want 100, not set", held.Len(), ok)
	}
	now := visibility.Get(sess)
	if m, _ := now.Mode("s1"); m != visibility.Summary || now.Len() != 100 {
		t.Errorf("now: s1 %s, %d overrides; want SUMMARY, 100", m, now.Len())
	}
}

// BenchmarkOverrideEvent is one override event, set or clear, dispatched
// in a session that holds n overrides.
func BenchmarkOverrideEvent(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("overrides=%d", n), func(b *testing.B) {
			sess := withOverrides(b, n)
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				var e any = visibility.SetOverride{Path: "new", Mode: visibility.Full}
				if i%2 == 1 {
					e = visibility.ClearOverride{Path: "new"}
				}
				if err := sess.Dispatch(e); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// BenchmarkOverrideReplay replays the log of a session that opened n
// sections, one event each, as resuming it does.
func BenchmarkOverrideReplay(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("overrides=%d", n), func(b *testing.B) {
			var log bytes.Buffer
			if err := withOverrides(b, n).WriteLog(&log); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				sess := session.New()
				if err := visibility.Register(sess); err != nil {
					b.Fatal(err)
				}
				if err := sess.ReplayLog(bytes.NewReader(log.Bytes())); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkOverrideMode is a lookup in overrides of n paths, as a render
// with a session does for each section.
func BenchmarkOverrideMode(b *testing.B) {
	for _, n := range []int{10, 10000} {
		b.Run(fmt.Sprintf("overrides=%d", n), func(b *testing.B) {
			ov := visibility.Get(withOverrides(b, n))
			paths := ov.Paths()
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := ov.Mode(paths[i%len(paths)]); !ok {
					b.Fatal("missing")
				}
				i++
			}
		})
	}
}
