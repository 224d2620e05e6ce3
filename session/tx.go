package session

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
)

// Tx is a transaction over a session: a view of it whose dispatches are
// staged instead of applied, until [Tx.Commit] applies them all at once or
// [Tx.Discard] drops them. Begin one with [Session.Begin].
//
// The view ([Tx.Session]) is a *Session that reads the session as it is
// now, with the staged events applied on top (read your writes): events
// other goroutines dispatch to the session meanwhile show through. Slices,
// reducers and event names registered through the view are registered in
// the session itself; they are configuration, not events.
type Tx struct {
	view *Session
}

// ErrEnded is matched (errors.Is) by the error of a dispatch to a
// transaction's view, or of a commit, after the transaction ended, and of
// the commit of a transaction begun on a view whose own transaction ended
// first.
var ErrEnded = errors.New("the transaction has ended (committed or discarded)")

// Begin starts a transaction over s. Transactions nest: beginning one on a
// transaction's view stages its commit in that transaction.
func (s *Session) Begin() *Tx {
	return &Tx{view: &Session{parent: s, root: s.root}}
}

// Session returns the transaction's view. Dispatch on it stages the event
// and returns the failures of the reducers that ran on the view, as
// Dispatch would; Get, Snapshot, Events and Seq see the staged events
// (their sequence numbers counted on from the session's newest, until the
// commit gives them theirs). Restore and ReplayLog fail on it. Once the
// transaction ended, dispatching to the view is an error and reads show
// the session itself.
func (tx *Tx) Session() *Session { return tx.view }

// Commit applies the staged events to the session the transaction was
// begun on, in the order they were dispatched, as one dispatch: they take
// consecutive sequence numbers, with no other event between them, and
// readers see all of them or none. Each keeps the time it was staged at.
// It returns the failures of the reducers, joined, as Dispatch would (a
// reducer's slice can have moved on since the staged dispatch answered).
// The transaction then ends; committing it again is an error.
func (tx *Tx) Commit() error {
	v := tx.view
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.ended {
		return fmt.Errorf("session: commit: %w", ErrEnded)
	}
	v.ended = true
	staged := v.staged
	v.staged, v.cache = nil, nil
	return v.parent.absorb(staged)
}

// Discard drops the staged events and returns them, oldest first, with the
// sequence numbers they would have had when it was called. The session
// is left as if the transaction had never begun. The transaction then
// ends; discarding an ended one returns nothing.
func (tx *Tx) Discard() []Record {
	v := tx.view
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.ended {
		return nil
	}
	v.ended = true
	out := v.parent.numbered(v.staged)
	v.staged, v.cache = nil, nil
	return out
}

// absorb applies records staged by a transaction over s: to the log and
// the slices when s is a session, to s's own staged events when s is a
// transaction's view (whose commit then applies them).
func (s *Session) absorb(records []Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.parent != nil {
		if s.ended {
			return fmt.Errorf("session: commit: the enclosing transaction's view: %w, without these events", ErrEnded)
		}
		s.parent.rlock()
		defer s.parent.runlock()
		for _, r := range records {
			s.stageLocked(r, nil)
		}
		return nil
	}
	var errs []error
	for _, r := range records {
		if err := s.dispatchLocked(r.Event, r.Time, s.seq+1); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// numbered returns records staged on top of s with the sequence numbers
// they would take now and their registered type names.
func (s *Session) numbered(records []Record) []Record {
	s.rlock()
	defer s.runlock()
	return s.numberedLocked(records)
}

func (s *Session) numberedLocked(records []Record) []Record {
	out := make([]Record, len(records))
	seq := s.seqLocked()
	for i, r := range records {
		seq++
		r.Seq = seq
		r.Type = s.root.typeName(r.Event)
		out[i] = r
	}
	return out
}

// rlock read-locks s and every session it is a view of, from s to the
// root: the order every lock of a chain is taken in.
func (s *Session) rlock() {
	for x := s; x != nil; x = x.parent {
		x.mu.RLock()
	}
}

func (s *Session) runlock() {
	for x := s; x != nil; x = x.parent {
		x.mu.RUnlock()
	}
}

// seqLocked is the sequence number of the newest event s shows, staged
// ones counted; s's locks and its parents' are held.
func (s *Session) seqLocked() uint64 {
	if s.parent == nil {
		return s.seq
	}
	return s.parent.seqLocked() + uint64(len(s.staged))
}

// viewValue is a slice's value as a view shows it: the value its parent
// shows, at version parentVer, with the view's staged events applied.
type viewValue struct {
	value     any
	ver       uint64 // this value's version, for the views begun on this one
	parentVer uint64 // the version of the parent's value it was computed from
}

// valueLocked is the value of the slice st, called name, as s shows it:
// its value in the root session with the events staged in every
// transaction from there to s applied, by the reducers registered now. A
// reducer that fails leaves the value as it was, as in Dispatch. s's locks
// and its parents' are held.
//
// A view keeps the value it computed (cache), with the version of its
// parent's value it was computed from; stage extends it by the staged
// event. It computes the value again, from its parent's and all its
// staged events, only when the parent's has changed since: an event
// dispatched to the session, a restore, a reducer registered, or an event
// staged in the enclosing transaction.
func (s *Session) valueLocked(name string, st *sliceState) viewValue {
	if s.parent == nil {
		return viewValue{value: st.value, ver: st.ver}
	}
	p := s.parent.valueLocked(name, st)
	if len(s.staged) == 0 {
		return viewValue{value: p.value, ver: p.ver, parentVer: p.ver}
	}
	s.cacheMu.Lock()
	c, ok := s.cache[name]
	s.cacheMu.Unlock()
	if ok && c.parentVer == p.ver {
		return c
	}
	v := p.value
	for _, rec := range s.staged {
		v = s.root.applyLocked(name, v, rec.Event, nil)
	}
	c = viewValue{value: v, ver: s.newVer(), parentVer: p.ver}
	s.keep(name, c)
	return c
}

// keep caches c as the view's value of the slice called name.
func (s *Session) keep(name string, c viewValue) {
	s.cacheMu.Lock()
	defer s.cacheMu.Unlock()
	if s.cache == nil {
		s.cache = make(map[string]viewValue)
	}
	s.cache[name] = c
}

// applyLocked runs the reducers of the slice called name for event on v
// and returns the new value; failures are appended to *errs when errs is
// not nil. The root's lock is held.
func (s *Session) applyLocked(name string, v, event any, errs *[]error) any {
	for _, r := range s.reducers[reflect.TypeOf(event)] {
		if r.slice != name {
			continue
		}
		next, err := runReducer(r, v, event)
		if err != nil {
			if errs != nil {
				*errs = append(*errs, &ReducerError{Slice: name, Event: s.typeName(event), Err: err})
			}
			continue
		}
		v = next
	}
	return v
}

// typeName is the name event is logged under. The root's lock is held.
func (s *Session) typeName(event any) string {
	if u, ok := event.(UnknownEvent); ok {
		return u.Type
	}
	et := reflect.TypeOf(event)
	if name, ok := s.names[et]; ok {
		return name
	}
	return et.String()
}

// stage is Dispatch on a transaction's view: it runs the event's reducers
// on the view, to answer as Dispatch would, and keeps the event for the
// commit.
func (s *Session) stage(event any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return fmt.Errorf("session: dispatch: %w; dispatch to the session it was begun on", ErrEnded)
	}
	s.parent.rlock()
	defer s.parent.runlock()
	var errs []error
	s.stageLocked(Record{Time: s.root.now(), Type: s.root.typeName(event), Event: event}, &errs)
	return errors.Join(errs...)
}

// stageLocked appends rec to the view's staged events, and applies it to
// the values the view keeps of the slices its reducers update; their
// failures are appended to *errs when errs is not nil. s's lock is held
// for writing, its parents' for reading.
func (s *Session) stageLocked(rec Record, errs *[]error) {
	root := s.root
	var done []string // slices whose reducers ran
	for _, r := range root.reducers[reflect.TypeOf(rec.Event)] {
		if slices.Contains(done, r.slice) {
			continue
		}
		done = append(done, r.slice)
		c := s.valueLocked(r.slice, root.slices[r.slice])
		next := root.applyLocked(r.slice, c.value, rec.Event, errs)
		s.keep(r.slice, viewValue{value: next, ver: s.newVer(), parentVer: c.parentVer})
	}
	s.staged = append(s.staged, rec)
}
