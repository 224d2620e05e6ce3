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
// as cheapest would write it: the least bound of the kinds it may be
// written as (see summaryKinds).
func (s *solver) lowerSummary(c int) (int, error) {
	v := math.MaxInt
	for k := numKinds - 1; k > fullBlock; k-- {
		if !s.summaryKinds(c, k) {
			continue
		}
		w, err := s.lower(c, k)
		if err != nil {
			return 0, err
		}
		v = min(v, w)
	}
	return v, nil
}

// summaryKinds reports whether the SUMMARY section i may be written as the
// summary kind k: as its brief only when the budget may shorten it
// (briefF), and with the compact suffix only when it has enabled children.
func (s *solver) summaryKinds(i int, k blockKind) bool {
	return (!k.brief() || s.r.st[i].is(briefF)) && (!k.compact() || s.pr.hasKids(i))
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

// cheapest returns how node i's summary is cheapest written, and its cost:
// as its brief or as its summary when the budget may shorten it (briefF),
// each with the compact suffix when it has enabled children. A brief is
// meant to be the shorter, but it is a template of its own and a count is
// what says: a tie goes to the summary, and to the default suffix. The
// kinds are counted from the one most often cheapest, so that the others
// are most often ruled out by a lower bound without a count.
func (s *solver) cheapest(i int) (blockKind, int, error) {
	best, bc := fullBlock, 0
	for k := numKinds - 1; k > fullBlock; k-- {
		if !s.summaryKinds(i, k) {
			continue
		}
		if best != fullBlock && s.lb != nil {
			if lo, err := s.lower(i, k); err != nil || lo >= bc {
				if err != nil {
					return k, 0, err
				}
				continue
			}
		}
		c, err := s.cost(i, k)
		if err != nil {
			return k, c, err
		}
		if best == fullBlock || c <= bc {
			best, bc = k, c
		}
	}
	return best, bc, nil
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
