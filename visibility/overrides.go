package visibility

import (
	"encoding/json"
	"fmt"
	"sort"
	"sync"

	"github.com/unfold-dev/unfold/session"
)

// Overrides maps dotted section paths to modes that win over selectors. It is
// an immutable value: With and Without return new values.
type Overrides struct {
	m map[string]Mode
}

// Mode returns the override for path, if any.
func (o Overrides) Mode(path string) (Mode, bool) {
	m, ok := o.m[path]
	return m, ok
}

// Len returns the number of overrides.
func (o Overrides) Len() int { return len(o.m) }

// Paths returns the overridden paths, sorted.
func (o Overrides) Paths() []string {
	ps := make([]string, 0, len(o.m))
	for p := range o.m {
		ps = append(ps, p)
	}
	sort.Strings(ps)
	return ps
}

// With returns o plus an override of path to m.
func (o Overrides) With(path string, m Mode) Overrides {
	n := make(map[string]Mode, len(o.m)+1)
	for k, v := range o.m {
		n[k] = v
	}
	n[path] = m
	return Overrides{m: n}
}

// Without returns o less any override of path.
func (o Overrides) Without(path string) Overrides {
	if _, ok := o.m[path]; !ok {
		return o
	}
	n := make(map[string]Mode, len(o.m))
	for k, v := range o.m {
		if k != path {
			n[k] = v
		}
	}
	return Overrides{m: n}
}

// MarshalJSON encodes the overrides as an object of path to mode.
func (o Overrides) MarshalJSON() ([]byte, error) {
	if o.m == nil {
		return []byte("{}"), nil
	}
	return json.Marshal(o.m)
}

// UnmarshalJSON decodes an object of path to mode.
func (o *Overrides) UnmarshalJSON(data []byte) error {
	var m map[string]Mode
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	*o = Overrides{m: m}
	return nil
}

// SetOverride makes the section at Path render as Mode.
type SetOverride struct {
	Path string `json:"path"`
	Mode Mode   `json:"mode"`
}

// ClearOverride removes the override of Path.
type ClearOverride struct {
	Path string `json:"path"`
}

// ClearAll removes every override.
type ClearAll struct{}

// Slice is the session slice that holds the overrides.
var Slice = session.NewSlice("visibility.overrides", Overrides{})

// Event names in a saved session log.
const (
	EventSet      = "visibility.set"
	EventClear    = "visibility.clear"
	EventClearAll = "visibility.clear_all"
)

// registerMu makes Register's check-then-install atomic.
var registerMu sync.Mutex

// Register installs the overrides slice, its reducers and its event names in
// sess. Calling it again on the same session does nothing. Override events
// dispatched before it are applied by it, in the order they were logged; an
// invalid one among them is returned as an error, the others still apply.
func Register(sess *session.Session) error {
	registerMu.Lock()
	defer registerMu.Unlock()
	if session.Registered(sess, Slice) {
		return nil
	}
	// Event names first: they are what can clash, and failing before the
	// slice is registered makes a later call report the clash again instead
	// of taking the session for set up.
	for _, err := range []error{
		session.RegisterEvent[SetOverride](sess, EventSet),
		session.RegisterEvent[ClearOverride](sess, EventClear),
		session.RegisterEvent[ClearAll](sess, EventClearAll),
	} {
		if err != nil {
			return err
		}
	}
	if err := session.Register(sess, Slice); err != nil {
		return err
	}
	// Events dispatched before this call are applied now, in log order, so
	// an override set before the first render is not lost; a failure among
	// them (an invalid mode) is returned. The reducers are registered
	// together, so that no reader sees the overrides with some kinds of
	// event applied and not the others (an override set, its clearing not
	// yet applied).
	return session.OnAll(sess, Slice,
		session.Reduce(func(o Overrides, e SetOverride) (Overrides, error) {
			if !e.Mode.valid() {
				return o, fmt.Errorf("invalid mode %d for %q", uint8(e.Mode), e.Path)
			}
			return o.With(e.Path, e.Mode), nil
		}),
		session.Reduce(func(o Overrides, e ClearOverride) (Overrides, error) { return o.Without(e.Path), nil }),
		session.Reduce(func(Overrides, ClearAll) (Overrides, error) { return Overrides{}, nil }),
	)
}

// Get returns the overrides in sess; none when sess is nil or has no
// overrides slice.
func Get(sess *session.Session) Overrides { return session.Get(sess, Slice) }
