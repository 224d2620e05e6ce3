package session_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/visibility"
)

var (
	countSlice = session.NewSlice("count", 0)
	nameSlice  = session.NewSlice("name", "anon")
	tagsSlice  = session.NewSlice[[]string]("tags", nil)
)

// newCounter returns a session with the count, name and tags slices, their
// reducers and the visibility overrides, event names registered.
func newCounter(t *testing.T, opts ...session.Option) *session.Session {
	t.Helper()
	sess := session.New(opts...)
	if err := visibility.Register(sess); err != nil {
		t.Fatal(err)
	}
	mustOn(t, sess, countSlice, func(v int, e added) int { return v + e.N })
	mustOn(t, sess, nameSlice, func(_ string, e renamed) string { return e.Name })
	mustOn(t, sess, tagsSlice, func(old []string, e renamed) []string {
		return append(slices.Clip(old), e.Name)
	})
	mustOnErr(t, sess, countSlice, func(v int, _ boom) (int, error) { return v, errBoom })
	for _, err := range []error{
		session.RegisterEvent[added](sess, "test.added"),
		session.RegisterEvent[renamed](sess, "test.renamed"),
		session.RegisterEvent[boom](sess, "test.boom"),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return sess
}

// state is everything a test session holds, in comparable form.
type state struct {
	Count     int
	Name      string
	Tags      []string
	Overrides string
}

func stateOf(t *testing.T, sess *session.Session) state {
	t.Helper()
	return state{
		Count:     session.Get(sess, countSlice),
		Name:      session.Get(sess, nameSlice),
		Tags:      session.Get(sess, tagsSlice),
		Overrides: mustJSON(t, visibility.Get(sess)),
	}
}

func (s state) equal(o state) bool {
	return s.Count == o.Count && s.Name == o.Name && slices.Equal(s.Tags, o.Tags) && s.Overrides == o.Overrides
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %T: %v", v, err)
	}
	return string(b)
}

func TestSnapshotRestore(t *testing.T) {
	t.Run("round trip", func(t *testing.T) {
		sess := newCounter(t)
		mustDispatch(t, sess, added{N: 2}, renamed{Name: "a"}, visibility.SetOverride{Path: "x.y", Mode: visibility.Summary})
		snap := sess.Snapshot()
		want := stateOf(t, sess)
		mustDispatch(t, sess, added{N: 5}, renamed{Name: "b"}, visibility.ClearAll{})
		if err := sess.Restore(snap); err != nil {
			t.Fatal(err)
		}
		if got := stateOf(t, sess); !got.equal(want) {
			t.Errorf("got %+v, want %+v", got, want)
		}
		if got := snap.Seq(); got != 3 {
			t.Errorf("got snapshot seq %d, want 3", got)
		}
		if got := len(sess.Events()); got != 6 {
			t.Errorf("got %d events after restore, want 6 (the log is not rewound)", got)
		}
		if got, want := snap.Slices(), []string{"count", "name", "tags", "visibility.overrides"}; !slices.Equal(got, want) {
			t.Errorf("got slices %v, want %v", got, want)
		}
	})
	t.Run("unmentioned slices go back to initial", func(t *testing.T) {
		small := session.New()
		mustOn(t, small, countSlice, func(v int, e added) int { return v + e.N })
		mustDispatch(t, small, added{N: 9})
		sess := newCounter(t)
		mustDispatch(t, sess, added{N: 1}, renamed{Name: "b"})
		if err := sess.Restore(small.Snapshot()); err != nil {
			t.Fatal(err)
		}
		want := state{Count: 9, Name: "anon", Overrides: "{}"}
		if got := stateOf(t, sess); !got.equal(want) {
			t.Errorf("got %+v, want %+v", got, want)
		}
	})
	t.Run("zero snapshot resets everything", func(t *testing.T) {
		sess := newCounter(t)
		mustDispatch(t, sess, added{N: 1}, renamed{Name: "b"})
		if err := sess.Restore(session.Snapshot{}); err != nil {
			t.Fatal(err)
		}
		want := state{Count: 0, Name: "anon", Overrides: "{}"}
		if got := stateOf(t, sess); !got.equal(want) {
			t.Errorf("got %+v, want %+v", got, want)
		}
	})

	errTests := []struct {
		name    string
		from    func(t *testing.T) session.Snapshot
		wantErr string
	}{
		{
			name: "session lacks a slice",
			from: func(t *testing.T) session.Snapshot {
				big := newCounter(t)
				extra := session.NewSlice("extra", 1)
				if err := session.Register(big, extra); err != nil {
					t.Fatal(err)
				}
				mustDispatch(t, big, added{N: 100})
				return big.Snapshot()
			},
			wantErr: `session: restore: slice "extra" is not registered in this session`,
		},
		{
			name: "slice of another type",
			from: func(t *testing.T) session.Snapshot {
				other := session.New()
				if err := session.Register(other, session.NewSlice("count", "not an int")); err != nil {
					t.Fatal(err)
				}
				return other.Snapshot()
			},
			wantErr: `session: restore: slice "count" holds string, want int`,
		},
	}
	for _, tt := range errTests {
		t.Run(tt.name, func(t *testing.T) {
			snap := tt.from(t)
			sess := newCounter(t)
			mustDispatch(t, sess, added{N: 3}, renamed{Name: "kept"}, visibility.SetOverride{Path: "p", Mode: visibility.Summary})
			want := stateOf(t, sess)
			err := sess.Restore(snap)
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("got error %v, want %q", err, tt.wantErr)
			}
			if got := stateOf(t, sess); !got.equal(want) {
				t.Errorf("state changed: got %+v, want %+v", got, want)
			}
		})
	}
}

func TestSnapshotJSON(t *testing.T) {
	sess := newCounter(t)
	mustDispatch(t, sess,
		added{N: 4},
		renamed{Name: "a"},
		renamed{Name: "b"},
		visibility.SetOverride{Path: "x", Mode: visibility.Summary},
		visibility.SetOverride{Path: "y.z", Mode: visibility.Full},
	)
	want := stateOf(t, sess)
	data, err := json.Marshal(sess.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	const wantJSON = `{"seq":5,"slices":{"count":4,"name":"b","tags":["a","b"],"visibility.overrides":{"x":"summary","y.z":"full"}}}`
	if string(data) != wantJSON {
		t.Errorf("got %s, want %s", data, wantJSON)
	}

	fresh := newCounter(t)
	snap, err := fresh.DecodeSnapshot(data)
	if err != nil {
		t.Fatal(err)
	}
	if got := snap.Seq(); got != 5 {
		t.Errorf("got seq %d, want 5", got)
	}
	if err := fresh.Restore(snap); err != nil {
		t.Fatal(err)
	}
	if got := stateOf(t, fresh); !got.equal(want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if m, ok := visibility.Get(fresh).Mode("x"); !ok || m != visibility.Summary {
		t.Errorf("got override x = %v, %v, want SUMMARY, true", m, ok)
	}

	decodeErrs := []struct {
		name, data, wantErr string
	}{
		{"not JSON", `{"seq":`, "session: decode snapshot: unexpected end of JSON input"},
		{"unregistered slice", `{"seq":1,"slices":{"nope":1}}`, `session: decode snapshot: slice "nope" is not registered in this session`},
		{"wrong value type", `{"seq":1,"slices":{"count":"four"}}`, `session: decode snapshot: slice "count": json: cannot unmarshal string`},
		{"bad mode", `{"seq":1,"slices":{"visibility.overrides":{"x":"half"}}}`, `session: decode snapshot: slice "visibility.overrides": visibility: unknown mode "half"`},
	}
	for _, tt := range decodeErrs {
		t.Run(tt.name, func(t *testing.T) {
			_, err := fresh.DecodeSnapshot([]byte(tt.data))
			if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
				t.Errorf("got %v, want an error starting %q", err, tt.wantErr)
			}
		})
	}
}
