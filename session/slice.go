package session

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
)

// Slice names one typed piece of session state and its initial value
// ([Slice.Initial]). Declare slices once, at package level, and register
// them in each session that needs them with [Register].
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
	sess = sess.root
	sess.mu.Lock()
	defer sess.mu.Unlock()
	_, err := registerLocked(sess, slice)
	return err
}

// registerLocked is Register with sess.mu held; it returns the slice's state.
func registerLocked[S any](sess *Session, slice *Slice[S]) (*sliceState, error) {
	if prev, ok := sess.slices[slice.name]; ok {
		if prev.owner == any(slice) {
			return prev, nil
		}
		return nil, fmt.Errorf("session: register slice %q: another slice has that name", slice.name)
	}
	st := &sliceState{owner: slice, typ: reflect.TypeFor[S](), initial: slice.initial, value: slice.initial, base: slice.initial, ver: sess.newVer()}
	sess.slices[slice.name] = st
	sess.order = append(sess.order, slice.name)
	return st, nil
}

// Registered reports whether slice is registered in the session.
func Registered[S any](sess *Session, slice *Slice[S]) bool {
	sess = sess.root
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
	if sess.parent != nil {
		sess.rlock()
		defer sess.runlock()
		st, ok := sess.root.slices[slice.name]
		if !ok || st.owner != any(slice) {
			return slice.initial
		}
		return valueAs[S](sess.valueLocked(slice.name, st).value)
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
// must not call the session. Events of type E dispatched before the reducer
// was registered are applied as [OnErr] says.
func On[S, E any](sess *Session, slice *Slice[S], reduce func(S, E) S) error {
	return OnErr(sess, slice, func(s S, e E) (S, error) { return reduce(s, e), nil })
}

// OnErr registers a reducer that may fail. When it returns an error (or
// panics), the slice keeps its previous value and Dispatch reports the failure.
// E must be a concrete type: an interface event type is an error.
//
// The log may already hold events of type E, dispatched before any reducer
// for them was registered (a visibility override set before the first
// render, say). They are not lost: OnErr rebuilds the slice from its initial
// value (or the value [Session.Restore] last gave it) by running all its
// reducers, this one included, over the events logged since, in log order,
// so the state is what replaying the log would give. Failures of this
// reducer on those events are returned, joined; it stays registered. When
// [WithLogLimit] has dropped events the rebuild would need, the slice keeps
// its value, the reducer is registered for the events to come, and OnErr
// says so in its error.
func OnErr[S, E any](sess *Session, slice *Slice[S], reduce func(S, E) (S, error)) error {
	return OnAll(sess, slice, Reduce(reduce))
}

// Reducer is a reducer of a slice of type S not registered yet, for
// [OnAll]; make one with [Reduce].
type Reducer[S any] struct {
	event reflect.Type
	apply func(old, event any) (any, error)
}

// Reduce returns a reducer for events of type E, which [OnAll] registers.
func Reduce[S, E any](reduce func(S, E) (S, error)) Reducer[S] {
	return Reducer[S]{
		event: reflect.TypeFor[E](),
		apply: func(old any, event any) (any, error) {
			return reduce(valueAs[S](old), event.(E))
		},
	}
}

// OnAll registers reducers of slice, each as [OnErr] does, all at once:
// the slice catches up on the events logged before them in one rebuild,
// with all of them, so no reader sees it with some of the reducers
// applied and not the others (a state no prefix of the log gives). Use it
// for the reducers of a slice whose events undo one another (an override
// set, then cleared). It registers nothing when one of them is for an
// interface event type.
func OnAll[S any](sess *Session, slice *Slice[S], reducers ...Reducer[S]) error {
	for _, r := range reducers {
		if r.event == nil {
			return fmt.Errorf("session: on: slice %q: a zero Reducer; make it with session.Reduce", slice.name)
		}
		if r.event.Kind() == reflect.Interface {
			// Dispatch finds reducers by the event's concrete type, so this
			// reducer would never run.
			return fmt.Errorf("session: on: slice %q: event type %v is an interface; register a reducer for each concrete event type", slice.name, r.event)
		}
	}
	sess = sess.root
	sess.mu.Lock()
	defer sess.mu.Unlock()
	st, err := registerLocked(sess, slice)
	if err != nil {
		return err
	}
	var ids []int
	var behind []reflect.Type // event types to catch up on
	for _, rd := range reducers {
		sess.nextID++
		ids = append(ids, sess.nextID)
		sess.reducers[rd.event] = append(sess.reducers[rd.event], reducer{id: sess.nextID, slice: slice.name, apply: rd.apply})
		if sess.latest[rd.event] > st.baseSeq && !slices.Contains(behind, rd.event) {
			behind = append(behind, rd.event)
		}
	}
	// Events staged in transactions apply by the reducers registered
	// now: their views compute the slice again.
	st.ver = sess.newVer()
	if len(behind) == 0 {
		return nil // no event of these types to catch up on
	}
	if sess.log[0].Seq > st.baseSeq+1 {
		return fmt.Errorf("session: on: slice %q: events of type %v were dispatched before this reducer was registered, and WithLogLimit dropped events %d to %d, which catching up needs; they are not applied: register reducers before dispatching their events",
			slice.name, behind[0], st.baseSeq+1, sess.log[0].Seq-1)
	}
	return sess.rebuildLocked(st, slice.name, "session: on: ", ids...)
}

// rebuildLocked recomputes the slice called name from its base value and
// the events logged after it, with every reducer it has. It returns the
// failures of the reducers numbered ids only, each prefixed by prefix:
// the others' were returned when their events were dispatched.
func (s *Session) rebuildLocked(st *sliceState, name, prefix string, ids ...int) error {
	v := st.base
	var errs []error
	for _, rec := range s.log {
		if rec.Seq <= st.baseSeq {
			continue
		}
		for _, r := range s.reducers[reflect.TypeOf(rec.Event)] {
			if r.slice != name {
				continue
			}
			next, err := runReducer(r, v, rec.Event)
			if err != nil {
				if slices.Contains(ids, r.id) {
					errs = append(errs, fmt.Errorf("%scatching up on event %d: %w", prefix, rec.Seq, &ReducerError{Slice: name, Event: rec.Type, Err: err}))
				}
				continue
			}
			v = next
		}
	}
	st.value, st.ver = v, s.newVer()
	return errors.Join(errs...)
}

type reducer struct {
	id    int // unique in its session
	slice string
	apply func(old, event any) (any, error)
}

type sliceState struct {
	owner   any // the *Slice[S] that declared it
	typ     reflect.Type
	initial any
	value   any
	// base is the value the slice had after event baseSeq: its initial
	// value after event 0, or what Restore gave it. Applying the events
	// logged after baseSeq to base gives value.
	base    any
	baseSeq uint64
	// ver changes whenever value does, or the reducers do: the views of
	// transactions keep values computed from it until it changes.
	ver uint64
}
