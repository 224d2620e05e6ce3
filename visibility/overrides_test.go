package visibility_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/visibility"
)

// modes renders overrides as "path=MODE" in path order.
func modes(o visibility.Overrides) []string {
	var out []string
	for _, p := range o.Paths() {
		m, _ := o.Mode(p)
		out = append(out, p+"="+m.String())
	}
	return out
}

func registered(t *testing.T) *session.Session {
	t.Helper()
	sess := session.New()
	if err := visibility.Register(sess); err != nil {
		t.Fatal(err)
	}
	return sess
}

func TestEvents(t *testing.T) {
	full, summary := visibility.Full, visibility.Summary
	tests := []struct {
		name   string
		events []any
		want   []string
	}{
		{"none", nil, nil},
		{"set", []any{visibility.SetOverride{Path: "a", Mode: summary}}, []string{"a=SUMMARY"}},
		{"set replaces", []any{
			visibility.SetOverride{Path: "a", Mode: summary},
			visibility.SetOverride{Path: "a", Mode: full},
		}, []string{"a=FULL"}},
		{"set several", []any{
			visibility.SetOverride{Path: "b.c", Mode: full},
			visibility.SetOverride{Path: "a", Mode: summary},
			visibility.SetOverride{Path: "b", Mode: summary},
		}, []string{"a=SUMMARY", "b=SUMMARY", "b.c=FULL"}},
		{"clear one", []any{
			visibility.SetOverride{Path: "a", Mode: summary},
			visibility.SetOverride{Path: "a.b", Mode: summary},
			visibility.ClearOverride{Path: "a"},
		}, []string{"a.b=SUMMARY"}},
		{"clear an absent path", []any{
			visibility.SetOverride{Path: "a", Mode: summary},
			visibility.ClearOverride{Path: "zzz"},
		}, []string{"a=SUMMARY"}},
		{"clear all", []any{
			visibility.SetOverride{Path: "a", Mode: summary},
			visibility.SetOverride{Path: "b", Mode: full},
			visibility.ClearAll{},
		}, nil},
		{"set after clear all", []any{
			visibility.SetOverride{Path: "a", Mode: summary},
			visibility.ClearAll{},
			visibility.SetOverride{Path: "b", Mode: full},
		}, []string{"b=FULL"}},
		{"clear all when empty", []any{visibility.ClearAll{}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sess := registered(t)
			for _, e := range tt.events {
				if err := sess.Dispatch(e); err != nil {
					t.Fatalf("Dispatch(%#v): %v", e, err)
				}
			}
			if got := modes(visibility.Get(sess)); !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
			if got := visibility.Get(sess).Len(); got != len(tt.want) {
				t.Errorf("got Len %d, want %d", got, len(tt.want))
			}
		})
	}
}

func TestSetOverrideInvalidMode(t *testing.T) {
	sess := registered(t)
	if err := sess.Dispatch(visibility.SetOverride{Path: "a", Mode: visibility.Summary}); err != nil {
		t.Fatal(err)
	}
	err := sess.Dispatch(visibility.SetOverride{Path: "a", Mode: visibility.Mode(2)})
	var re *session.ReducerError
	if !errors.As(err, &re) {
		t.Fatalf("got %v, want a *session.ReducerError", err)
	}
	if re.Slice != "visibility.overrides" || re.Event != visibility.EventSet {
		t.Errorf("got slice %q event %q, want %q %q", re.Slice, re.Event, "visibility.overrides", visibility.EventSet)
	}
	if want := `invalid mode 2 for "a"`; !strings.Contains(err.Error(), want) {
		t.Errorf("got %q, want it to contain %q", err, want)
	}
	if got, want := modes(visibility.Get(sess)), []string{"a=SUMMARY"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v (unchanged)", got, want)
	}
}

func TestRegisterIdempotent(t *testing.T) {
	sess := session.New()
	for range 3 {
		if err := visibility.Register(sess); err != nil {
			t.Fatal(err)
		}
	}
	// Every reducer for the event fails on an invalid mode, so the number of
	// failures counts the reducers.
	err := sess.Dispatch(visibility.SetOverride{Path: "a", Mode: visibility.Mode(2)})
	if got := countReducerErrors(err); got != 1 {
		t.Errorf("got %d reducer failures, want 1 (err %v)", got, err)
	}
	if err := sess.Dispatch(visibility.SetOverride{Path: "a", Mode: visibility.Summary}); err != nil {
		t.Fatal(err)
	}
	if got, want := modes(visibility.Get(sess)), []string{"a=SUMMARY"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if got := len(sess.Events()); got != 2 {
		t.Errorf("got %d events, want 2", got)
	}
	if got, want := sess.Snapshot().Slices(), []string{"visibility.overrides"}; !slices.Equal(got, want) {
		t.Errorf("got slices %v, want %v", got, want)
	}
}

func countReducerErrors(err error) int {
	if err == nil {
		return 0
	}
	if _, ok := err.(*session.ReducerError); ok {
		return 1
	}
	n := 0
	if u, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range u.Unwrap() {
			n += countReducerErrors(e)
		}
	}
	return n
}

// shadowSet takes one of the overrides' event names before Register runs.
type shadowSet struct{}

func TestRegisterConflict(t *testing.T) {
	sess := session.New()
	if err := session.RegisterEvent[shadowSet](sess, visibility.EventSet); err != nil {
		t.Fatal(err)
	}
	for i := range 2 { // a second call must not hide the conflict
		err := visibility.Register(sess)
		if want := `"visibility.set"`; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("call %d: got %v, want an error naming %s", i+1, err, want)
		}
	}
	if session.Registered(sess, visibility.Slice) {
		t.Error("got the slice registered after a failed Register, want not")
	}
}

func TestGet(t *testing.T) {
	if got := visibility.Get(nil).Len(); got != 0 {
		t.Errorf("nil session: got %d overrides, want 0", got)
	}
	if got := visibility.Get(session.New()).Len(); got != 0 {
		t.Errorf("unregistered: got %d overrides, want 0", got)
	}
	if _, ok := visibility.Get(nil).Mode("a"); ok {
		t.Error("nil session: got an override, want none")
	}
}

func TestOverridesValue(t *testing.T) {
	var zero visibility.Overrides
	one := zero.With("a", visibility.Summary)
	two := one.With("b", visibility.Full)
	changed := two.With("a", visibility.Full)
	less := two.Without("a")
	same := two.Without("absent")

	tests := []struct {
		name string
		o    visibility.Overrides
		want []string
	}{
		{"zero", zero, nil},
		{"one", one, []string{"a=SUMMARY"}},
		{"two", two, []string{"a=SUMMARY", "b=FULL"}},
		{"changed", changed, []string{"a=FULL", "b=FULL"}},
		{"less", less, []string{"b=FULL"}},
		{"same", same, []string{"a=SUMMARY", "b=FULL"}},
		{"zero without", zero.Without("a"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := modes(tt.o); !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestOverridesJSON(t *testing.T) {
	tests := []struct {
		name string
		o    visibility.Overrides
		want string
	}{
		{"zero", visibility.Overrides{}, `{}`},
		{"some", visibility.Overrides{}.With("b", visibility.Full).With("a.x", visibility.Summary), `{"a.x":"summary","b":"full"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := json.Marshal(tt.o)
			if err != nil || string(data) != tt.want {
				t.Fatalf("got %s, %v, want %s", data, err, tt.want)
			}
			var back visibility.Overrides
			if err := json.Unmarshal(data, &back); err != nil {
				t.Fatal(err)
			}
			if got, want := modes(back), modes(tt.o); !slices.Equal(got, want) {
				t.Errorf("round trip: got %v, want %v", got, want)
			}
		})
	}
	t.Run("bad mode", func(t *testing.T) {
		var o visibility.Overrides
		err := json.Unmarshal([]byte(`{"a":"half"}`), &o)
		if want := `visibility: unknown mode "half"`; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want an error containing %q", err, want)
		}
	})
	t.Run("not an object", func(t *testing.T) {
		var o visibility.Overrides
		if err := json.Unmarshal([]byte(`["a"]`), &o); err == nil {
			t.Error("got nil error, want one")
		}
	})
}

// TestSaveResume saves a session's log and resumes it in a fresh session.
func TestSaveResume(t *testing.T) {
	sess := registered(t)
	for _, e := range []any{
		visibility.SetOverride{Path: "a", Mode: visibility.Summary},
		visibility.SetOverride{Path: "b", Mode: visibility.Full},
		visibility.ClearOverride{Path: "a"},
		visibility.ClearAll{},
		visibility.SetOverride{Path: "c.d", Mode: visibility.Summary},
	} {
		if err := sess.Dispatch(e); err != nil {
			t.Fatal(err)
		}
	}
	var saved strings.Builder
	if err := sess.WriteLog(&saved); err != nil {
		t.Fatal(err)
	}
	resumed := registered(t)
	if err := resumed.ReplayLog(strings.NewReader(saved.String())); err != nil {
		t.Fatal(err)
	}
	if got, want := modes(visibility.Get(resumed)), []string{"c.d=SUMMARY"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	var types []string
	for _, r := range resumed.Events() {
		types = append(types, r.Type)
	}
	want := []string{visibility.EventSet, visibility.EventSet, visibility.EventClear, visibility.EventClearAll, visibility.EventSet}
	if !slices.Equal(types, want) {
		t.Errorf("got event types %v, want %v", types, want)
	}
}
