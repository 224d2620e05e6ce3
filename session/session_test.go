package session_test

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/visibility"
)

// Events used across the tests.
type (
	added   struct{ N int }
	renamed struct{ Name string }
	orphan  struct{ Note string } // no reducer handles it
	boom    struct{}              // handled by reducers that fail
)

var errBoom = errors.New("boom")

// reducerErrors returns every *session.ReducerError in err's tree.
func reducerErrors(err error) []*session.ReducerError {
	var out []*session.ReducerError
	var walk func(error)
	walk = func(err error) {
		if re, ok := err.(*session.ReducerError); ok {
			out = append(out, re)
			return
		}
		switch u := err.(type) {
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				walk(e)
			}
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		}
	}
	if err != nil {
		walk(err)
	}
	return out
}

func mustOn[S, E any](t *testing.T, sess *session.Session, slice *session.Slice[S], f func(S, E) S) {
	t.Helper()
	if err := session.On(sess, slice, f); err != nil {
		t.Fatalf("On(%s): %v", slice.Name(), err)
	}
}

func mustOnErr[S, E any](t *testing.T, sess *session.Session, slice *session.Slice[S], f func(S, E) (S, error)) {
	t.Helper()
	if err := session.OnErr(sess, slice, f); err != nil {
		t.Fatalf("OnErr(%s): %v", slice.Name(), err)
	}
}

func mustDispatch(t *testing.T, sess *session.Session, events ...any) {
	t.Helper()
	for _, e := range events {
		if err := sess.Dispatch(e); err != nil {
			t.Fatalf("Dispatch(%#v): %v", e, err)
		}
	}
}

func TestReducerOrder(t *testing.T) {
	t.Run("same slice chains in registration order", func(t *testing.T) {
		sess := session.New()
		n := session.NewSlice("n", 1)
		mustOn(t, sess, n, func(v int, e added) int { return v * 2 })
		mustOn(t, sess, n, func(v int, e added) int { return v + e.N })
		mustDispatch(t, sess, added{N: 1})
		// (1*2)+1 = 3; the other order would give (1+1)*2 = 4.
		if got, want := session.Get(sess, n), 3; got != want {
			t.Errorf("got %d, want %d", got, want)
		}
	})
	t.Run("across slices in registration order", func(t *testing.T) {
		sess := session.New()
		var trace []string // written only inside Dispatch, which is serialized
		names := []string{"c", "a", "b", "a"}
		for i, name := range names {
			sl := session.NewSlice(name+fmt.Sprint(i), 0)
			mustOn(t, sess, sl, func(v int, e added) int {
				trace = append(trace, sl.Name())
				return v + e.N
			})
		}
		mustDispatch(t, sess, added{N: 1})
		want := []string{"c0", "a1", "b2", "a3"}
		if !slices.Equal(trace, want) {
			t.Errorf("got order %v, want %v", trace, want)
		}
	})
	t.Run("only reducers for the event type run", func(t *testing.T) {
		sess := session.New()
		n := session.NewSlice("n", 0)
		name := session.NewSlice("name", "")
		mustOn(t, sess, n, func(v int, e added) int { return v + e.N })
		mustOn(t, sess, name, func(_ string, e renamed) string { return e.Name })
		mustDispatch(t, sess, added{N: 5}, renamed{Name: "x"}, added{N: 2})
		if got, want := session.Get(sess, n), 7; got != want {
			t.Errorf("n: got %d, want %d", got, want)
		}
		if got, want := session.Get(sess, name), "x"; got != want {
			t.Errorf("name: got %q, want %q", got, want)
		}
	})
}

func TestFailingReducer(t *testing.T) {
	tests := []struct {
		name      string
		fail      func(int, boom) (int, error)
		wantCause string
		wantIs    error // when non-nil, errors.Is must find it
	}{
		{
			name:      "error",
			fail:      func(v int, _ boom) (int, error) { return v + 100, errBoom },
			wantCause: "boom",
			wantIs:    errBoom,
		},
		{
			name:      "panic",
			fail:      func(v int, _ boom) (int, error) { panic("kaput") },
			wantCause: "panic: kaput",
		},
		{
			name: "runtime panic",
			fail: func(v int, _ boom) (int, error) {
				var m map[string]int
				m["x"] = v // assignment to a nil map
				return v, nil
			},
			wantCause: "panic: assignment to entry in nil map",
		},
	}
	for _, registered := range []bool{true, false} {
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%s/registered=%v", tt.name, registered), func(t *testing.T) {
				sess := session.New()
				wantEvent := "session_test.boom"
				if registered {
					wantEvent = "test.boom"
					if err := session.RegisterEvent[boom](sess, wantEvent); err != nil {
						t.Fatal(err)
					}
				}
				a := session.NewSlice("a", 0)
				b := session.NewSlice("b", 0)
				c := session.NewSlice("c", 0)
				mustOn(t, sess, a, func(v int, _ boom) int { return v + 1 })
				mustOnErr(t, sess, b, tt.fail)
				mustOn(t, sess, c, func(v int, _ boom) int { return v + 1 })

				err := sess.Dispatch(boom{})
				if err == nil {
					t.Fatal("got nil error, want the reducer's failure")
				}
				var re *session.ReducerError
				if !errors.As(err, &re) {
					t.Fatalf("got %T %v, want a *session.ReducerError", err, err)
				}
				if re.Slice != "b" || re.Event != wantEvent {
					t.Errorf("got slice %q event %q, want slice %q event %q", re.Slice, re.Event, "b", wantEvent)
				}
				if !strings.Contains(re.Err.Error(), tt.wantCause) {
					t.Errorf("got cause %q, want it to contain %q", re.Err, tt.wantCause)
				}
				if want := fmt.Sprintf(`slice "b" on event %s`, wantEvent); !strings.Contains(err.Error(), want) {
					t.Errorf("got message %q, want it to contain %q", err, want)
				}
				if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
					t.Errorf("errors.Is(%v, %v) = false, want true", err, tt.wantIs)
				}
				got := []int{session.Get(sess, a), session.Get(sess, b), session.Get(sess, c)}
				if want := []int{1, 0, 1}; !slices.Equal(got, want) {
					t.Errorf("got a, b, c = %v, want %v", got, want)
				}
				if got := len(sess.Events()); got != 1 {
					t.Errorf("got %d logged events, want 1", got)
				}
				// The failing slice still accepts later events.
				mustOn(t, sess, b, func(v int, e added) int { return v + e.N })
				mustDispatch(t, sess, added{N: 7})
				if got := session.Get(sess, b); got != 7 {
					t.Errorf("after a later event: got b = %d, want 7", got)
				}
			})
		}
	}
	t.Run("every failure is returned", func(t *testing.T) {
		sess := session.New()
		a := session.NewSlice("a", 0)
		b := session.NewSlice("b", 0)
		c := session.NewSlice("c", 0)
		mustOnErr(t, sess, a, func(int, boom) (int, error) { return 0, errBoom })
		mustOn(t, sess, b, func(v int, _ boom) int { return v + 1 })
		mustOnErr(t, sess, c, func(int, boom) (int, error) { panic("c") })
		err := sess.Dispatch(boom{})
		var got []string
		for _, re := range reducerErrors(err) {
			got = append(got, re.Slice)
		}
		if want := []string{"a", "c"}; !slices.Equal(got, want) {
			t.Errorf("got failures for %v, want %v (err %v)", got, want, err)
		}
		if got := session.Get(sess, b); got != 1 {
			t.Errorf("got b = %d, want 1", got)
		}
	})
}

func TestUnhandledEventsAreLogged(t *testing.T) {
	sess := session.New()
	n := session.NewSlice("n", 0)
	mustOn(t, sess, n, func(v int, e added) int { return v + e.N })
	if err := session.RegisterEvent[renamed](sess, "test.renamed"); err != nil {
		t.Fatal(err)
	}
	mustDispatch(t, sess, orphan{Note: "hi"}, added{N: 1}, renamed{Name: "r"}, &orphan{Note: "ptr"})

	got := sess.Events()
	want := []struct {
		seq   uint64
		typ   string
		event any
	}{
		{1, "session_test.orphan", orphan{Note: "hi"}},
		{2, "session_test.added", added{N: 1}},
		{3, "test.renamed", renamed{Name: "r"}},
		{4, "*session_test.orphan", &orphan{Note: "ptr"}},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d records, want %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Seq != w.seq || g.Type != w.typ || !reflect.DeepEqual(g.Event, w.event) {
			t.Errorf("record %d: got {%d %s %#v}, want {%d %s %#v}", i, g.Seq, g.Type, g.Event, w.seq, w.typ, w.event)
		}
		if g.Time.IsZero() {
			t.Errorf("record %d: got zero time, want the dispatch time", i)
		}
	}
	if got := session.Get(sess, n); got != 1 {
		t.Errorf("got n = %d, want 1", got)
	}
	if got := sess.Seq(); got != 4 {
		t.Errorf("got Seq %d, want 4", got)
	}
}

func TestDispatchNil(t *testing.T) {
	sess := session.New()
	err := sess.Dispatch(nil)
	if err == nil || !strings.Contains(err.Error(), "nil event") {
		t.Errorf("got %v, want a nil event error", err)
	}
	if got := len(sess.Events()); got != 0 {
		t.Errorf("got %d logged events, want 0", got)
	}
}

func TestImmutability(t *testing.T) {
	t.Run("visibility overrides", func(t *testing.T) {
		sess := session.New()
		if err := visibility.Register(sess); err != nil {
			t.Fatal(err)
		}
		mustDispatch(t, sess, visibility.SetOverride{Path: "a", Mode: visibility.Summary})
		before := visibility.Get(sess)
		snap := sess.Snapshot()
		snapJSON := mustJSON(t, snap)

		mustDispatch(t, sess,
			visibility.SetOverride{Path: "a", Mode: visibility.Full},
			visibility.SetOverride{Path: "b", Mode: visibility.Summary},
			visibility.ClearOverride{Path: "a"},
		)
		mid := visibility.Get(sess)
		mustDispatch(t, sess, visibility.ClearAll{})

		if got, want := before.Paths(), []string{"a"}; !slices.Equal(got, want) {
			t.Errorf("before: got paths %v, want %v", got, want)
		}
		if m, _ := before.Mode("a"); m != visibility.Summary {
			t.Errorf("before: got a = %v, want SUMMARY", m)
		}
		if got, want := mid.Paths(), []string{"b"}; !slices.Equal(got, want) {
			t.Errorf("mid: got paths %v, want %v", got, want)
		}
		if got := visibility.Get(sess).Len(); got != 0 {
			t.Errorf("after ClearAll: got %d overrides, want 0", got)
		}
		if got := mustJSON(t, snap); got != snapJSON {
			t.Errorf("snapshot changed: got %s, want %s", got, snapJSON)
		}
	})
	t.Run("map slice with a copying reducer", func(t *testing.T) {
		sess := session.New()
		counts := session.NewSlice[map[string]int]("counts", nil)
		mustOn(t, sess, counts, func(old map[string]int, e renamed) map[string]int {
			next := make(map[string]int, len(old)+1)
			for k, v := range old {
				next[k] = v
			}
			next[e.Name]++
			return next
		})
		initial := session.Get(sess, counts)
		mustDispatch(t, sess, renamed{Name: "x"})
		first := session.Get(sess, counts)
		mustDispatch(t, sess, renamed{Name: "x"}, renamed{Name: "y"})
		last := session.Get(sess, counts)

		if initial != nil {
			t.Errorf("initial: got %v, want nil", initial)
		}
		if want := map[string]int{"x": 1}; !reflect.DeepEqual(first, want) {
			t.Errorf("first: got %v, want %v", first, want)
		}
		if want := map[string]int{"x": 2, "y": 1}; !reflect.DeepEqual(last, want) {
			t.Errorf("last: got %v, want %v", last, want)
		}
	})
}

func TestRegister(t *testing.T) {
	t.Run("same slice twice is a no-op", func(t *testing.T) {
		sess := session.New()
		n := session.NewSlice("n", 3)
		for range 2 {
			if err := session.Register(sess, n); err != nil {
				t.Fatal(err)
			}
		}
		if !session.Registered(sess, n) {
			t.Error("got Registered false, want true")
		}
		if got := sess.Snapshot().Slices(); !slices.Equal(got, []string{"n"}) {
			t.Errorf("got slices %v, want [n]", got)
		}
	})
	t.Run("another slice with the same name", func(t *testing.T) {
		sess := session.New()
		first := session.NewSlice("n", 3)
		second := session.NewSlice("n", "three")
		if err := session.Register(sess, first); err != nil {
			t.Fatal(err)
		}
		err := session.Register(sess, second)
		if err == nil || !strings.Contains(err.Error(), `"n"`) {
			t.Errorf("got %v, want an error naming the slice", err)
		}
		err = session.On(sess, second, func(s string, _ added) string { return s })
		if err == nil {
			t.Error("On with a clashing slice: got nil error, want one")
		}
		if session.Registered(sess, second) {
			t.Error("got Registered(second) true, want false")
		}
		if got := session.Get(sess, second); got != "three" {
			t.Errorf("Get(second): got %q, want its initial value", got)
		}
	})
	t.Run("Get without registration or session", func(t *testing.T) {
		n := session.NewSlice("n", 42)
		if got := session.Get(nil, n); got != 42 {
			t.Errorf("nil session: got %d, want 42", got)
		}
		if got := session.Get(session.New(), n); got != 42 {
			t.Errorf("unregistered: got %d, want 42", got)
		}
	})
	t.Run("NewSlice with empty name panics", func(t *testing.T) {
		defer func() {
			if recover() == nil {
				t.Error("got no panic, want one")
			}
		}()
		session.NewSlice("", 0)
	})
}

func TestRegisterEvent(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(*session.Session) error
		wantErr string // "" means success
	}{
		{
			name: "twice the same",
			setup: func(s *session.Session) error {
				if err := session.RegisterEvent[added](s, "added"); err != nil {
					return err
				}
				return session.RegisterEvent[added](s, "added")
			},
		},
		{
			name:    "empty name",
			setup:   func(s *session.Session) error { return session.RegisterEvent[added](s, "") },
			wantErr: "empty name",
		},
		{
			name: "name reused for another type",
			setup: func(s *session.Session) error {
				if err := session.RegisterEvent[added](s, "x"); err != nil {
					return err
				}
				return session.RegisterEvent[renamed](s, "x")
			},
			wantErr: `"x": name already used by session_test.added`,
		},
		{
			name: "type under another name",
			setup: func(s *session.Session) error {
				if err := session.RegisterEvent[added](s, "x"); err != nil {
					return err
				}
				return session.RegisterEvent[added](s, "y")
			},
			wantErr: `already registered as "x"`,
		},
		{
			name:    "interface type",
			setup:   func(s *session.Session) error { return session.RegisterEvent[fmt.Stringer](s, "stringer") },
			wantErr: "interface",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.setup(session.New())
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("got %v, want nil", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("got %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

// A reducer on an interface event type would never run: Dispatch looks
// reducers up by the event's dynamic type.
func TestOnInterfaceEvent(t *testing.T) {
	sess := session.New()
	n := session.NewSlice("n", 0)
	err := session.On(sess, n, func(v int, _ fmt.Stringer) int { return v + 1 })
	if err == nil || !strings.Contains(err.Error(), "interface") {
		t.Errorf("got %v, want an error saying the event type is an interface", err)
	}
}

// Slices of interface type may hold nil; reading, reducing and restoring
// them must work like any other value.
func TestInterfaceSlice(t *testing.T) {
	sess := session.New()
	last := session.NewSlice[error]("last", nil)
	anyv := session.NewSlice[any]("any", nil)
	mustOn(t, sess, last, func(old error, e renamed) error {
		if old != nil {
			return fmt.Errorf("%s after %w", e.Name, old)
		}
		return errors.New(e.Name)
	})
	mustOn(t, sess, anyv, func(old any, e added) any {
		if old == nil {
			return e.N
		}
		return old.(int) + e.N
	})
	if got := session.Get(sess, last); got != nil {
		t.Errorf("initial: got %v, want nil", got)
	}
	snap := sess.Snapshot()
	mustDispatch(t, sess, renamed{Name: "a"}, renamed{Name: "b"}, added{N: 2}, added{N: 3})
	if got := session.Get(sess, last); got == nil || got.Error() != "b after a" {
		t.Errorf("got %v, want %q", got, "b after a")
	}
	if got := session.Get(sess, anyv); got != 5 {
		t.Errorf("got %v, want 5", got)
	}
	after := sess.Snapshot()
	if err := sess.Restore(snap); err != nil {
		t.Fatalf("Restore(initial): %v", err)
	}
	if got := session.Get(sess, last); got != nil {
		t.Errorf("restored: got %v, want nil", got)
	}
	if err := sess.Restore(after); err != nil {
		t.Fatalf("Restore(after): %v", err)
	}
	if got := session.Get(sess, anyv); got != 5 {
		t.Errorf("restored: got %v, want 5", got)
	}
}

func TestLogLimit(t *testing.T) {
	sess := session.New(session.WithLogLimit(10))
	counter := session.NewSlice("test.count", 0)
	if err := session.On(sess, counter, func(n int, _ int) int { return n + 1 }); err != nil {
		t.Fatal(err)
	}
	if err := session.RegisterEvent[int](sess, "test.tick"); err != nil {
		t.Fatal(err)
	}
	for i := range 1000 {
		if err := sess.Dispatch(i); err != nil {
			t.Fatal(err)
		}
	}
	if got := session.Get(sess, counter); got != 1000 {
		t.Errorf("state: got %d events applied, want 1000", got)
	}
	ev := sess.Events()
	if len(ev) != 10 || ev[0].Seq != 991 || ev[9].Seq != 1000 {
		t.Errorf("got %d records from seq %d, want the newest 10 (991..1000)", len(ev), ev[0].Seq)
	}
	err := sess.WriteLog(io.Discard)
	if err == nil || !strings.Contains(err.Error(), "the oldest 990 events were dropped") {
		t.Errorf("WriteLog: got %v, want a refusal naming the dropped events", err)
	}
}
