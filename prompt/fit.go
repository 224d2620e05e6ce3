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
	// sum is the visible blocks' counts, each with the blank line after
	// it; the prompt's count is sum+adj, adj being what the last visible
	// block, last, costs less without the blank line.
	sum, adj, last int
	plan           []change // what showing a section changes; scratch
	los            []int    // lower bounds of children, for show; scratch
}

// change is one section's mode in a plan: FULL, or SUMMARY written as
// summary or brief, with the default or the compact suffix.
type change struct {
	node           int
	mode           visibility.Mode
	brief, compact bool
}

func (ch change) kind() blockKind {
	if ch.mode == visibility.Full {
		return fullBlock
	}
	return summaryKind(ch.brief, ch.compact)
}

// asSummary is the change that writes node i as the SUMMARY block k.
func asSummary(i int, k blockKind) change {
	return change{node: i, mode: visibility.Summary, brief: k.brief(), compact: k.compact()}
}

// adjSlack is how much more a plan may cost, while it is made, than the
// room left, when it may end the prompt: the last block is counted without
// the blank line after it, which saves a token or two.
const adjSlack = 4

// fit decides which sections a budget summarizes, in four steps:
//
//  1. The smallest prompt: every section the budget may summarize (see
//     candidates) is, every summary that has a brief is shortened to it,
//     with the compact suffix where that is smaller, and every summarized
//     section whose content costs no more than its summary is shown in
//     full instead (see show). When even this is over the budget, fit
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
// time in proportion to the number of sections.
func (p *Prompt) fit(r *Rendered, t *countTable, budget int) error {
	s := &solver{p: p, r: r, t: t, pr: r.pr, budget: budget, last: -1}
	s.lb, _ = t.counter.(tokens.LowerBounder)
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
	return s.restoreSummaries(order)
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

// smallest summarizes every candidate and then shows in full each
// summarized section whose content costs no more than its summary.
func (s *solver) smallest() error {
	r, nodes := s.r, s.p.t.nodes
	r.cand = s.p.candidates(r)
	r.declared = make([]visibility.Why, len(nodes))
	r.compact = make([]bool, len(nodes))
	r.brief = make([]bool, len(nodes))
	for i, c := range r.cand {
		if c {
			r.declared[i] = r.whys[i]
			r.modes[i], r.whys[i] = visibility.Summary, visibility.Budget
		}
	}
	if s.p.t.briefs {
		// Then every summary that has a brief is shortened to it.
		for i := range nodes {
			if s.pr.enabled[i] && r.modes[i] == visibility.Summary && s.p.hasBrief(i) {
				if !r.cand[i] {
					r.declared[i] = r.whys[i]
				}
				r.brief[i], r.whys[i] = true, visibility.Budget
			}
		}
	}
	for i, h := range s.p.t.hot {
		r.visible[i] = s.pr.enabled[i] && (h.parent < 0 || (r.visible[h.parent] && r.modes[h.parent] == visibility.Full))
		if !r.visible[i] {
			continue
		}
		var c int
		var err error
		if r.modes[i] == visibility.Full {
			c, err = s.cost(i, fullBlock)
		} else {
			var k blockKind
			k, c, err = s.cheapest(i)
			r.compact[i] = k.compact()
		}
		if err != nil {
			return err
		}
		s.sum += c
		s.last = i
	}
	if s.last >= 0 {
		var err error
		if s.adj, err = s.adjOf(s.last, r.kind(s.last)); err != nil {
			return err
		}
	}
	for i := range nodes {
		if !r.visible[i] || r.modes[i] == visibility.Full || !s.openable(i) {
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
	if err != nil && !s.r.cand[i] {
		return c, false, nil
	}
	return c, ok, err
}

// giveBack shows candidates in full, in order, each one that fits.
func (s *solver) giveBack(order []int32) error {
	r := s.r
	for _, i32 := range order {
		i := int(i32)
		cand, briefed := r.cand[i], r.brief[i]
		if !cand && !briefed || r.modes[i] == visibility.Full {
			continue
		}
		if !r.visible[i] {
			// It comes back as declared with the section that hides it.
			if cand {
				r.modes[i] = visibility.Full
			}
			r.whys[i], r.brief[i] = r.declared[i], false
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
		if !r.visible[i] || r.modes[i] != visibility.Summary || !r.brief[i] {
			continue
		}
		cur, err := s.cost(i, r.kind(i))
		if err != nil {
			return err
		}
		k := summaryKind(false, r.compact[i])
		c, err := s.cost(i, k)
		if err != nil {
			return err
		}
		s.plan = append(s.plan[:0], asSummary(i, k))
		done, err := s.accept(c, cur, s.budget)
		if err != nil {
			return err
		}
		if done && !r.cand[i] {
			r.whys[i] = r.declared[i]
		}
	}
	return nil
}

// restoreSuffixes gives compact summaries back their default suffix, in
// order, each one that fits; a section whose content costs no more than its
// summary with the default suffix is shown in full instead.
func (s *solver) restoreSuffixes(order []int32) error {
	r := s.r
	for _, i32 := range order {
		i := int(i32)
		if !r.visible[i] || r.modes[i] != visibility.Summary || !r.compact[i] {
			continue
		}
		cur, err := s.cost(i, r.kind(i))
		if err != nil {
			return err
		}
		dk := summaryKind(r.brief[i], false)
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
		s.plan = append(s.plan[:0], asSummary(i, dk))
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
		r.visible[i] = true
		if ch.mode == visibility.Full && r.modes[i] != visibility.Full {
			if r.cand[i] {
				r.whys[i] = r.declared[i]
			} else {
				r.whys[i] = visibility.Budget // its content costs no more than its summary
			}
		}
		r.modes[i], r.brief[i], r.compact[i] = ch.mode, ch.brief, ch.compact
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
	kids := s.p.t.nodes[i].children
	// rest bounds from below what the children not counted yet cost; their
	// bounds are kept on s.los from base on, for the second loop.
	rest, base := 0, len(s.los)
	defer func() { s.los = s.los[:base] }()
	if s.lb != nil {
		lo, err := s.lower(i, fullBlock)
		if err != nil || lo > limit {
			return lo, false, err
		}
		for _, c := range kids {
			if !s.pr.enabled[c] {
				continue
			}
			v, err := s.lowerShown(c)
			if err != nil {
				return 0, false, err
			}
			s.los = append(s.los, v)
			if rest += v; lo+rest > limit {
				return lo + rest, false, nil
			}
		}
	}
	if cost, err = s.cost(i, fullBlock); err != nil || cost+rest > limit {
		return cost + rest, false, err
	}
	s.plan = append(s.plan, change{node: i, mode: visibility.Full})
	next := base
	for _, c := range kids {
		if !s.pr.enabled[c] {
			continue
		}
		if s.lb != nil {
			rest -= s.los[next]
			next++
		}
		var sub int
		if s.r.modes[c] == visibility.Full {
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
