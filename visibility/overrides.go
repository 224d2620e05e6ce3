package visibility

import (
	"encoding/json"
	"fmt"
	"hash/maphash"
	"sort"
	"sync"

	"github.com/benbjohnson/immutable"

	"github.com/unfold-dev/unfold/session"
)

// Overrides maps dotted section paths to modes that win over selectors. It is
// an immutable value: With and Without return new values, and a value held
// (by a session's earlier state, say) never changes. They share what did
// not change with o (a hash array mapped trie), so that an override costs
// the same however many a session holds: a copy of the whole map each time
// made a session of n overrides cost n² to build, and again to replay.
type Overrides struct {
	m *immutable.Map[string, Mode] // nil when there are none
}

// pathHasher hashes paths for Overrides' trie with the runtime's hash.
type pathHasher struct{}

var pathSeed = maphash.MakeSeed()

func (pathHasher) Hash(p string) uint32   { return uint32(maphash.String(pathSeed, p)) }
func (pathHasher) Equal(a, b string) bool { return a == b }

// Mode returns the override for path, if any.
func (o Overrides) Mode(path string) (Mode, bool) {
	if o.m == nil {
		return 0, false
	}
	return o.m.Get(path)
}

// Len returns the number of overrides.
func (o Overrides) Len() int {
	if o.m == nil {
		return 0
	}
	return o.m.Len()
}

// Paths returns the overridden paths, sorted.
func (o Overrides) Paths() []string {
	ps := make([]string, 0, o.Len())
	if o.m != nil {
		for it := o.m.Iterator(); !it.Done(); {
			p, _, _ := it.Next()
			ps = append(ps, p)
		}
	}
	sort.Strings(ps)
	return ps
}

// With returns o plus an override of path to m.
func (o Overrides) With(path string, m Mode) Overrides {
	if o.m == nil {
		o.m = immutable.NewMap[string, Mode](pathHasher{})
	}
	return Overrides{m: o.m.Set(path, m)}
}

// Without returns o less any override of path.
func (o Overrides) Without(path string) Overrides {
	if o.m == nil {
		return o
	}
	n := o.m.Delete(path)
	if n.Len() == 0 {
		return Overrides{}
	}
	return Overrides{m: n}
}

// MarshalJSON encodes the overrides as an object of path to mode.
func (o Overrides) MarshalJSON() ([]byte, error) {
	m := make(map[string]Mode, o.Len())
	if o.m != nil {
		for it := o.m.Iterator(); !it.Done(); {
			p, v, _ := it.Next()
			m[p] = v
		}
	}
	return json.Marshal(m)
}

// UnmarshalJSON decodes an object of path to mode.
func (o *Overrides) UnmarshalJSON(data []byte) error {
	var m map[string]Mode
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	if len(m) == 0 {
		*o = Overrides{}
		return nil
	}
	b := immutable.NewMapBuilder[string, Mode](pathHasher{})
	for p, v := range m {
		b.Set(p, v)
	}
	*o = Overrides{m: b.Map()}
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
