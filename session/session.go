package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Session is an ordered event log plus the typed state slices its reducers
// derive from it. The zero value is not usable; create one with [New].
type Session struct {
	now     func() time.Time // clock for record times; fixed at New
	maxLine int              // longest line ReplayLog accepts; fixed at New

	// parent is the session a transaction's view stages its events for,
	// nil for a session made by New; root is the session at the end of
	// the parent chain (the session itself for one made by New). A view
	// uses only parent, root, the two fields after mu and its cache; the
	// others belong to the root.
	parent, root *Session

	// cacheMu guards cache, a view's values of slices with its staged
	// events applied (see valueLocked). It is taken while the view's mu is
	// held, for reading or writing, and never held while taking another
	// lock: readers that share the view's read lock fill the cache.
	cacheMu sync.Mutex
	cache   map[string]viewValue

	// vers hands out the versions of slice values (sliceState.ver,
	// viewValue.ver); the root's only.
	vers atomic.Uint64

	// mu guards everything below. Dispatch holds it for writing while the
	// reducers run, so readers never see half of a dispatch. Sessions in
	// a parent chain lock in the chain's order, a view before its parent.
	mu       sync.RWMutex
	staged   []Record // a view's: the events dispatched to it, in order; Seq is 0
	ended    bool     // a view's: its transaction committed or discarded
	slices   map[string]*sliceState
	order    []string // slice names in registration order
	reducers map[reflect.Type][]reducer
	names    map[reflect.Type]string // event type -> registered name
	types    map[string]reflect.Type // registered name -> event type
	latest   map[reflect.Type]uint64 // event type -> seq of its newest event
	log      []Record
	seq      uint64
	logLimit int  // keep at most this many records in memory; 0 means all
	restored bool // Restore set the slices back: the log no longer rebuilds them
	nextID   int  // tells reducers apart; see reducer.id
}

// Record is one event in the log.
type Record struct {
	Seq   uint64    // 1 for the first event, then one more for each
	Time  time.Time // when it was dispatched
	Type  string    // the registered name, or the Go type when none was registered
	Event any       // the event value as dispatched
}

// Option configures a Session.
type Option func(*Session)

// WithClock makes the session stamp records with now instead of time.Now.
func WithClock(now func() time.Time) Option {
	return func(s *Session) { s.now = now }
}

// WithMaxLogLine makes [Session.ReplayLog] accept lines of at most n bytes
// instead of [MaxLogLine]. A value of zero or less keeps the default.
func WithMaxLogLine(n int) Option {
	return func(s *Session) {
		if n > 0 {
			s.maxLine = n
		}
	}
}

// WithLogLimit keeps at most n of the newest records in the in-memory log,
// so a session that lives as long as a server does not grow without bound.
// State is unaffected: reducers still see every event. Once records have
// been dropped, [Session.WriteLog] refuses to write a log that could not
// rebuild the state; save a [Snapshot] instead. n <= 0 keeps every record.
func WithLogLimit(n int) Option {
	return func(s *Session) { s.logLimit = max(n, 0) }
}

// New returns an empty session with no slices registered.
func New(opts ...Option) *Session {
	s := &Session{
		now:      time.Now,
		maxLine:  MaxLogLine,
		slices:   make(map[string]*sliceState),
		reducers: make(map[reflect.Type][]reducer),
		names:    make(map[reflect.Type]string),
		types:    make(map[string]reflect.Type),
		latest:   make(map[reflect.Type]uint64),
	}
	s.root = s
	for _, o := range opts {
		o(s)
	}
	return s
}

// RegisterEvent names the event type E for the JSON-lines log. Registering
// the same type under the same name again does nothing; reusing a name for
// another type, or a type under another name, is an error. Events of type E
// already in the log take the name too, so a log holding events dispatched
// before their type was named can still be written.
func RegisterEvent[E any](sess *Session, name string) error {
	if name == "" {
		return errors.New("session: register event: empty name")
	}
	et := reflect.TypeFor[E]()
	if et.Kind() == reflect.Interface {
		return fmt.Errorf("session: register event %q: %v is an interface; register each concrete event type", name, et)
	}
	sess = sess.root
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if prev, ok := sess.types[name]; ok && prev != et {
		return fmt.Errorf("session: register event %q: name already used by %v", name, prev)
	}
	if prev, ok := sess.names[et]; ok && prev != name {
		return fmt.Errorf("session: register event %v: already registered as %q", et, prev)
	}
	if _, ok := sess.names[et]; ok {
		return nil
	}
	sess.names[et] = name
	sess.types[name] = et
	var decoded []uint64
	for i := range sess.log {
		rec := &sess.log[i]
		if u, ok := rec.Event.(UnknownEvent); ok && u.Type == name {
			v := reflect.New(et)
			if json.Unmarshal(u.JSON, v.Interface()) != nil {
				continue // kept as read, and written back so
			}
			rec.Event = v.Elem().Interface()
			// Only raised: a restore may have set it past the kept events.
			sess.latest[et] = max(sess.latest[et], rec.Seq)
			decoded = append(decoded, rec.Seq)
		}
		if reflect.TypeOf(rec.Event) == et {
			rec.Type = name
		}
	}
	return sess.catchUpLocked(et, decoded)
}

// catchUpLocked applies the events of type et that a log replayed with
// [KeepUnknownEvents] held before the type was registered, numbered seqs,
// by rebuilding the slices that already have reducers for et. sess.mu is
// held.
func (s *Session) catchUpLocked(et reflect.Type, seqs []uint64) error {
	if len(seqs) == 0 {
		return nil
	}
	var errs []error
	var done []string
	for _, r := range s.reducers[et] {
		if slices.Contains(done, r.slice) {
			continue
		}
		done = append(done, r.slice)
		st := s.slices[r.slice]
		if seqs[len(seqs)-1] <= st.baseSeq {
			continue // restored past them
		}
		if s.log[0].Seq > st.baseSeq+1 {
			errs = append(errs, fmt.Errorf("slice %q: WithLogLimit dropped events %d to %d, which applying them needs; they are not applied", r.slice, st.baseSeq+1, s.log[0].Seq-1))
			continue
		}
		var ids []int
		for _, r2 := range s.reducers[et] {
			if r2.slice == r.slice {
				ids = append(ids, r2.id)
			}
		}
		if err := s.rebuildLocked(st, r.slice, "", ids...); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("session: register event %q: the name is registered, and the events of that type the log held apply now, but: %w", s.names[et], errors.Join(errs...))
	}
	return nil
}

// Dispatch appends event to the log and runs every reducer registered for its
// type, in registration order. Each reducer's failure (an error or a panic)
// leaves its own slice unchanged and is returned, joined with the others; the
// event stays logged. A nil event is an error and is not logged. An event no
// reducer handles yet is logged all the same, and reducers registered later
// apply it then (see [OnErr]). On a transaction's view ([Tx.Session]) the
// event is staged instead, for the commit.
func (s *Session) Dispatch(event any) error {
	if event == nil {
		return errors.New("session: dispatch: nil event")
	}
	if _, ok := event.(UnknownEvent); ok {
		return errors.New("session: dispatch: an UnknownEvent is an event a replay kept as it read it, for no reducer; dispatch an event of a registered type")
	}
	if s.parent != nil {
		return s.stage(event)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dispatchLocked(event, s.now(), s.seq+1)
}

func (s *Session) dispatchLocked(event any, at time.Time, seq uint64) error {
	et := reflect.TypeOf(event)
	name := s.typeName(event)
	s.seq = seq
	s.latest[et] = seq
	s.log = append(s.log, Record{Seq: seq, Time: at, Type: name, Event: event})
	if s.logLimit > 0 && len(s.log) >= 2*s.logLimit {
		// Drop the oldest half in one copy, so the cost per event stays constant.
		s.log = append(s.log[:0:0], s.log[len(s.log)-s.logLimit:]...)
	}
	var errs []error
	for _, r := range s.reducers[et] {
		st := s.slices[r.slice]
		next, err := runReducer(r, st.value, event)
		if err != nil {
			errs = append(errs, &ReducerError{Slice: r.slice, Event: name, Err: err})
			continue
		}
		st.value, st.ver = next, s.newVer()
	}
	return errors.Join(errs...)
}

// newVer returns a version no slice value of s's chain had before.
func (s *Session) newVer() uint64 { return s.root.vers.Add(1) }

func runReducer(r reducer, old, event any) (next any, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return r.apply(old, event)
}

// ReducerError reports a reducer that failed; its slice kept its value.
type ReducerError struct {
	Slice string // the slice the reducer updates
	Event string // the event's type name
	Err   error
}

func (e *ReducerError) Error() string {
	return fmt.Sprintf("session: reducer for slice %q on event %s: %v", e.Slice, e.Event, e.Err)
}

func (e *ReducerError) Unwrap() error { return e.Err }

// Events returns a copy of the log, oldest first: with [WithLogLimit], only
// the newest records. A transaction's view returns the session's log and
// then the staged events, numbered on from its newest.
func (s *Session) Events() []Record {
	s.rlock()
	defer s.runlock()
	return s.eventsLocked()
}

func (s *Session) eventsLocked() []Record {
	if s.parent != nil {
		return append(s.parent.eventsLocked(), s.parent.numberedLocked(s.staged)...)
	}
	if s.logLimit > 0 && len(s.log) > s.logLimit {
		return append([]Record(nil), s.log[len(s.log)-s.logLimit:]...)
	}
	return append([]Record(nil), s.log...)
}

// eventsAfter returns a copy of the records after event number after that
// the log still holds (with [WithLogLimit], only the newest), copying
// those only, and whether the session was restored.
func (s *Session) eventsAfter(after uint64, n int) ([]Record, bool) {
	s.rlock()
	defer s.runlock()
	return s.eventsAfterLocked(after, n), s.root.restored
}

// eventsAfterLocked copies the events after event number after, at most
// n of them when n > 0.
func (s *Session) eventsAfterLocked(after uint64, n int) []Record {
	if s.parent != nil {
		out := s.parent.eventsAfterLocked(after, 0)
		for _, r := range s.parent.numberedLocked(s.staged) {
			if r.Seq > after {
				out = append(out, r)
			}
		}
		if n > 0 && len(out) > n {
			out = out[:n]
		}
		return out
	}
	log := s.log
	if s.logLimit > 0 && len(log) > s.logLimit {
		log = log[len(log)-s.logLimit:]
	}
	// The log's sequence numbers are consecutive.
	if len(log) > 0 && after >= log[0].Seq {
		log = log[min(after-log[0].Seq+1, uint64(len(log))):]
	}
	if n > 0 && len(log) > n {
		log = log[:n]
	}
	return append([]Record(nil), log...)
}

// Seq returns the sequence number of the newest event, 0 when there is none;
// on a transaction's view, counting the staged events.
func (s *Session) Seq() uint64 {
	s.rlock()
	defer s.runlock()
	return s.seqLocked()
}
