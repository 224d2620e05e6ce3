package session_test

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/visibility"
)

// overrides returns the overrides in sess as a plain map.
func overrides(sess *session.Session) map[string]visibility.Mode {
	ov := visibility.Get(sess)
	m := map[string]visibility.Mode{}
	for _, p := range ov.Paths() {
		m[p], _ = ov.Mode(p)
	}
	return m
}

// Overrides dispatched before the overrides slice is registered (before a
// prompt first renders) apply once it is, in log order, and the log can be
// written and replayed.
func TestEventsBeforeTheirSlice(t *testing.T) {
	sess := session.New(session.WithClock(stepClock()))
	mustDispatch(t, sess,
		visibility.ClearOverride{Path: "a"}, // clears nothing yet
		visibility.SetOverride{Path: "a", Mode: visibility.Full},
		visibility.SetOverride{Path: "b", Mode: visibility.Summary},
		visibility.ClearAll{},
		visibility.SetOverride{Path: "c", Mode: visibility.Full},
		visibility.SetOverride{Path: "d", Mode: visibility.Summary},
		visibility.ClearOverride{Path: "d"},
	)
	if err := visibility.Register(sess); err != nil {
		t.Fatal(err)
	}
	want := map[string]visibility.Mode{"c": visibility.Full}
	if got := overrides(sess); !reflect.DeepEqual(got, want) {
		t.Errorf("after Register: got %v, want %v", got, want)
	}
	// The events applied once: a dispatch after goes on from there.
	mustDispatch(t, sess, visibility.SetOverride{Path: "e", Mode: visibility.Summary})
	want["e"] = visibility.Summary
	if got := overrides(sess); !reflect.DeepEqual(got, want) {
		t.Errorf("after one more event: got %v, want %v", got, want)
	}

	log := writeLog(t, sess)
	if !bytes.Contains(log, []byte(`"seq":1,`)) || !bytes.Contains(log, []byte(`"type":"visibility.clear"`)) {
		t.Errorf("log: got\n%s\nwant every event under its registered name", log)
	}
	replayed := session.New()
	if err := visibility.Register(replayed); err != nil {
		t.Fatal(err)
	}
	if err := replayed.ReplayLog(bytes.NewReader(log)); err != nil {
		t.Fatal(err)
	}
	if got := overrides(replayed); !reflect.DeepEqual(got, want) {
		t.Errorf("replayed: got %v, want %v", got, want)
	}
	if got := writeLog(t, replayed); !bytes.Equal(got, log) {
		t.Errorf("replayed log: got\n%s\nwant\n%s", got, log)
	}
}

func TestLateReducer(t *testing.T) {
	t.Run("a slice's reducers apply in log order", func(t *testing.T) {
		sess := session.New()
		trace := session.NewSlice("trace", "")
		mustDispatch(t, sess, added{N: 1}, renamed{Name: "x"}, orphan{Note: "-"}, added{N: 2}, renamed{Name: "y"})
		mustOn(t, sess, trace, func(s string, e added) string { return s + strings.Repeat("+", e.N) })
		if got := session.Get(sess, trace); got != "+++" {
			t.Errorf("one reducer: got %q, want %q", got, "+++")
		}
		mustOn(t, sess, trace, func(s string, e renamed) string { return s + e.Name })
		if got, want := session.Get(sess, trace), "+x++y"; got != want {
			t.Errorf("two reducers: got %q, want %q", got, want)
		}
		mustDispatch(t, sess, added{N: 1})
		if got, want := session.Get(sess, trace), "+x++y+"; got != want {
			t.Errorf("then a dispatch: got %q, want %q", got, want)
		}
	})
	t.Run("a second slice on a handled type catches up too", func(t *testing.T) {
		sess := session.New()
		first := session.NewSlice("first", 0)
		second := session.NewSlice("second", 0)
		mustOn(t, sess, first, func(v int, e added) int { return v + e.N })
		mustDispatch(t, sess, added{N: 2}, added{N: 3})
		mustOn(t, sess, second, func(v int, e added) int { return v*10 + e.N })
		if got := session.Get(sess, first); got != 5 {
			t.Errorf("first: got %d, want 5", got)
		}
		if got := session.Get(sess, second); got != 23 {
			t.Errorf("second: got %d, want 23", got)
		}
	})
	t.Run("failures while catching up are returned once", func(t *testing.T) {
		sess := session.New()
		n := session.NewSlice("n", 0)
		mustDispatch(t, sess, added{N: 1}, added{N: -1}, added{N: 2})
		err := session.OnErr(sess, n, func(v int, e added) (int, error) {
			if e.N < 0 {
				return v, errBoom
			}
			return v + e.N, nil
		})
		if !errors.Is(err, errBoom) {
			t.Fatalf("got %v, want the reducer's error", err)
		}
		res := reducerErrors(err)
		if len(res) != 1 || res[0].Slice != "n" || res[0].Event != "session_test.added" {
			t.Errorf("got reducer errors %+v, want one for slice n on session_test.added", res)
		}
		if !strings.Contains(err.Error(), "event 2") {
			t.Errorf("got %q, want it to name event 2", err)
		}
		if got := session.Get(sess, n); got != 3 {
			t.Errorf("got %d, want 3 (the failed event skipped)", got)
		}
		mustOn(t, sess, n, func(v int, _ renamed) int { return v })
	})
	t.Run("after Restore, from the restored value", func(t *testing.T) {
		sess := session.New()
		n := session.NewSlice("n", 0)
		mustOn(t, sess, n, func(v int, e added) int { return v + e.N })
		mustDispatch(t, sess, added{N: 5}, renamed{Name: "lost"})
		snap := sess.Snapshot()
		mustDispatch(t, sess, added{N: 100})
		if err := sess.Restore(snap); err != nil {
			t.Fatal(err)
		}
		mustDispatch(t, sess, renamed{Name: "ab"})
		mustOn(t, sess, n, func(v int, e renamed) int { return v + len(e.Name) })
		if got := session.Get(sess, n); got != 7 {
			t.Errorf("got %d, want 7: 5 restored, plus the one rename after it", got)
		}
	})
	t.Run("events dropped by the log limit", func(t *testing.T) {
		sess := session.New(session.WithLogLimit(2))
		n := session.NewSlice("n", 0)
		mustDispatch(t, sess, renamed{Name: "a"}, added{N: 1}, added{N: 1}, added{N: 1}, added{N: 1})
		err := session.On(sess, n, func(v int, _ renamed) int { return v + 1 })
		if err == nil || !strings.Contains(err.Error(), "dropped events 1 to 2") {
			t.Errorf("got %v, want an error naming the dropped events", err)
		}
		mustDispatch(t, sess, renamed{Name: "b"})
		if got := session.Get(sess, n); got != 1 {
			t.Errorf("got %d, want 1: the reducer applies to the events after it", got)
		}
	})
	t.Run("naming an event type late", func(t *testing.T) {
		sess := session.New()
		mustDispatch(t, sess, orphan{Note: "x"})
		if err := sess.WriteLog(&bytes.Buffer{}); err == nil {
			t.Fatal("WriteLog with an unnamed event type: got nil error, want one")
		}
		if err := session.RegisterEvent[orphan](sess, "test.orphan"); err != nil {
			t.Fatal(err)
		}
		if got := sess.Events()[0].Type; got != "test.orphan" {
			t.Errorf("record type: got %q, want test.orphan", got)
		}
		if got := writeLog(t, sess); !bytes.Contains(got, []byte(`"type":"test.orphan"`)) {
			t.Errorf("got log %s, want the event under its name", got)
		}
	})
}
