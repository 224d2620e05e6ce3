package section

import (
	"fmt"
	"sync"
)

// Folded reports whether the section's children are still to be found
// ([Spec.LazyChildren]): it has none until it is unfolded.
func (s *Section) Folded() bool { return s.later != nil && s.unfolded.Load() == nil }

// Unfold finds a folded section's children, once. The call that finds
// them checks them (see below) and returns why they were refused, if
// they were: the section then keeps no children. Every other call, and a
// call on a section that was never folded, returns nil. Unfold is safe to
// call from many goroutines; every call returns once the section is
// unfolded.
//
// The children are refused when finding them panics, when they hold the
// section itself (the tree would have no end), when they break a rule
// [Validate] checks, or when check, if not nil, returns an error: the
// prompt package checks them against the rest of the prompt (tool names,
// params). A prompt built before keeps the tree it was built with: build
// it again to show the children (the prompt package's Prompt.Unfold does).
func (s *Section) Unfold(check func(children []*Section) error) error {
	if s.later == nil {
		return nil
	}
	var err error
	s.unfold.Do(func() {
		kids, found := s.find()
		if found == nil && holds(kids, s) {
			found = fmt.Errorf("they hold %s itself", s.key)
		}
		if found == nil {
			found = Validate(kids)
		}
		if found == nil && check != nil {
			found = check(kids)
		}
		if found != nil {
			kids, err = nil, fmt.Errorf("the subsections of %s: %w", s.key, found)
		}
		stable.Lock()
		s.unfolded.Store(&kids)
		stable.Unlock()
	})
	return err
}

// find calls the section's LazyChildren, turning a panic into an error.
func (s *Section) find() (kids []*Section, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("finding them panicked: %v", v)
		}
	}()
	return append([]*Section(nil), s.later()...), nil
}

// holds reports whether s is in the trees of list. A tree with a section
// folded until now can only come back to itself through that section.
func holds(list []*Section, s *Section) bool {
	for _, k := range list {
		if k == s || k != nil && holds(k.kids(), s) {
			return true
		}
	}
	return false
}

// stable is held for writing while a section stores the children it
// unfolded, and for reading by [Stable].
var stable sync.RWMutex

// Stable runs f while no section unfolds: every section gives the same
// children, or none, from start to end, as a prompt needs while it walks
// a tree more than once to build it (prompt.New calls it). f must not
// unfold a section, build a prompt, nor call Stable again.
func Stable(f func()) {
	stable.RLock()
	defer stable.RUnlock()
	f()
}
