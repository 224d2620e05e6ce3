package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
)

// Snapshot is the value of every registered slice at one point of the log.
// It is immutable: restoring it, or dispatching afterwards, does not change it.
type Snapshot struct {
	seq    uint64
	values map[string]any
}

// Seq returns the sequence number of the last event the snapshot includes.
func (s Snapshot) Seq() uint64 { return s.seq }

// Slices returns the names of the slices in the snapshot, sorted.
func (s Snapshot) Slices() []string {
	names := make([]string, 0, len(s.values))
	for n := range s.values {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Snapshot captures the current value of every registered slice; on a
// transaction's view, with the staged events applied.
func (s *Session) Snapshot() Snapshot {
	s.rlock()
	defer s.runlock()
	values := make(map[string]any, len(s.root.slices))
	for name, st := range s.root.slices {
		values[name] = s.valueLocked(name, st).value
	}
	return Snapshot{seq: s.seqLocked(), values: values}
}

// Restore sets every slice to its value in snap; slices the snapshot does not
// mention go back to their initial values. It fails, changing nothing, when
// snap holds a slice that is not registered in this session or whose value
// has another type. The event log is history and is not rewound, and no
// longer rebuilds the state: [Session.WriteLog] refuses it after a
// restore (save a Snapshot, or the log before the restore, instead). A
// transaction's view cannot be restored: restoring is not an event a commit
// could apply.
func (s *Session) Restore(snap Snapshot) error {
	if s.parent != nil {
		return errors.New("session: restore: the session is a transaction's view; restore the session itself")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, name := range snap.Slices() {
		st, ok := s.slices[name]
		if !ok {
			return fmt.Errorf("session: restore: slice %q is not registered in this session", name)
		}
		if v := snap.values[name]; !fits(v, st.typ) {
			return fmt.Errorf("session: restore: slice %q holds %T, want %v", name, v, st.typ)
		}
	}
	s.restored = true
	for name, st := range s.slices {
		if v, ok := snap.values[name]; ok {
			st.value = v
		} else {
			st.value = st.initial
		}
		st.base, st.baseSeq = st.value, s.seq
		st.ver = s.newVer()
	}
	return nil
}

// fits reports whether v, a value read from a slice, can be the value of a
// slice of type t.
func fits(v any, t reflect.Type) bool {
	switch {
	case t.Kind() == reflect.Interface:
		return v == nil || reflect.TypeOf(v).Implements(t)
	case v == nil:
		return false
	}
	return reflect.TypeOf(v) == t
}

// MarshalJSON encodes the snapshot as {"seq":N,"slices":{"name":value,...}}.
func (s Snapshot) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Seq    uint64         `json:"seq"`
		Slices map[string]any `json:"slices"`
	}{s.seq, s.values})
}

// DecodeSnapshot reads a snapshot written by [Snapshot.MarshalJSON], decoding
// each slice into the type registered under its name in this session.
func (s *Session) DecodeSnapshot(data []byte) (Snapshot, error) {
	var raw struct {
		Seq    uint64                     `json:"seq"`
		Slices map[string]json.RawMessage `json:"slices"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return Snapshot{}, fmt.Errorf("session: decode snapshot: %w", err)
	}
	s = s.root
	s.mu.RLock()
	defer s.mu.RUnlock()
	values := make(map[string]any, len(raw.Slices))
	for name, msg := range raw.Slices {
		st, ok := s.slices[name]
		if !ok {
			return Snapshot{}, fmt.Errorf("session: decode snapshot: slice %q is not registered in this session", name)
		}
		v := reflect.New(st.typ)
		if err := json.Unmarshal(msg, v.Interface()); err != nil {
			return Snapshot{}, fmt.Errorf("session: decode snapshot: slice %q: %w", name, err)
		}
		values[name] = v.Elem().Interface()
	}
	return Snapshot{seq: raw.Seq, values: values}, nil
}
