package prompt

import (
	"math"

	"github.com/unfold-dev/unfold/visibility"
)

// lowerShown bounds from below what the enabled child c of a section shown
// in full costs: its block in full when it is FULL, else the least of its
// summary and, when it may be opened, its block in full.
func (s *solver) lowerShown(c int) (int, error) {
	if s.r.st[c].mode == visibility.Full {
		return s.lower(c, fullBlock)
	}
	v, err := s.lowerSummary(c)
	if err == nil && s.openable(c) {
		// A body that fails to render keeps c summarized (see showOptional).
		w, ferr := s.lower(c, fullBlock)
		switch {
		case ferr == nil:
			v = min(v, w)
		case s.r.st[c].is(candF):
			err = ferr
		}
	}
	return v, err
}

// lowerSummary bounds from below what the SUMMARY section c costs written
// as cheapest would write it: the least bound of its summary (or brief)
// with the default suffix and, when it has enabled children, the compact
// one.
func (s *solver) lowerSummary(c int) (int, error) {
	v, err := s.lower(c, summaryKind(s.r.st[c].is(briefF), false))
	if err == nil && s.pr.hasKids(c) {
		var w int
		w, err = s.lower(c, summaryKind(s.r.st[c].is(briefF), true))
		v = min(v, w)
	}
	return v, err
}

func (s *solver) lower(i int, k blockKind) (int, error) {
	return s.p.lowerCost(s.r, s.t, s.lb, i, k)
}

// shown plans how the SUMMARY section c shows once revealed: in full when
// it may be and that costs no more than its summary, summarized otherwise.
// Content that costs no more than a lower bound of the summary costs no
// more than the summary, so that is tried first, against the bound: when it
// holds, the summary is never counted. A section whose content outweighs
// its summary's bound costs a count of its summary, as it would anyway.
func (s *solver) shown(c int) (int, error) {
	if s.lb != nil && s.openable(c) {
		lo, err := s.lowerSummary(c)
		if err != nil {
			return 0, err
		}
		mark := len(s.plan)
		full, ok, err := s.showOptional(c, lo)
		if err != nil || ok {
			return full, err
		}
		s.plan = s.plan[:mark]
	}
	k, sc, err := s.cheapest(c)
	if err != nil {
		return 0, err
	}
	if s.openable(c) {
		mark := len(s.plan)
		full, ok, err := s.showOptional(c, sc)
		if err != nil || ok {
			return full, err
		}
		s.plan = s.plan[:mark]
	}
	s.plan = append(s.plan, asSummary(c, k, sc))
	return sc, nil
}

// cheapest returns how node i's summary, or its brief when the budget
// shortened it, is cheapest written, and its cost: with the compact suffix
// when it has enabled children and that costs fewer tokens.
func (s *solver) cheapest(i int) (blockKind, int, error) {
	def := summaryKind(s.r.st[i].is(briefF), false)
	if !s.pr.hasKids(i) {
		c, err := s.cost(i, def)
		return def, c, err
	}
	k := summaryKind(s.r.st[i].is(briefF), true)
	c, err := s.cost(i, k)
	if err != nil {
		return k, c, err
	}
	if s.lb != nil {
		// Most often the keys alone outweigh the count.
		if lo, err := s.lower(i, def); err != nil || lo >= c {
			return k, c, err
		}
	}
	d, err := s.cost(i, def)
	if err != nil || c < d {
		return k, c, err
	}
	return def, d, nil
}

// openable reports whether the budget may show the SUMMARY section i in
// full when its content costs no more than its summary: not when the
// session summarized it, nor when that would offer tools, nor, unless the
// section was FULL before the budget, when measuring its content would run
// a Content function (which may read files or screens the render need not),
// nor when the section is folded (its content lacks the children it shows
// once opened).
func (s *solver) openable(i int) bool {
	return s.r.st[i].why != visibility.Overridden && !s.pr.hasTools(i) && (s.r.st[i].is(candF) || !s.p.t.hot[i].is(liveBelow)) && !s.p.t.nodes[i].folded
}

// leastBound returns the least bound of any block the fit may write for
// node c, and whether all of them are known: counted or bounded without
// error, so that none can fail any more. A fit of a prompt fitted before
// works out those it does not know yet, but for blocks that change from
// one render to the next (Content): the bounds of a section's first
// children, which show looks at anyway, pay for themselves in the fits
// that pass over the section on its floor.
func (s *solver) leastBound(c int) (int, bool) {
	least := math.MaxInt32
	for k := fullBlock; k < numKinds; k++ {
		if k.brief() && !s.p.hasBrief(c) || k.compact() && !s.pr.hasKids(c) {
			continue
		}
		v, ok := s.t.known(c, k)
		if !ok && s.again && s.p.keeps(c, k) {
			var err error
			v, err = s.lower(c, k)
			ok = err == nil
		}
		if !ok {
			return 0, false
		}
		least = min(least, v)
	}
	return least, true
}

// keepFloor keeps floor as node i's when it is more than the one kept.
//
// A section's floor bounds from below what its first enabled children cost
// when it shows in full, whatever modes they are in: the sum, over them, of
// their least bound (see leastBound). show adds it up as it looks at
// the children, and passes over a section whose floor rules it out without
// looking at them again: a large prompt fitted again does that for most of
// the sections that do not fit. The floor stops at the first child whose
// bounds are not all known, so a section passed over on its floor would
// not have reached a child that fails to render. There is none when which
// children are enabled depends on the session.
func (s *solver) keepFloor(i, floor int) {
	f := s.t.floorSlot(i)
	if v := int32(min(floor, math.MaxInt32)); v > f.Load() {
		f.Store(v)
	}
}
