package prompt

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/unfold-dev/unfold/tokens"
	"github.com/unfold-dev/unfold/visibility"
)

// ErrOverBudget is matched (errors.Is) by a [*BudgetError].
var ErrOverBudget = errors.New("prompt does not fit the token budget")

// BudgetError says that even the smallest prompt a budget can reach, with
// every section that may be summarized summarized, is too large.
type BudgetError struct {
	Budget  int             // the budget, in tokens
	Minimum int             // the smallest prompt reachable, in tokens
	Largest []SectionTokens // the largest sections of that prompt, largest first (at most 5)
	// Opened are the sections the session opened, which the budget may
	// not summarize, in tree order: each with the tokens of all it shows,
	// its block and those of the sections shown under it.
	Opened []SectionTokens
}

// SectionTokens is a section's path and its tokens.
type SectionTokens struct {
	Path   string `json:"path"`
	Tokens int    `json:"tokens"`
}

func (e *BudgetError) Error() string {
	parts := make([]string, len(e.Largest))
	for i, s := range e.Largest {
		parts[i] = fmt.Sprintf("%s (%d)", s.Path, s.Tokens)
	}
	return fmt.Sprintf("budget of %d tokens cannot be met: the smallest reachable prompt is %d tokens (%d over); largest sections: %s; raise the budget, add summaries to large sections, or close opened ones",
		e.Budget, e.Minimum, e.Minimum-e.Budget, strings.Join(parts, ", "))
}

// Is makes errors.Is(err, ErrOverBudget) true.
func (e *BudgetError) Is(target error) bool { return target == ErrOverBudget }

// refit runs when the text's count is over budget though its blocks' were
// not (a counter whose counts do not add up, see tokens.Additive): it
// summarizes further by the difference and counts again.
func (p *Prompt) refit(r *Rendered, cfg renderConfig) error {
	t := p.countTable(cfg.counter)
	_, additive := cfg.counter.(tokens.Additive)
	for r.total > cfg.budget {
		slack := r.total - p.blockSum(r)
		more, err := p.demote(r, t, cfg.budget-max(slack, 1))
		if err != nil {
			return err
		}
		if !more {
			return p.budgetError(r, cfg.budget, r.total)
		}
		if err := p.tally(r, t); err != nil {
			return err
		}
		if err := p.emit(r); err != nil {
			return err
		}
		if !additive {
			r.total = cfg.counter.Count(r.text)
		}
	}
	return nil
}

// blockSum is the sum of the visible blocks' counts.
func (p *Prompt) blockSum(r *Rendered) int {
	sum := 0
	for i, st := range r.st {
		if st.is(visibleF) {
			sum += int(r.tokens[i])
		}
	}
	return sum
}

// demote makes the prompt smaller until its block sum is at most target:
// compact suffixes first, then briefs for the summaries that have one, then
// summaries for the candidates shown in full, lowest priority first. It
// reports whether it changed anything.
func (p *Prompt) demote(r *Rendered, t *countTable, target int) (bool, error) {
	sum := p.blockSum(r)
	if sum <= target {
		return false, nil
	}
	pr := r.pr
	order := p.t.budgetOrder()
	demoted := false
	// shorten writes the visible node i as k when that is smaller.
	shorten := func(i int, k blockKind) error {
		c, err := p.cost(r, t, i, k, sep)
		if err != nil || c >= int(r.tokens[i]) {
			return err
		}
		sum += c - int(r.tokens[i])
		r.st[i].set(briefF, k.brief())
		r.st[i].set(compactF, k.compact())
		r.tokens[i] = int32(c)
		r.st[i].why = visibility.Budget
		demoted = true
		return nil
	}
	for k := len(order) - 1; k >= 0 && sum > target; k-- {
		if i := int(order[k]); r.st[i].is(visibleF) && r.st[i].mode == visibility.Summary && !r.st[i].is(compactF) && pr.hasKids(i) {
			if err := shorten(i, summaryKind(r.st[i].is(briefF), true)); err != nil {
				return demoted, err
			}
		}
	}
	for k := len(order) - 1; k >= 0 && sum > target; k-- {
		if i := int(order[k]); r.st[i].is(visibleF) && r.st[i].mode == visibility.Summary && !r.st[i].is(briefF) && p.hasBrief(i) {
			if r.st[i].why != visibility.Budget {
				r.st[i].declared = r.st[i].why
			}
			if err := shorten(i, summaryKind(true, r.st[i].is(compactF))); err != nil {
				return demoted, err
			}
		}
	}
	for k := len(order) - 1; k >= 0 && sum > target; k-- {
		i := int(order[k])
		if !r.st[i].is(candF) || !r.st[i].is(visibleF) || r.st[i].mode != visibility.Full {
			continue
		}
		// Its summary as it costs least: a brief is meant to be the
		// shorter, but only a count says.
		to, c := fullBlock, 0
		for k := numKinds - 1; k > fullBlock; k-- {
			if k.brief() && !p.hasBrief(i) || k.compact() && !pr.hasKids(i) {
				continue
			}
			kc, err := p.cost(r, t, i, k, sep)
			if err != nil {
				return demoted, err
			}
			if to == fullBlock || kc <= c {
				to, c = k, kc
			}
		}
		n := &p.t.nodes[i]
		shown := int(r.tokens[i])
		for j := i + 1; j < n.end; j++ {
			if r.st[j].is(visibleF) {
				shown += int(r.tokens[j])
			}
		}
		if c >= shown {
			continue // its summary costs as much as it saves
		}
		for j := i + 1; j < n.end; j++ {
			r.st[j].flags &^= visibleF
		}
		sum += c - shown
		r.st[i].mode, r.st[i].why, r.tokens[i] = visibility.Summary, visibility.Budget, int32(c)
		r.st[i].set(briefF, to.brief())
		r.st[i].set(compactF, to.compact())
		demoted = true
	}
	return demoted, nil
}

// protect marks with candF the sections a budget may not summarize
// although they are visible, FULL and have a summary: those the session
// opened and those that hold one. A render without overrides has none.
func (p *Prompt) protect(r *Rendered) {
	if !r.overridden {
		return
	}
	st := r.st
	for i := len(st) - 1; i >= 0; i-- {
		if st[i].why == visibility.Overridden && st[i].mode == visibility.Full && st[i].is(visibleF) {
			st[i].flags |= candF
		}
		if parent := p.t.hot[i].parent; st[i].is(candF) && parent >= 0 {
			st[parent].flags |= candF
		}
	}
}

func (p *Prompt) budgetError(r *Rendered, budget, minimum int) error {
	var largest []SectionTokens
	for i, st := range r.st {
		if st.is(visibleF) {
			largest = append(largest, SectionTokens{Path: p.t.nodes[i].path, Tokens: int(r.tokens[i])})
		}
	}
	slices.SortStableFunc(largest, func(a, b SectionTokens) int { return cmp.Compare(b.Tokens, a.Tokens) })
	if len(largest) > 5 {
		largest = largest[:5]
	}
	return &BudgetError{Budget: budget, Minimum: minimum, Largest: largest, Opened: p.opened(r)}
}

// opened lists the sections r shows in full because the session opened
// them, each with the tokens of all it shows.
func (p *Prompt) opened(r *Rendered) []SectionTokens {
	var out []SectionTokens
	for i, st := range r.st {
		if !st.is(visibleF) || st.mode != visibility.Full || st.why != visibility.Overridden {
			continue
		}
		n := 0
		for j := i; j < p.t.nodes[i].end; j++ {
			if r.st[j].is(visibleF) {
				n += int(r.tokens[j])
			}
		}
		out = append(out, SectionTokens{Path: p.t.nodes[i].path, Tokens: n})
	}
	return out
}

// budgetOrder returns the template's sections in the order a budget gives
// them back in full: highest priority first, then shallower, then earlier.
// It is computed once, by counting sort over the distinct (priority, depth)
// pairs, of which a tree has few.
func (t *Template) budgetOrder() []int32 {
	t.orderOnce.Do(func() {
		type key struct{ priority, depth int }
		ids := map[key]int{}
		var keys []key
		bucket := make([]int, len(t.nodes))
		prev, prevID := key{}, -1
		for i := range t.nodes {
			k := key{t.nodes[i].sec.Priority(), t.nodes[i].depth}
			if prevID < 0 || k != prev {
				id, ok := ids[k]
				if !ok {
					id = len(keys)
					ids[k] = id
					keys = append(keys, k)
				}
				prev, prevID = k, id
			}
			bucket[i] = prevID
		}
		rank := make([]int, len(keys))
		for i := range rank {
			rank[i] = i
		}
		slices.SortFunc(rank, func(a, b int) int {
			return cmp.Or(cmp.Compare(keys[b].priority, keys[a].priority), cmp.Compare(keys[a].depth, keys[b].depth))
		})
		start := make([]int, len(keys)) // by bucket: where its sections go
		for i := range bucket {
			start[bucket[i]]++
		}
		at := 0
		for _, b := range rank {
			at, start[b] = at+start[b], at
		}
		t.order = make([]int32, len(t.nodes))
		for i, b := range bucket {
			t.order[start[b]] = int32(i)
			start[b]++
		}
	})
	return t.order
}
