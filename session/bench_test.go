package session_test

import (
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
