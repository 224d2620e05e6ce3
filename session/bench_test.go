package session_test

import (
	"fmt"
	"testing"

	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/visibility"
)

// BenchmarkDispatch measures events per second into a session with the
// visibility overrides slice registered. The session is replaced every
// resetEvery events (inside the timed loop, so its cost is counted) to keep
// the log, and the benchmark's memory, bounded.
func BenchmarkDispatch(b *testing.B) {
	const resetEvery = 1 << 14
	paths := []string{"intro", "tools", "tools.bash", "tools.python", "context", "context.files", "examples", "rules"}
	events := make([]visibility.SetOverride, 0, 2*len(paths))
	for _, p := range paths {
		events = append(events, visibility.SetOverride{Path: p, Mode: visibility.Summary})
		events = append(events, visibility.SetOverride{Path: p, Mode: visibility.Full})
	}
	newSession := func() *session.Session {
		sess := session.New()
		if err := visibility.Register(sess); err != nil {
			b.Fatal(err)
		}
		return sess
	}
	sess := newSession()
	n := 0
	for b.Loop() {
		if n%resetEvery == resetEvery-1 {
			sess = newSession()
		}
		if err := sess.Dispatch(events[n%len(events)]); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkSaveAsItGrows saves a log as it grows, as the agent's
// transcript does: after each of 1,000, 5,000 or 20,000 events, the lines
// of the events not saved yet ([session.Session.LogLines]). It reports
// the cost per event, which stays flat when a save copies only the new
// events and grows with the log when it copies the whole of it.
func BenchmarkSaveAsItGrows(b *testing.B) {
	type added struct{ N int }
	for _, n := range []int{1000, 5000, 20000} {
		b.Run(fmt.Sprintf("events=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sess := session.New()
				if err := session.RegisterEvent[added](sess, "bench.added"); err != nil {
					b.Fatal(err)
				}
				var saved uint64
				for i := range n {
					if err := sess.Dispatch(added{i}); err != nil {
						b.Fatal(err)
					}
					lines, err := sess.LogLines(saved)
					if err != nil || len(lines) != 1 {
						b.Fatalf("LogLines(%d): got %d lines, %v", saved, len(lines), err)
					}
					saved += uint64(len(lines))
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/event")
		})
	}
}
