package visibility_test

import (
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/visibility"
)

type docParams struct{ Short bool }

// verbose is session state a selector reads.
var verbose = session.NewSlice("test.verbose", false)

type setVerbose struct{ On bool }

func paramsSel(p docParams) visibility.Mode {
	if p.Short {
		return visibility.Summary
	}
	return visibility.Full
}

func sessionSel(sess *session.Session) visibility.Mode {
	if session.Get(sess, verbose) {
		return visibility.Full
	}
	return visibility.Summary
}

// newSession returns a session with the overrides registered, an override of
// "doc.api" to mode when override is non-nil, and verbose set to on.
func newSession(t *testing.T, override *visibility.Mode, on bool) *session.Session {
	t.Helper()
	sess := session.New()
	if err := visibility.Register(sess); err != nil {
		t.Fatal(err)
	}
	if err := session.On(sess, verbose, func(_ bool, e setVerbose) bool { return e.On }); err != nil {
		t.Fatal(err)
	}
	events := []any{setVerbose{On: on}}
	if override != nil {
		events = append(events, visibility.SetOverride{Path: "doc.api", Mode: *override})
	}
	for _, e := range events {
		if err := sess.Dispatch(e); err != nil {
			t.Fatal(err)
		}
	}
	return sess
}

func TestResolve(t *testing.T) {
	full, summary := visibility.Full, visibility.Summary
	tests := []struct {
		name     string
		override *visibility.Mode // of doc.api
		verbose  bool
		noSess   bool
		path     string // default doc.api
		sel      visibility.Selector
		params   any
		wantMode visibility.Mode
		wantWhy  visibility.Why
	}{
		{name: "nil selector is full, declared", sel: nil, wantMode: full, wantWhy: visibility.Declared},
		{name: "nil selector without a session", noSess: true, wantMode: full, wantWhy: visibility.Declared},
		{name: "constant summary", sel: visibility.Const(summary), wantMode: summary, wantWhy: visibility.Declared},
		{name: "constant full", sel: visibility.Const(full), wantMode: full, wantWhy: visibility.Declared},
		{name: "params selector", sel: visibility.FromParams(paramsSel), params: docParams{Short: true}, wantMode: summary, wantWhy: visibility.Selected},
		{name: "params selector, other params", sel: visibility.FromParams(paramsSel), params: docParams{}, wantMode: full, wantWhy: visibility.Selected},
		{name: "session selector", sel: visibility.FromSession(sessionSel), wantMode: summary, wantWhy: visibility.Selected},
		{name: "session selector reads state", verbose: true, sel: visibility.FromSession(sessionSel), wantMode: full, wantWhy: visibility.Selected},
		{name: "session selector without a session", noSess: true, sel: visibility.FromSession(sessionSel), wantMode: summary, wantWhy: visibility.Selected},
		{name: "override beats nil selector", override: &summary, sel: nil, wantMode: summary, wantWhy: visibility.Overridden},
		{name: "override beats constant", override: &full, sel: visibility.Const(summary), wantMode: full, wantWhy: visibility.Overridden},
		{name: "override beats params selector", override: &full, sel: visibility.FromParams(paramsSel), params: docParams{Short: true}, wantMode: full, wantWhy: visibility.Overridden},
		{name: "override beats session selector", override: &summary, verbose: true, sel: visibility.FromSession(sessionSel), wantMode: summary, wantWhy: visibility.Overridden},
		{name: "override of another path", override: &full, path: "doc", sel: visibility.Const(summary), wantMode: summary, wantWhy: visibility.Declared},
		{name: "override of a child path", override: &full, path: "doc.api.v2", sel: visibility.Const(summary), wantMode: summary, wantWhy: visibility.Declared},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sess *session.Session
			if !tt.noSess {
				sess = newSession(t, tt.override, tt.verbose)
			}
			path := tt.path
			if path == "" {
				path = "doc.api"
			}
			m, why, err := visibility.Resolve(sess, path, tt.sel, tt.params)
			if err != nil {
				t.Fatalf("got error %v, want nil", err)
			}
			if m != tt.wantMode || why != tt.wantWhy {
				t.Errorf("got %v (%v), want %v (%v)", m, why, tt.wantMode, tt.wantWhy)
			}
			m, why, err = visibility.Get(sess).Resolve(sess, path, tt.sel, tt.params)
			if err != nil || m != tt.wantMode || why != tt.wantWhy {
				t.Errorf("Overrides.Resolve: got %v (%v), %v, want %v (%v)", m, why, err, tt.wantMode, tt.wantWhy)
			}
		})
	}
}

// Overrides.Resolve uses the overrides it was called on, not the session's
// current ones.
func TestOverridesResolve(t *testing.T) {
	summary := visibility.Summary
	sess := newSession(t, &summary, false)
	read := visibility.Get(sess)
	if err := sess.Dispatch(visibility.ClearAll{}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		o        visibility.Overrides
		wantMode visibility.Mode
		wantWhy  visibility.Why
	}{
		{"overrides read before ClearAll", read, visibility.Summary, visibility.Overridden},
		{"overrides read after ClearAll", visibility.Get(sess), visibility.Full, visibility.Declared},
		{"zero overrides", visibility.Overrides{}, visibility.Full, visibility.Declared},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, why, err := tt.o.Resolve(sess, "doc.api", visibility.Const(visibility.Full), nil)
			if err != nil || m != tt.wantMode || why != tt.wantWhy {
				t.Errorf("got %v (%v), %v, want %v (%v)", m, why, err, tt.wantMode, tt.wantWhy)
			}
		})
	}
}

type nilSel struct{ sel visibility.Selector }

func (n *nilSel) Select(p any, s *session.Session) visibility.Mode { return n.sel.Select(p, s) }

func TestResolveErrors(t *testing.T) {
	tests := []struct {
		name    string
		sel     visibility.Selector
		params  any
		wantErr string
	}{
		{
			name:    "params selector panics",
			sel:     visibility.FromParams(func(docParams) visibility.Mode { panic("no docs") }),
			params:  docParams{},
			wantErr: `visibility: selector for "doc.api" panicked: no docs`,
		},
		{
			name:    "session selector panics",
			sel:     visibility.FromSession(func(*session.Session) visibility.Mode { panic("no state") }),
			wantErr: `visibility: selector for "doc.api" panicked: no state`,
		},
		{
			name:    "params of the wrong type",
			sel:     visibility.FromParams(paramsSel),
			params:  struct{ Other int }{},
			wantErr: `visibility: selector for "doc.api" panicked: visibility: selector wants params visibility_test.docParams, got struct { Other int }`,
		},
		{
			name:    "no params",
			sel:     visibility.FromParams(paramsSel),
			wantErr: `visibility: selector for "doc.api" panicked: visibility: selector wants params visibility_test.docParams, got <nil>`,
		},
		{
			name:    "nil function",
			sel:     visibility.FromSession(nil),
			wantErr: `visibility: selector for "doc.api" panicked: runtime error: invalid memory address or nil pointer dereference`,
		},
		{
			name:    "nil selector value inside an interface",
			sel:     (*nilSel)(nil),
			wantErr: `visibility: selector for "doc.api" panicked: runtime error: invalid memory address or nil pointer dereference`,
		},
		{
			name:    "selector returns an invalid mode",
			sel:     visibility.FromSession(func(*session.Session) visibility.Mode { return 3 }),
			wantErr: `visibility: selector for "doc.api" returned invalid mode 3`,
		},
		{
			name:    "constant of an invalid mode",
			sel:     visibility.Const(visibility.Mode(4)),
			wantErr: `visibility: selector for "doc.api" returned invalid mode 4`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sess := newSession(t, nil, false)
			m, _, err := visibility.Resolve(sess, "doc.api", tt.sel, tt.params)
			if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
				t.Errorf("got %v, want an error starting %q", err, tt.wantErr)
			}
			if m != visibility.Full {
				t.Errorf("got mode %v with the error, want FULL", m)
			}
		})
	}
	t.Run("override of an invalid mode", func(t *testing.T) {
		sess := session.New()
		// A reducer outside this package can put any value in the slice.
		type force struct{}
		err := session.On(sess, visibility.Slice, func(o visibility.Overrides, _ force) visibility.Overrides {
			return o.With("doc.api", visibility.Mode(5))
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := sess.Dispatch(force{}); err != nil {
			t.Fatal(err)
		}
		_, _, err = visibility.Resolve(sess, "doc.api", nil, nil)
		if want := `visibility: override for "doc.api" has invalid mode 5`; err == nil || err.Error() != want {
			t.Errorf("got %v, want %q", err, want)
		}
	})
}
