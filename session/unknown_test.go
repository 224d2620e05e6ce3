package session_test

import (
	"bytes"
	"encoding/json"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/visibility"
)

// fromElsewhere is an event type a log was saved with that the replaying
// session does not name at first.
type fromElsewhere struct {
	Env  string `json:"env"`
	Uses int    `json:"uses"`
}

var usesSlice = session.NewSlice("uses", 0)

// savedWithElsewhere returns a log of a session that named fromElsewhere:
// added, fromElsewhere, added, fromElsewhere.
func savedWithElsewhere(t *testing.T) []byte {
	t.Helper()
	orig := newCounter(t, session.WithClock(stepClock()))
	if err := session.RegisterEvent[fromElsewhere](orig, "elsewhere.used"); err != nil {
		t.Fatal(err)
	}
	mustDispatch(t, orig, added{N: 1}, fromElsewhere{Env: "editor", Uses: 2}, added{N: 2}, fromElsewhere{Env: "editor", Uses: 3})
	return writeLog(t, orig)
}

// TestReplayKeepsUnknownEvents: with KeepUnknownEvents a log holding
// events of a type the session has no name for replays, keeps them as
// they were and writes them back byte for byte; once the type is named
// they apply, whether its reducer came before the name or after.
func TestReplayKeepsUnknownEvents(t *testing.T) {
	saved := savedWithElsewhere(t)

	strict := newCounter(t)
	if err := strict.ReplayLog(bytes.NewReader(saved)); err == nil || !strings.Contains(err.Error(), `event type "elsewhere.used" is not registered`) {
		t.Fatalf("replay without KeepUnknownEvents: got %v, want the unregistered type refused", err)
	}

	kept := newCounter(t)
	if err := kept.ReplayLog(bytes.NewReader(saved), session.KeepUnknownEvents()); err != nil {
		t.Fatalf("replay with KeepUnknownEvents: %v", err)
	}
	if got := session.Get(kept, countSlice); got != 3 {
		t.Errorf("count: got %d, want 3", got)
	}
	ev := kept.Events()[1]
	if u, ok := ev.Event.(session.UnknownEvent); !ok || ev.Type != "elsewhere.used" || u.Type != "elsewhere.used" || string(u.JSON) != `{"env":"editor","uses":2}` {
		t.Errorf("event 2: got %+v, want an UnknownEvent of elsewhere.used as saved", ev)
	}
	if got := writeLog(t, kept); !bytes.Equal(got, saved) {
		t.Errorf("log written after replay: got\n%s\nwant\n%s", got, saved)
	}
	mustDispatch(t, kept, added{N: 4})
	lines, err := kept.LogLines(4)
	if err != nil || len(lines) != 1 || !strings.Contains(string(lines[0]), `"seq":5`) {
		t.Errorf("LogLines(4): got %q, %v, want the line of event 5", lines, err)
	}

	t.Run("named, then reduced", func(t *testing.T) {
		sess := newCounter(t)
		if err := sess.ReplayLog(bytes.NewReader(saved), session.KeepUnknownEvents()); err != nil {
			t.Fatal(err)
		}
		if err := session.RegisterEvent[fromElsewhere](sess, "elsewhere.used"); err != nil {
			t.Fatalf("RegisterEvent: %v", err)
		}
		if got, ok := sess.Events()[3].Event.(fromElsewhere); !ok || got.Uses != 3 {
			t.Errorf("event 4 once named: got %#v, want fromElsewhere{Uses: 3}", sess.Events()[3].Event)
		}
		mustOn(t, sess, usesSlice, func(v int, e fromElsewhere) int { return v + e.Uses })
		if got := session.Get(sess, usesSlice); got != 5 {
			t.Errorf("uses: got %d, want 5", got)
		}
		if got := writeLog(t, sess); !bytes.Equal(got, saved) {
			t.Errorf("log written: got\n%s\nwant\n%s", got, saved)
		}
	})
	t.Run("reduced, then named", func(t *testing.T) {
		sess := newCounter(t)
		mustOn(t, sess, usesSlice, func(v int, e fromElsewhere) int { return v + e.Uses })
		if err := sess.ReplayLog(bytes.NewReader(saved), session.KeepUnknownEvents()); err != nil {
			t.Fatal(err)
		}
		if got := session.Get(sess, usesSlice); got != 0 {
			t.Errorf("uses before the name: got %d, want 0", got)
		}
		if err := session.RegisterEvent[fromElsewhere](sess, "elsewhere.used"); err != nil {
			t.Fatalf("RegisterEvent: %v", err)
		}
		if got := session.Get(sess, usesSlice); got != 5 {
			t.Errorf("uses: got %d, want 5", got)
		}
	})
	t.Run("named as a type it does not decode into", func(t *testing.T) {
		sess := newCounter(t)
		if err := sess.ReplayLog(bytes.NewReader(saved), session.KeepUnknownEvents()); err != nil {
			t.Fatal(err)
		}
		if err := session.RegisterEvent[string](sess, "elsewhere.used"); err != nil {
			t.Fatalf("RegisterEvent: %v", err)
		}
		if got := writeLog(t, sess); !bytes.Equal(got, saved) {
			t.Errorf("log written: got\n%s\nwant\n%s", got, saved)
		}
	})
}

// TestLogLines: the lines of the events after a given one, stopping at
// the first that cannot be written, so that what was returned has no gap.
func TestLogLines(t *testing.T) {
	sess := newCounter(t, session.WithClock(stepClock()))
	mustDispatch(t, sess, added{N: 1}, added{N: 2})
	var whole bytes.Buffer
	if err := sess.WriteLog(&whole); err != nil {
		t.Fatal(err)
	}
	lines, err := sess.LogLines(1)
	if err != nil || len(lines) != 1 || string(lines[0])+"\n" != strings.SplitAfter(whole.String(), "\n")[1] {
		t.Errorf("LogLines(1): got %q, %v, want the second line of\n%s", lines, err, whole.String())
	}
	if lines, err := sess.LogLines(2); err != nil || len(lines) != 0 {
		t.Errorf("LogLines(2): got %q, %v, want none", lines, err)
	}

	sess.Dispatch(visibility.SetOverride{Path: "a", Mode: visibility.Mode(9)}) // cannot be encoded
	mustDispatch(t, sess, added{N: 3})
	lines, err = sess.LogLines(1)
	if len(lines) != 1 || err == nil || !strings.Contains(err.Error(), "session: log lines: event 3 (visibility.set)") {
		t.Errorf("LogLines(1) past an event that cannot be encoded: got %d lines, %v, want 1 and an error naming event 3", len(lines), err)
	}

	noName := newCounter(t)
	mustDispatch(t, noName, added{N: 1}, orphan{Note: "x"}, added{N: 2})
	lines, err = noName.LogLines(0)
	if len(lines) != 1 || err == nil || !strings.Contains(err.Error(), "event 2 has type session_test.orphan, which is not registered") {
		t.Errorf("LogLines(0) past an unnamed event: got %d lines, %v, want 1 and an error naming event 2", len(lines), err)
	}
}

// TestLogLinesCopiesTheTail: a program that saves the log as it grows
// calls LogLines after each event; each call copies the events it
// encodes, not the whole log, so a long run does not cost the square of
// its length.
func TestLogLinesCopiesTheTail(t *testing.T) {
	const n = 50_000
	sess := newCounter(t)
	for i := range n {
		mustDispatch(t, sess, added{N: i})
	}
	allocated := func() uint64 {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.TotalAlloc
	}
	before := allocated()
	lines, err := sess.LogLines(n - 1)
	took := allocated() - before
	if err != nil || len(lines) != 1 {
		t.Fatalf("LogLines(%d): got %d lines, %v, want 1", n-1, len(lines), err)
	}
	// A copy of the whole log is n records of over 50 bytes each.
	if took > 64<<10 {
		t.Errorf("LogLines of the newest event allocated %d bytes with %d events logged, want under 64 KiB", took, n)
	}
}

// TestLogLinesStuckCopiesAChunk: after an event that cannot be encoded,
// LogLines copies a chunk of the events after it, not all of them, each
// time it is called (a run saves after every tool call).
func TestLogLinesStuckCopiesAChunk(t *testing.T) {
	const n = 50_000
	sess := newCounter(t)
	mustDispatch(t, sess, orphan{Note: "no name"})
	for i := range n {
		mustDispatch(t, sess, added{N: i})
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	before := m.TotalAlloc
	lines, err := sess.LogLines(0)
	runtime.ReadMemStats(&m)
	if err == nil || len(lines) != 0 {
		t.Fatalf("LogLines(0): got %d lines, %v, want none and an error naming event 1", len(lines), err)
	}
	if took := m.TotalAlloc - before; took > 256<<10 {
		t.Errorf("LogLines stuck at event 1 allocated %d bytes with %d events after it, want under 256 KiB", took, n)
	}
}

// TestRegisterAfterRestore: registering a type whose kept events come
// before a restore leaves the newest event of that type where it is, so a
// reducer registered then applies an event of it after the restore.
func TestRegisterAfterRestore(t *testing.T) {
	type late struct{ Uses int }
	uses := session.NewSlice("late.uses", 0)
	sess := newCounter(t)
	log := `{"seq":1,"time":"2026-01-01T00:00:00Z","type":"test.late","event":{"Uses":100}}` + "\n"
	if err := sess.ReplayLog(strings.NewReader(log), session.KeepUnknownEvents()); err != nil {
		t.Fatal(err)
	}
	mustOn(t, sess, uses, func(v int, _ added) int { return v })
	mustDispatch(t, sess, added{N: 1})
	if err := sess.Restore(sess.Snapshot()); err != nil {
		t.Fatal(err)
	}
	mustDispatch(t, sess, late{Uses: 7}) // no name yet, no reducer
	if err := session.RegisterEvent[late](sess, "test.late"); err != nil {
		t.Fatal(err)
	}
	mustOn(t, sess, uses, func(v int, e late) int { return v + e.Uses })
	if got := session.Get(sess, uses); got != 7 {
		t.Errorf("uses = %d, want 7: the event after the restore", got)
	}
}

// TestDispatchRefusesUnknownEvent: an UnknownEvent is what a replay keeps;
// dispatched, it would be logged for no reducer and replayed as its type.
func TestDispatchRefusesUnknownEvent(t *testing.T) {
	sess := newCounter(t)
	err := sess.Dispatch(session.UnknownEvent{Type: "test.added", JSON: []byte(`{"N":5}`)})
	if err == nil || !strings.Contains(err.Error(), "dispatch an event of a registered type") {
		t.Errorf("got %v, want a refusal", err)
	}
	if sess.Seq() != 0 {
		t.Errorf("the event was logged: seq %d", sess.Seq())
	}
	tx := sess.Begin()
	defer tx.Discard()
	if err := tx.Session().Dispatch(session.UnknownEvent{Type: "test.added", JSON: []byte(`{"N":5}`)}); err == nil {
		t.Error("a transaction staged an UnknownEvent")
	}
}

// TestWriteLogAfterRestore: a restored session's log does not rebuild
// its state, so WriteLog refuses it instead of writing one whose replay
// gives another state.
func TestWriteLogAfterRestore(t *testing.T) {
	sess := newCounter(t)
	mustDispatch(t, sess, added{N: 1})
	snap := sess.Snapshot()
	mustDispatch(t, sess, added{N: 10})
	if err := sess.Restore(snap); err != nil {
		t.Fatal(err)
	}
	mustDispatch(t, sess, added{N: 100})
	var buf bytes.Buffer
	err := sess.WriteLog(&buf)
	if err == nil || !strings.Contains(err.Error(), "session: write log: the session was set back to a snapshot (Restore)") || buf.Len() != 0 {
		t.Errorf("WriteLog after Restore: got %v and %d bytes, want it refused, nothing written", err, buf.Len())
	}
	if _, err := json.Marshal(sess.Snapshot()); err != nil {
		t.Errorf("the snapshot to save instead: %v", err)
	}
}

// TestOnAllAtOnce: visibility.Register registers the reducers of the
// overrides together, so a reader never sees an override the log sets
// and then clears applied without its clearing.
func TestOnAllAtOnce(t *testing.T) {
	for range 2000 {
		sess := session.New()
		mustDispatch(t, sess, visibility.SetOverride{Path: "a", Mode: visibility.Full}, visibility.ClearOverride{Path: "a"})
		var wg sync.WaitGroup
		var seen bool
		stop := make(chan struct{})
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				if _, ok := visibility.Get(sess).Mode("a"); ok {
					seen = true
					return
				}
				select {
				case <-stop:
					return
				default:
				}
			}
		}()
		err := visibility.Register(sess)
		close(stop)
		wg.Wait()
		if err != nil {
			t.Fatal(err)
		}
		if seen {
			t.Fatal("a reader saw override a set, though the log sets it and then clears it")
		}
	}
}

// TestOnAllRefusesInterface: OnAll registers none of its reducers when
// one is for an interface type.
func TestOnAllRefusesInterface(t *testing.T) {
	sess := session.New()
	err := session.OnAll(sess, countSlice,
		session.Reduce(func(v int, e added) (int, error) { return v + e.N, nil }),
		session.Reduce(func(v int, _ error) (int, error) { return v, nil }),
	)
	if err == nil || !strings.Contains(err.Error(), "is an interface") {
		t.Errorf("got %v, want the interface refused", err)
	}
	mustDispatch(t, sess, added{N: 1})
	if got := session.Get(sess, countSlice); got != 0 || session.Registered(sess, countSlice) {
		t.Errorf("count: got %d, want 0 and the slice not registered", got)
	}
	if err := session.OnAll(sess, countSlice, session.Reducer[int]{}); err == nil {
		t.Error("a zero Reducer: got nil error, want one")
	}
}
