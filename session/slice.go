package session

import (
	"fmt"
	"reflect"
)

// Slice names one typed piece of session state and its initial value.
// Declare slices once, at package level, and register them in each session
// that needs them with [Register].
type Slice[S any] struct {
	name    string
	initial S
}

// NewSlice declares a state slice called name whose value starts as initial.
// The name identifies the slice in snapshots and error messages.
func NewSlice[S any](name string, initial S) *Slice[S] {
	if name == "" {
		panic("session: NewSlice with empty name")
	}
	return &Slice[S]{name: name, initial: initial}
}

// Name returns the slice's name.
func (s *Slice[S]) Name() string { return s.name }

// Initial returns the slice's initial value.
func (s *Slice[S]) Initial() S { return s.initial }

// Register adds slice to the session with its initial value. Registering the
// same slice again does nothing; registering a different slice under a name
// already in use is an error.
func Register[S any](sess *Session, slice *Slice[S]) error {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if prev, ok := sess.slices[slice.name]; ok {
		if prev.owner == any(slice) {
			return nil
		}
		return fmt.Errorf("session: register slice %q: another slice has that name", slice.name)
	}
	sess.slices[slice.name] = &sliceState{owner: slice, typ: reflect.TypeFor[S](), initial: slice.initial, value: slice.initial}
	sess.order = append(sess.order, slice.name)
	return nil
}

// Registered reports whether slice is registered in the session.
func Registered[S any](sess *Session, slice *Slice[S]) bool {
	sess.mu.RLock()
	defer sess.mu.RUnlock()
	st, ok := sess.slices[slice.name]
	return ok && st.owner == any(slice)
}

// Get returns the slice's current value, or its initial value when the slice
// is not registered in the session (or sess is nil). The value is never
// changed by a later dispatch.
func Get[S any](sess *Session, slice *Slice[S]) S {
	if sess == nil {
		return slice.initial
	}
	sess.mu.RLock()
	defer sess.mu.RUnlock()
	st, ok := sess.slices[slice.name]
	if !ok || st.owner != any(slice) {
		return slice.initial
	}
	return valueAs[S](st.value)
}

// valueAs returns v, which holds an S, as an S. An interface-typed slice may
// hold nil, which a plain type assertion rejects.
func valueAs[S any](v any) S {
	if v == nil {
		var zero S
		return zero
	}
	return v.(S)
}

// On registers a pure reducer for events of type E on slice. Reducers for an
// event type run in the order they were registered. The slice is registered
// too, if it is not already. Reducers run while the session is locked, so they
// must not call the session.
func On[S, E any](sess *Session, slice *Slice[S], reduce func(S, E) S) error {
	return OnErr(sess, slice, func(s S, e E) (S, error) { return reduce(s, e), nil })
}

// OnErr registers a reducer that may fail. When it returns an error (or
// panics), the slice keeps its previous value and Dispatch reports the failure.
// E must be a concrete type: an interface event type is an error.
func OnErr[S, E any](sess *Session, slice *Slice[S], reduce func(S, E) (S, error)) error {
	et := reflect.TypeFor[E]()
	if et.Kind() == reflect.Interface {
		// Dispatch finds reducers by the event's concrete type, so this
		// reducer would never run.
		return fmt.Errorf("session: on: slice %q: event type %v is an interface; register a reducer for each concrete event type", slice.name, et)
	}
	if err := Register(sess, slice); err != nil {
		return err
	}
	sess.mu.Lock()
	defer sess.mu.Unlock()
	sess.reducers[et] = append(sess.reducers[et], reducer{
		slice: slice.name,
		apply: func(old any, event any) (any, error) {
			return reduce(valueAs[S](old), event.(E))
		},
	})
	return nil
}

type reducer struct {
	slice string
	apply func(old, event any) (any, error)
}

type sliceState struct {
	owner   any // the *Slice[S] that declared it
	typ     reflect.Type
	initial any
	value   any
}
