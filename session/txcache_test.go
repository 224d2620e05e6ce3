package session_test

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/unfold-dev/unfold/session"
)

// step appends S to the trail: a reducer whose result depends on the
// order of the events, so a view that applied its staged events on top of
// a stale value of the session reads wrong.
type step struct{ S string }

func trailSession(t *testing.T) (*session.Session, *session.Slice[string]) {
	t.Helper()
	sess := session.New()
	trail := session.NewSlice("trail", "")
	mustOn(t, sess, trail, func(s string, e step) string { return s + e.S })
	return sess, trail
}

func wantTrail(t *testing.T, what string, sess *session.Session, trail *session.Slice[string], want string) {
	t.Helper()
	if got := session.Get(sess, trail); got != want {
		t.Errorf("%s: got %q, want %q", what, got, want)
	}
}

// TestTxViewFollowsTheSession: a view keeps the value it computed of its
// staged events; whatever changes the value it stages them on between two
// reads (an event dispatched to the session, a restore, a reducer
// registered later) shows in the second read, with the staged events
// applied after it, as a commit would apply them.
func TestTxViewFollowsTheSession(t *testing.T) {
	for _, tc := range []struct {
		name  string
		moves func(t *testing.T, sess *session.Session, trail *session.Slice[string], before session.Snapshot)
		want  string // the view's value after the moves
	}{
		{
			name: "dispatch",
			moves: func(t *testing.T, sess *session.Session, _ *session.Slice[string], _ session.Snapshot) {
				mustDispatch(t, sess, step{"d"})
			},
			want: "adbc",
		},
		{
			name: "restore",
			moves: func(t *testing.T, sess *session.Session, _ *session.Slice[string], before session.Snapshot) {
				if err := sess.Restore(before); err != nil {
					t.Fatal(err)
				}
			},
			want: "bc",
		},
		{
			name: "reducer for logged events registered",
			moves: func(t *testing.T, sess *session.Session, trail *session.Slice[string], _ session.Snapshot) {
				mustOn(t, sess, trail, func(s string, e step) string { return s + strings.ToUpper(e.S) })
			},
			want: "aAbBcC",
		},
		{
			name: "reducer for staged events registered",
			moves: func(t *testing.T, sess *session.Session, trail *session.Slice[string], _ session.Snapshot) {
				mustOn(t, sess, trail, func(s string, e added) string { return s + "+" })
			},
			want: "ab+c",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sess, trail := trailSession(t)
			before := sess.Snapshot()
			mustDispatch(t, sess, step{"a"})
			tx := sess.Begin()
			view := tx.Session()
			mustDispatch(t, view, step{"b"})
			wantTrail(t, "first read", view, trail, "ab")
			mustDispatch(t, view, added{N: 1}, step{"c"}) // no reducer of trail handles added
			wantTrail(t, "second read", view, trail, "abc")
			tc.moves(t, sess, trail, before)
			wantTrail(t, "after the session moved on", view, trail, tc.want)
			wantTrail(t, "read again", view, trail, tc.want)
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			wantTrail(t, "the session after the commit", sess, trail, tc.want)
			wantTrail(t, "the ended view", view, trail, tc.want)
		})
	}
}

// TestTxNestedViewsFollow: a view begun on a view reads what its parent
// shows now, including events staged in the parent after the inner view
// computed its value, and the parent reads what an inner commit staged in
// it.
func TestTxNestedViewsFollow(t *testing.T) {
	sess, trail := trailSession(t)
	mustDispatch(t, sess, step{"a"})
	outer := sess.Begin()
	mustDispatch(t, outer.Session(), step{"b"})
	inner := outer.Session().Begin()
	mustDispatch(t, inner.Session(), step{"c"})
	wantTrail(t, "inner", inner.Session(), trail, "abc")

	mustDispatch(t, outer.Session(), step{"d"})
	wantTrail(t, "inner after the outer staged d", inner.Session(), trail, "abdc")
	mustDispatch(t, sess, step{"e"})
	wantTrail(t, "inner after the session took e", inner.Session(), trail, "aebdc")
	wantTrail(t, "outer after the session took e", outer.Session(), trail, "aebd")

	other := outer.Session().Begin()
	mustDispatch(t, other.Session(), step{"x"})
	wantTrail(t, "a second inner view", other.Session(), trail, "aebdx")
	other.Discard()
	wantTrail(t, "outer after the second inner discarded", outer.Session(), trail, "aebd")

	if err := inner.Commit(); err != nil {
		t.Fatal(err)
	}
	wantTrail(t, "outer after the inner commit", outer.Session(), trail, "aebdc")
	mustDispatch(t, outer.Session(), step{"f"})
	wantTrail(t, "outer after staging f", outer.Session(), trail, "aebdcf")
	idle := outer.Session().Begin()
	wantTrail(t, "a view that staged nothing", idle.Session(), trail, "aebdcf")
	mustDispatch(t, sess, step{"g"})
	wantTrail(t, "the idle view after the session took g", idle.Session(), trail, "aegbdcf")
	if err := outer.Commit(); err != nil {
		t.Fatal(err)
	}
	wantTrail(t, "the session after the commits", sess, trail, "aegbdcf")
	if got := len(sess.Events()); got != 7 {
		t.Errorf("the log holds %d events, want 7", got)
	}
}

// TestTxViewReadConcurrently: goroutines reading one view (and a view
// begun on it) at once, while the session takes events, each read the
// staged events on top of the session as it was at that read; run it with
// -race.
func TestTxViewReadConcurrently(t *testing.T) {
	const readers, rounds = 4, 200
	sess, trail := trailSession(t)
	outer := sess.Begin()
	mustDispatch(t, outer.Session(), step{"b"})
	inner := outer.Session().Begin()
	mustDispatch(t, inner.Session(), step{"c"})
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, readers)
	for r := range readers {
		view := []*session.Session{outer.Session(), inner.Session()}[r%2]
		suffix := []string{"b", "bc"}[r%2]
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				got := session.Get(view, trail)
				if strings.Trim(got[:len(got)-len(suffix)], "a") != "" || !strings.HasSuffix(got, suffix) {
					errs <- fmt.Errorf("read %q, want a run of a then %s", got, suffix)
					return
				}
			}
		})
	}
	for range rounds {
		mustDispatch(t, sess, step{"a"})
		runtime.Gosched()
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	wantTrail(t, "inner at the end", inner.Session(), trail, strings.Repeat("a", rounds)+"bc")
}
