package prompt

import "github.com/unfold-dev/unfold/visibility"

// lowerShown bounds from below what the enabled child c of a section shown
// in full costs: its block in full when it is FULL, else the least of its
// summary and, when it may be opened, its block in full.
func (s *solver) lowerShown(c int) (int, error) {
	if s.r.modes[c] == visibility.Full {
		return s.lower(c, fullBlock)
	}
	v, err := s.lowerSummary(c)
	if err == nil && s.openable(c) {
		// A body that fails to render keeps c summarized (see showOptional).
		w, ferr := s.lower(c, fullBlock)
		switch {
		case ferr == nil:
			v = min(v, w)
		case s.r.cand[c]:
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
	v, err := s.lower(c, summaryKind(s.r.brief[c], false))
	if err == nil && s.hasKids(c) {
		var w int
		w, err = s.lower(c, summaryKind(s.r.brief[c], true))
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
	s.plan = append(s.plan, asSummary(c, k))
	return sc, nil
}

// cheapest returns how node i's summary, or its brief when the budget
// shortened it, is cheapest written, and its cost: with the compact suffix
// when it has enabled children and that costs fewer tokens.
func (s *solver) cheapest(i int) (blockKind, int, error) {
	def := summaryKind(s.r.brief[i], false)
	if !s.hasKids(i) {
		c, err := s.cost(i, def)
		return def, c, err
	}
	k := summaryKind(s.r.brief[i], true)
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

// hasKids reports whether node i has enabled children, so that its compact
// suffix differs from the default one.
func (s *solver) hasKids(i int) bool {
	return enabledKids{s.p.t.nodes, s.p.t.nodes[i].children, s.pr.enabled}.any()
}

// openable reports whether the budget may show the SUMMARY section i in
// full when its content costs no more than its summary: not when the
// session summarized it, nor when that would offer tools, nor, unless the
// section was FULL before the budget, when measuring its content would run
// a Content function (which may read files or screens the render need not).
func (s *solver) openable(i int) bool {
	return s.r.whys[i] != visibility.Overridden && !s.pr.hasTools[i] && (s.r.cand[i] || !s.p.t.hot[i].is(liveBelow))
}
