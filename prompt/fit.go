package prompt

import (
	"github.com/unfold-dev/unfold/tokens"
	"github.com/unfold-dev/unfold/visibility"
)

// solver fits one render into a budget; see fit.
type solver struct {
	p      *Prompt
	r      *Rendered
	t      *countTable
	lb     tokens.LowerBounder // nil when the counter gives no bound
	pr     *prepared
	budget int
	// again is set when the count table served a fit before: then show
	// works out the bounds it needs for floors (see keepFloor).
	again bool
	// sum is the visible blocks' counts, each with the blank line after
	// it; the prompt's count is sum+adj, adj being what the last visible
	// block, last, costs less without the blank line.
	sum, adj, last int
	plan           []change // what showing a section changes; scratch
	los            []int    // lower bounds of children, for show; scratch
}

// change is one section's mode in a plan: FULL, or SUMMARY written as
// summary or brief, with the default or the compact suffix; and what its
// block then costs.
type change struct {
	node           int
	cost           int
	mode           visibility.Mode
	brief, compact bool
}

func (ch change) kind() blockKind {
	if ch.mode == visibility.Full {
		return fullBlock
	}
	return summaryKind(ch.brief, ch.compact)
}

// asSummary is the change that writes node i as the SUMMARY block k, which
// costs c.
func asSummary(i int, k blockKind, c int) change {
	return change{node: i, cost: c, mode: visibility.Summary, brief: k.brief(), compact: k.compact()}
}

// adjSlack is how much more a plan may cost, while it is made, than the
// room left, when it may end the prompt: the last block is counted without
// the blank line after it, which saves a token or two.
const adjSlack = 4

// fit decides which sections a budget summarizes, in four steps:
//
//  1. The smallest prompt: every section the budget may summarize (see
//     smallest) is, every summary that has a brief is written as the
//     cheapest of the two, with the compact suffix where that is smaller
//     (see cheapest), and every summarized section whose content costs no
//     more than its summary is shown in full instead (see show). When even this is over the budget, fit
//     fails with a *BudgetError.
//  2. Sections are given back in full, highest priority first (then
//     shallower, then earlier), each one that still fits with what it
//     reveals; a section hidden under a summarized one comes back as
//     declared with it, if it does.
//  3. Compact suffixes go back to the default one, in the same order, while
//     they fit: the compact suffix is only there to show more in full.
//  4. Briefs give their summary back, in the same order, while it fits.
//
// Counting is the cost of fitting, so fit counts little: it counts what the
// smallest prompt shows, and a section with what it would reveal only when a
// lower bound (tokens.LowerBounder) does not already rule it out, stopping as
// soon as the count passes the room left. Every section is looked at a fixed
// number of times, in an order computed once per Template, so fitting takes
// time in proportion to the number of sections; and what a pass reads of a
// section sits in arrays of a few bytes a section (nodeHot, nodeState,
// prepared, the count table's records), so that the time per section
// stays the same when the tree outgrows the processor's caches. A prompt
// fitted again passes over a section that cannot fit without looking at
// its children (see keepFloor).
//
// fit leaves r.tokens and r.total set to the counts of what it shows.
func (p *Prompt) fit(r *Rendered, t *countTable, budget int) error {
	s := &solver{p: p, r: r, t: t, pr: r.pr, budget: budget, last: -1, again: t.fitted.Load()}
	s.lb, _ = t.counter.(tokens.LowerBounder)
	if !s.again {
		t.fitted.Store(true)
	}
	if err := s.smallest(); err != nil {
		return err
	}
	if s.sum+s.adj > budget {
		if err := p.tally(r, t); err != nil {
			return err
		}
		if _, additive := t.counter.(tokens.Additive); !additive {
			// Only the text's own count says whether it fits.
			if err := p.emit(r); err != nil {
				return err
			}
			if r.total = t.counter.Count(r.text); r.total <= budget {
				return nil
			}
		}
		return p.budgetError(r, budget, r.total)
	}
	order := p.t.budgetOrder()
	if err := s.giveBack(order); err != nil {
		return err
	}
	if err := s.restoreSuffixes(order); err != nil {
		return err
	}
	if err := s.restoreSummaries(order); err != nil {
		return err
	}
	// The counts are the solver's: each visible block's, the last one's
	// without the blank line after it.
	if s.last >= 0 {
		r.tokens[s.last] += int32(s.adj)
	}
	r.total = s.sum + s.adj
	return nil
}

// cost is the count of node i's block written as k, with the blank line
// after it.
func (s *solver) cost(i int, k blockKind) (int, error) {
	return s.p.cost(s.r, s.t, i, k, sep)
}

// adjOf is what node i's block written as k costs less without the blank
// line after it.
func (s *solver) adjOf(i int, k blockKind) (int, error) {
	withSep, err := s.cost(i, k)
	if err != nil {
		return 0, err
	}
	without, err := s.p.cost(s.r, s.t, i, k, end)
	return without - withSep, err
}

// smallest summarizes every candidate: every section the budget may
// summarize, visible, FULL, with a summary, neither opened through the
// session nor holding an opened section; writes every summary that has a
// brief as the cheaper of the two; and then shows in full each summarized section whose
// content costs no more than its summary. One pass in tree order does all
// but the last step: a node is decided after its parent, and it reads only
// its own state as the render resolved it.
func (s *solver) smallest() error {
	r, p := s.r, s.p
	r.tokens = make([]int32, len(r.st))
	p.protect(r)
	for i, h := range p.t.hot {
		st := &r.st[i]
		// Until here candF marks the protected sections.
		if st.is(visibleF) && st.mode == visibility.Full && h.is(summarized) && !st.is(candF) {
			st.flags |= candF
			st.declared = st.why
			st.mode, st.why = visibility.Summary, visibility.Budget
		} else {
			st.flags &^= candF
		}
		if h.is(briefed) && s.pr.enabled(i) && st.mode == visibility.Summary {
			if !st.is(candF) {
				st.declared = st.why
			}
			st.flags |= briefF
			st.why = visibility.Budget
		}
		st.set(visibleF, s.pr.enabled(i) && (h.parent < 0 || (r.st[h.parent].is(visibleF) && r.st[h.parent].mode == visibility.Full)))
		if !st.is(visibleF) {
			continue
		}
		var c int
		var err error
		if st.mode == visibility.Full {
			c, err = s.cost(i, fullBlock)
		} else {
			var k blockKind
			k, c, err = s.cheapest(i)
			s.writeAs(i, k)
		}
		if err != nil {
			return err
		}
		r.tokens[i] = int32(c)
		s.sum += c
		s.last = i
	}
	if s.last >= 0 {
		var err error
		if s.adj, err = s.adjOf(s.last, r.kind(s.last)); err != nil {
			return err
		}
	}
	for i, st := range r.st {
		if !st.is(visibleF) || st.mode == visibility.Full || !s.openable(i) {
			continue
		}
		cur, err := s.cost(i, r.kind(i))
		if err != nil {
			return err
		}
		if err := s.try(i, cur, s.sum+s.adj); err != nil {
			return err
		}
	}
	return nil
}

// showOptional is show for a section that need not show in full: when its
// body (or one it would reveal) fails to render, it stays summarized, as it
// would without a budget, rather than failing the render.
func (s *solver) showOptional(i, limit int) (int, bool, error) {
	c, ok, err := s.show(i, limit)
	if err != nil && !s.r.st[i].is(candF) {
		return c, false, nil
	}
	return c, ok, err
}

// giveBack shows candidates in full, in order, each one that fits.
func (s *solver) giveBack(order []int32) error {
	r := s.r
	for _, i32 := range order {
		i := int(i32)
		st := &r.st[i]
		cand := st.is(candF)
		if !cand && !st.is(briefF) || st.mode == visibility.Full {
			continue
		}
		if !st.is(visibleF) {
			// It comes back as declared with the section that hides it.
			if cand {
				st.mode = visibility.Full
			}
			st.why = st.declared
			st.flags &^= briefF
			continue
		}
		cur, err := s.cost(i, r.kind(i))
		if err != nil {
			return err
		}
		if cand {
			if err := s.try(i, cur, s.budget); err != nil {
				return err
			}
		}
	}
	return nil
}

// restoreSummaries gives the summaries shortened to their brief back, in
// order, each one that fits.
func (s *solver) restoreSummaries(order []int32) error {
	r := s.r
	for _, i32 := range order {
		i := int(i32)
		if st := r.st[i]; !st.is(visibleF) || st.mode != visibility.Summary || !st.is(briefF) {
			continue
		}
		cur, err := s.cost(i, r.kind(i))
		if err != nil {
			return err
		}
		k := summaryKind(false, r.st[i].is(compactF))
		c, err := s.cost(i, k)
		if err != nil {
			return err
		}
		s.plan = append(s.plan[:0], asSummary(i, k, c))
		if _, err := s.accept(c, cur, s.budget); err != nil {
			return err
		}
	}
	return nil
}

// writeAs writes the SUMMARY node i as the summary kind k. A summary the
// budget may have shortened to its brief but that is written in full is
// the session's or the template's again, unless the budget summarized it.
func (s *solver) writeAs(i int, k blockKind) {
	st := &s.r.st[i]
	if st.is(briefF) && !k.brief() && !st.is(candF) {
		st.why = st.declared
	}
	st.set(briefF, k.brief())
	st.set(compactF, k.compact())
}

// restoreSuffixes gives compact summaries back their default suffix, in
// order, each one that fits; a section whose content costs no more than its
// summary with the default suffix is shown in full instead.
func (s *solver) restoreSuffixes(order []int32) error {
	r := s.r
	for _, i32 := range order {
		i := int(i32)
		if st := r.st[i]; !st.is(visibleF) || st.mode != visibility.Summary || !st.is(compactF) {
			continue
		}
		cur, err := s.cost(i, r.kind(i))
		if err != nil {
			return err
		}
		dk := summaryKind(r.st[i].is(briefF), false)
		if s.lb != nil {
			if lo, err := s.lower(i, dk); err != nil || lo > s.limit(i, cur, s.budget) {
				if err != nil {
					return err
				}
				continue // the default suffix cannot fit
			}
		}
		def, err := s.cost(i, dk)
		if err != nil {
			return err
		}
		if s.openable(i) {
			s.plan = s.plan[:0]
			c, ok, err := s.showOptional(i, min(def, s.limit(i, cur, s.budget)))
			if err != nil {
				return err
			}
			if ok && c <= def {
				done, err := s.accept(c, cur, s.budget)
				if err != nil {
					return err
				}
				if done {
					continue
				}
			}
		}
		s.plan = append(s.plan[:0], asSummary(i, dk, def))
		if _, err := s.accept(def, cur, s.budget); err != nil {
			return err
		}
	}
	return nil
}

// limit is what showing the visible SUMMARY node i, which now costs cur,
// may cost for the prompt's count to stay at most most; a little more when i
// is the last block (see adjSlack).
func (s *solver) limit(i, cur, most int) int {
	room := most - s.sum - s.adj + cur
	if i == s.last {
		room += s.adj + adjSlack
	}
	return room
}

// try shows node i, a visible SUMMARY section that now costs cur, in full
// when the prompt's count then is at most most.
func (s *solver) try(i, cur, most int) error {
	s.plan = s.plan[:0]
	c, ok, err := s.showOptional(i, s.limit(i, cur, most))
	if err == nil && ok {
		_, err = s.accept(c, cur, most)
	}
	return err
}

// accept carries out s.plan, which costs c in place of a block that cost
// cur, when the prompt's count then is at most most, and reports whether it
// did.
func (s *solver) accept(c, cur, most int) (bool, error) {
	last, k := s.last, s.r.kind(s.last)
	for _, ch := range s.plan {
		if ch.node >= last {
			last, k = ch.node, ch.kind()
		}
	}
	adj := s.adj
	if last != s.last || k != s.r.kind(s.last) {
		var err error
		if adj, err = s.adjOf(last, k); err != nil {
			return false, err
		}
	}
	if s.sum-cur+c+adj > most {
		return false, nil
	}
	r := s.r
	for _, ch := range s.plan {
		i := ch.node
		st := &r.st[i]
		st.flags |= visibleF
		if ch.mode == visibility.Full && st.mode != visibility.Full {
			if st.is(candF) {
				st.why = st.declared
			} else {
				st.why = visibility.Budget // its content costs no more than its summary
			}
		}
		st.mode = ch.mode
		if ch.mode == visibility.Full {
			st.flags &^= briefF | compactF
		} else {
			s.writeAs(i, ch.kind())
		}
		r.tokens[i] = int32(ch.cost)
	}
	s.sum += c - cur
	s.last, s.adj = last, adj
	return true, nil
}

// show plans showing node i in full, appending to s.plan, and returns the
// cost of that: its block and what it reveals, its enabled children as they
// are, except that a SUMMARY child shows in full when that costs no more.
// It stops as soon as the cost passes limit, and then reports ok false.
func (s *solver) show(i, limit int) (cost int, ok bool, err error) {
	// rest bounds from below what the children not counted yet cost; their
	// bounds are kept on s.los from base on, for the second loop.
	rest, base := 0, len(s.los)
	defer func() { s.los = s.los[:base] }()
	if s.lb != nil {
		lo, err := s.lower(i, fullBlock)
		if err != nil || lo > limit {
			return lo, false, err
		}
		floors := !s.p.t.session
		if f := int(s.t.floorSlot(i).Load()); floors && lo+f > limit {
			return lo + f, false, nil
		}
		// floor adds up the children's least bounds while they are known.
		floor, known := 0, floors
		for _, c := range s.p.t.nodes[i].children {
			if !s.pr.enabled(c) {
				continue
			}
			v, err := s.lowerShown(c)
			if err != nil {
				return 0, false, err
			}
			if known {
				var least int
				least, known = s.leastBound(c)
				floor += least
			}
			s.los = append(s.los, v)
			if rest += v; lo+rest > limit {
				s.keepFloor(i, floor)
				return lo + rest, false, nil
			}
		}
		s.keepFloor(i, floor)
	}
	if cost, err = s.cost(i, fullBlock); err != nil || cost+rest > limit {
		return cost + rest, false, err
	}
	s.plan = append(s.plan, change{node: i, cost: cost, mode: visibility.Full})
	next := base
	for _, c := range s.p.t.nodes[i].children {
		if !s.pr.enabled(c) {
			continue
		}
		if s.lb != nil {
			rest -= s.los[next]
			next++
		}
		var sub int
		if s.r.st[c].mode == visibility.Full {
			if sub, ok, err = s.show(c, limit-cost-rest); err != nil || !ok {
				return cost + sub + rest, false, err
			}
		} else if sub, err = s.shown(c); err != nil {
			return cost, false, err
		}
		if cost += sub; cost+rest > limit {
			return cost + rest, false, nil
		}
	}
	return cost, true, nil
}
