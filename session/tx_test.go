package session_test

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/unfold-dev/unfold/session"
)

// txSession is a session with a counter slice (added) and a name slice
// (renamed), both events named for the log.
func txSession(t *testing.T) (*session.Session, *session.Slice[int], *session.Slice[string]) {
	t.Helper()
	sess := session.New()
	n := session.NewSlice("n", 0)
	name := session.NewSlice("name", "")
	mustOn(t, sess, n, func(v int, e added) int { return v + e.N })
	mustOn(t, sess, name, func(_ string, e renamed) string { return e.Name })
	for _, err := range []error{
		session.RegisterEvent[added](sess, "test.added"),
		session.RegisterEvent[renamed](sess, "test.renamed"),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return sess, n, name
}

// logOf is the session's log as JSON lines.
func logOf(t *testing.T, sess *session.Session) string {
	t.Helper()
	var b bytes.Buffer
	if err := sess.WriteLog(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestTxReadsItsWrites(t *testing.T) {
	sess, n, name := txSession(t)
	mustDispatch(t, sess, added{N: 1})
	tx := sess.Begin()
	view := tx.Session()
	mustDispatch(t, view, added{N: 10}, renamed{Name: "staged"}, added{N: 100})

	if got := session.Get(view, n); got != 111 {
		t.Errorf("view: n = %d, want 111", got)
	}
	if got := session.Get(view, name); got != "staged" {
		t.Errorf("view: name = %q, want %q", got, "staged")
	}
	if got := view.Seq(); got != 4 {
		t.Errorf("view: seq %d, want 4", got)
	}
	var types []string
	for _, r := range view.Events() {
		types = append(types, fmt.Sprintf("%d %s", r.Seq, r.Type))
	}
	if want := "1 test.added, 2 test.added, 3 test.renamed, 4 test.added"; strings.Join(types, ", ") != want {
		t.Errorf("view: events %v, want %s", types, want)
	}
	if got := view.Snapshot().Seq(); got != 4 {
		t.Errorf("view: snapshot seq %d, want 4", got)
	}

	// The session does not see them before the commit.
	if got := session.Get(sess, n); got != 1 {
		t.Errorf("session before commit: n = %d, want 1", got)
	}
	if got := sess.Seq(); got != 1 {
		t.Errorf("session before commit: seq %d, want 1", got)
	}

	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := session.Get(sess, n); got != 111 {
		t.Errorf("after commit: n = %d, want 111", got)
	}
	if got := session.Get(sess, name); got != "staged" {
		t.Errorf("after commit: name = %q", got)
	}
	if got := len(sess.Events()); got != 4 {
		t.Errorf("after commit: %d events, want 4", got)
	}
	// The log replays into a fresh session to the same state.
	fresh, fn, _ := txSession(t)
	if err := fresh.ReplayLog(strings.NewReader(logOf(t, sess))); err != nil {
		t.Fatal(err)
	}
	if got := session.Get(fresh, fn); got != 111 {
		t.Errorf("replayed: n = %d, want 111", got)
	}
}

func TestTxDiscardChangesNothing(t *testing.T) {
	sess, n, name := txSession(t)
	mustDispatch(t, sess, added{N: 1}, renamed{Name: "before"})
	before, beforeLog := sess.Snapshot(), logOf(t, sess)

	tx := sess.Begin()
	mustDispatch(t, tx.Session(), added{N: 10}, renamed{Name: "staged"})
	dropped := tx.Discard()

	if got := sess.Snapshot(); !reflect.DeepEqual(got, before) {
		t.Errorf("snapshot after discard: got %+v, want %+v", got, before)
	}
	if got := logOf(t, sess); got != beforeLog {
		t.Errorf("log after discard:\n%s\nwant:\n%s", got, beforeLog)
	}
	if session.Get(sess, n) != 1 || session.Get(sess, name) != "before" {
		t.Errorf("state after discard: n %d, name %q", session.Get(sess, n), session.Get(sess, name))
	}
	var got []string
	for _, r := range dropped {
		got = append(got, fmt.Sprintf("%d %s %v", r.Seq, r.Type, r.Event))
	}
	if want := []string{"3 test.added {10}", "4 test.renamed {staged}"}; !reflect.DeepEqual(got, want) {
		t.Errorf("discarded: got %v, want %v", got, want)
	}
	// Reads through the ended view show the session.
	if got := session.Get(tx.Session(), n); got != 1 {
		t.Errorf("ended view: n = %d, want 1", got)
	}
}

// TestTxOthersShowThrough: events dispatched to the session by others while
// a transaction is open show in its view, stay when it is discarded, and
// come before its events when it commits.
func TestTxOthersShowThrough(t *testing.T) {
	for _, commit := range []bool{true, false} {
		t.Run(fmt.Sprintf("commit=%v", commit), func(t *testing.T) {
			sess, n, name := txSession(t)
			tx := sess.Begin()
			mustDispatch(t, tx.Session(), added{N: 10})
			done := make(chan error)
			go func() { done <- sess.Dispatch(added{N: 1}) }()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			mustDispatch(t, tx.Session(), renamed{Name: "mine"})
			if got := session.Get(tx.Session(), n); got != 11 {
				t.Errorf("view: n = %d, want 11 (the other event shows through)", got)
			}
			wantN, wantName, wantTypes := 1, "", "test.added"
			if commit {
				if err := tx.Commit(); err != nil {
					t.Fatal(err)
				}
				wantN, wantName, wantTypes = 11, "mine", "test.added test.added test.renamed"
			} else {
				tx.Discard()
			}
			if got := session.Get(sess, n); got != wantN {
				t.Errorf("n = %d, want %d", got, wantN)
			}
			if got := session.Get(sess, name); got != wantName {
				t.Errorf("name = %q, want %q", got, wantName)
			}
			var types []string
			for i, r := range sess.Events() {
				if r.Seq != uint64(i+1) {
					t.Errorf("event %d has seq %d", i+1, r.Seq)
				}
				types = append(types, r.Type)
			}
			if got := strings.Join(types, " "); got != wantTypes {
				t.Errorf("log: %s, want %s", got, wantTypes)
			}
		})
	}
}

func TestTxReducerFailures(t *testing.T) {
	sess := session.New()
	n := session.NewSlice("n", 0)
	mustOnErr(t, sess, n, func(v int, e added) (int, error) {
		if v+e.N > 10 {
			return v, errBoom
		}
		return v + e.N, nil
	})
	tx := sess.Begin()
	if err := tx.Session().Dispatch(added{N: 5}); err != nil {
		t.Fatalf("first: %v", err)
	}
	// The view's value is 5, so 5+6 fails as it would on the session.
	err := tx.Session().Dispatch(added{N: 6})
	if !errors.Is(err, errBoom) || len(reducerErrors(err)) != 1 {
		t.Fatalf("second: got %v, want the reducer's failure", err)
	}
	if got := session.Get(tx.Session(), n); got != 5 {
		t.Errorf("view: n = %d, want 5", got)
	}
	// The commit meets the same failure.
	if err := tx.Commit(); !errors.Is(err, errBoom) {
		t.Errorf("commit: got %v, want the reducer's failure", err)
	}
	if got := session.Get(sess, n); got != 5 {
		t.Errorf("after commit: n = %d, want 5", got)
	}
}

func TestTxEnds(t *testing.T) {
	sess, _, _ := txSession(t)
	tx := sess.Begin()
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := tx.Session().Dispatch(added{N: 1}); !errors.Is(err, session.ErrEnded) {
		t.Errorf("dispatch after commit: got %v, want an error saying the transaction ended", err)
	}
	if err := tx.Commit(); !errors.Is(err, session.ErrEnded) {
		t.Errorf("second commit: got %v, want session.ErrEnded", err)
	}
	if got := tx.Discard(); got != nil {
		t.Errorf("discard after commit: got %v, want nothing", got)
	}
	if got := sess.Seq(); got != 0 {
		t.Errorf("session seq %d, want 0", got)
	}
	view := sess.Begin().Session()
	if err := view.Restore(sess.Snapshot()); err == nil {
		t.Errorf("restore on a view: got nil error")
	}
	if err := view.ReplayLog(strings.NewReader("")); err == nil {
		t.Errorf("replay on a view: got nil error")
	}
}

func TestTxNested(t *testing.T) {
	sess, n, _ := txSession(t)
	outer := sess.Begin()
	mustDispatch(t, outer.Session(), added{N: 1})
	inner := outer.Session().Begin()
	mustDispatch(t, inner.Session(), added{N: 10})
	if got := session.Get(inner.Session(), n); got != 11 {
		t.Errorf("inner view: n = %d, want 11", got)
	}
	if err := inner.Commit(); err != nil {
		t.Fatal(err)
	}
	if got, s := session.Get(outer.Session(), n), session.Get(sess, n); got != 11 || s != 0 {
		t.Errorf("after the inner commit: outer view %d, session %d; want 11 and 0", got, s)
	}
	discarded := outer.Discard()
	if len(discarded) != 2 || session.Get(sess, n) != 0 || sess.Seq() != 0 {
		t.Errorf("after the outer discard: %d discarded, n %d, seq %d; want 2, 0, 0", len(discarded), session.Get(sess, n), sess.Seq())
	}

	// An inner transaction that commits after its outer one ended says so.
	outer = sess.Begin()
	inner = outer.Session().Begin()
	mustDispatch(t, inner.Session(), added{N: 1})
	if err := outer.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := inner.Commit(); !errors.Is(err, session.ErrEnded) {
		t.Errorf("inner commit after the outer one: got %v", err)
	}
}

// TestTxRegistersInTheSession: slices, reducers and event names are
// configuration: registered through a view, they are the session's.
func TestTxRegistersInTheSession(t *testing.T) {
	sess := session.New()
	view := sess.Begin().Session()
	n := session.NewSlice("n", 0)
	mustOn(t, view, n, func(v int, e added) int { return v + e.N })
	if err := session.RegisterEvent[added](view, "test.added"); err != nil {
		t.Fatal(err)
	}
	if !session.Registered(sess, n) || !session.Registered(view, n) {
		t.Errorf("registered through the view: session %v, view %v; want both", session.Registered(sess, n), session.Registered(view, n))
	}
	mustDispatch(t, view, added{N: 2})
	if got := session.Get(view, n); got != 2 {
		t.Errorf("view: n = %d, want 2", got)
	}
	if got := view.Events()[0].Type; got != "test.added" {
		t.Errorf("view event type %q, want test.added", got)
	}
}

// TestTxConcurrent commits and discards transactions while others dispatch
// and read; run it with -race. A transaction's events are seen all
// together or not at all, and the log holds exactly the committed ones
// and the direct ones.
func TestTxConcurrent(t *testing.T) {
	const workers, rounds = 6, 60
	sess, n, _ := txSession(t)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	readErr := make(chan error, 1)
	go func() {
		defer close(readErr)
		for {
			select {
			case <-stop:
				return
			default:
				runtime.Gosched()
			}
			// Each committed transaction adds 3 x 1000, each direct
			// dispatch 1 (fewer than 1000 in all): thousands that are not
			// a multiple of 3 show a half-applied commit.
			if v := session.Get(sess, n); v/1000%3 != 0 {
				readErr <- fmt.Errorf("read %d: half of a commit", v)
				return
			}
		}
	}()
	for w := range workers {
		wg.Go(func() {
			for i := range rounds {
				switch (w + i) % 3 {
				case 0:
					_ = sess.Dispatch(added{N: 1})
				default:
					tx := sess.Begin()
					for range 3 {
						_ = tx.Session().Dispatch(added{N: 1000})
					}
					if (w+i)%3 == 1 {
						_ = tx.Commit()
					} else {
						tx.Discard()
					}
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	if err := <-readErr; err != nil {
		t.Fatal(err)
	}
	direct, committed := 0, 0
	for w := range workers {
		for i := range rounds {
			switch (w + i) % 3 {
			case 0:
				direct++
			case 1:
				committed++
			}
		}
	}
	if got, want := session.Get(sess, n), direct+3000*committed; got != want {
		t.Errorf("n = %d, want %d", got, want)
	}
	if got, want := len(sess.Events()), direct+3*committed; got != want {
		t.Errorf("%d events logged, want %d", got, want)
	}
}
