package visibility

import (
	"fmt"

	"github.com/unfold-dev/unfold/session"
)

// Selector computes a section's mode when no session override applies.
// The zero Selector (nil) means FULL, declared.
type Selector interface {
	// Select returns the mode for a section bound to params in sess (which may
	// be nil). It must be a pure function of its inputs: rendering calls it
	// from many goroutines.
	Select(params any, sess *session.Session) Mode
}

// Constant is a Selector that always returns its mode.
type Constant Mode

// Select returns the constant mode.
func (c Constant) Select(any, *session.Session) Mode { return Mode(c) }

// Const returns a selector that always answers m.
func Const(m Mode) Selector { return Constant(m) }

type paramsFunc[P any] func(P) Mode

func (f paramsFunc[P]) Select(params any, _ *session.Session) Mode {
	p, ok := params.(P)
	if !ok {
		panic(fmt.Sprintf("visibility: selector wants params %T, got %T", *new(P), params))
	}
	return f(p)
}

// FromParams returns a selector that computes the mode from the section's
// params, of type P.
func FromParams[P any](f func(P) Mode) Selector { return paramsFunc[P](f) }

type sessionFunc func(*session.Session) Mode

func (f sessionFunc) Select(_ any, sess *session.Session) Mode { return f(sess) }

// FromSession returns a selector that computes the mode from session state.
// It receives nil when rendering without a session.
func FromSession(f func(*session.Session) Mode) Selector { return sessionFunc(f) }

// Resolve returns the mode of the section at path and why: a session override
// first, then sel (nil meaning FULL). A selector that panics is reported as an
// error naming the path, never a crash.
func Resolve(sess *session.Session, path string, sel Selector, params any) (m Mode, why Why, err error) {
	return Get(sess).Resolve(sess, path, sel, params)
}

// Resolve is like the package's Resolve with o as the session's overrides,
// for callers that resolve many paths against one read of the session.
func (o Overrides) Resolve(sess *session.Session, path string, sel Selector, params any) (m Mode, why Why, err error) {
	if o, ok := o.Mode(path); ok {
		if !o.valid() {
			return Full, Overridden, fmt.Errorf("visibility: override for %q has invalid mode %d", path, uint8(o))
		}
		return o, Overridden, nil
	}
	switch s := sel.(type) {
	case nil:
		return Full, Declared, nil
	case Constant:
		if !Mode(s).valid() {
			return Full, Declared, fmt.Errorf("visibility: selector for %q returned invalid mode %d", path, uint8(s))
		}
		return Mode(s), Declared, nil
	}
	defer func() {
		if p := recover(); p != nil {
			m, why, err = Full, Selected, fmt.Errorf("visibility: selector for %q panicked: %v", path, p)
		}
	}()
	m = sel.Select(params, sess)
	if !m.valid() {
		return Full, Selected, fmt.Errorf("visibility: selector for %q returned invalid mode %d", path, uint8(m))
	}
	return m, Selected, nil
}
