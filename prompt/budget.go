package prompt

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

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

// countKey identifies a cached token count: one section in one form.
type countKey struct {
	node int
	form form
}

// countCache holds the token counts of a Prompt's fixed blocks for the
// counter used last; a render with another counter starts it afresh, so it
// never holds more than one count per block and mode.
type countCache struct {
	mu      sync.Mutex // guards counter and counts
	counter tokens.Counter
	counts  map[countKey]int
}

// lookup returns the cached count for key under counter c.
func (cc *countCache) lookup(c tokens.Counter, key countKey) (int, bool) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if !sameCounter(cc.counter, c) {
		return 0, false
	}
	v, ok := cc.counts[key]
	return v, ok
}

func (cc *countCache) store(c tokens.Counter, key countKey, v int) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if !sameCounter(cc.counter, c) {
		cc.counter, cc.counts = c, map[countKey]int{}
	}
	cc.counts[key] = v
}

// sameCounter reports whether a and b are the same counter; counters whose
// dynamic type cannot be compared (a func, or a struct holding one) never
// are, and are simply not cached.
func sameCounter(a, b tokens.Counter) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a != nil && a == b
}

// blockTokens counts the tokens of node i's block written as f, as r
// renders it. Counts of fixed blocks are cached per Prompt, so fitting a
// budget costs about one exact count of the prompt the first time and table
// lookups after that.
func (p *Prompt) blockTokens(r *Rendered, c tokens.Counter, i int, f form) (int, error) {
	key := countKey{i, f}
	cacheable := f != fullForm || !p.t.nodes[i].sec.Live()
	if cacheable {
		if v, ok := p.counts.lookup(c, key); ok {
			return v, nil
		}
	}
	text, err := p.block(r, i, f)
	if err != nil {
		return 0, err
	}
	v := c.Count(text)
	if cacheable {
		p.counts.store(c, key, v)
	}
	return v, nil
}

// count fills r.tokens for the visible sections and, under a budget, fits
// the prompt into it.
func (p *Prompt) count(r *Rendered, cfg renderConfig) error {
	r.tokens = make([]int, len(p.t.nodes))
	r.declared = make([]visibility.Why, len(p.t.nodes))
	if cfg.budget > 0 {
		r.brief = make([]bool, len(p.t.nodes))
		return p.fit(r, cfg.counter, cfg.budget)
	}
	for i := range p.t.nodes {
		if !r.visible[i] {
			continue
		}
		v, err := p.blockTokens(r, cfg.counter, i, r.form(i))
		if err != nil {
			return err
		}
		r.tokens[i] = v
	}
	return nil
}

// fit summarizes every section the budget may summarize (see candidates),
// then gives them back in full, highest priority first (then shallower, then
// earlier), each one that still fits; what stays summarized was demoted
// lowest priority first. A candidate under a summarized section comes back
// in full with that section, if it does.
//
// Counting is the cost of fitting, so fit counts little: the smallest prompt,
// and a section with what it would show only when a lower bound (from
// counters that give one, see tokens.LowerBounder) does not already rule it
// out. A prompt of a thousand sections fitted into a few thousand tokens
// counts about what it shows.
func (p *Prompt) fit(r *Rendered, c tokens.Counter, budget int) error {
	nodes := p.t.nodes
	cands := p.candidates(r)
	full := make(map[int]bool, len(cands)) // the candidates declared FULL
	for _, i := range cands {
		full[i] = true
		r.declared[i] = r.whys[i]
		r.modes[i], r.whys[i] = visibility.Summary, visibility.Budget
	}
	// Then every summary that has a brief is shortened to it.
	briefs := p.briefCandidates(r)
	for _, i := range briefs {
		if !full[i] {
			r.declared[i] = r.whys[i]
		}
		r.brief[i], r.whys[i] = true, visibility.Budget
	}
	order := p.budgetOrder(append(cands, slices.DeleteFunc(briefs, func(i int) bool { return full[i] })...))
	pr := p.prepare()
	sum, blocks := 0, 0
	for i := range nodes {
		n := &nodes[i]
		r.visible[i] = pr.enabled[i] && (n.parent < 0 || (r.visible[n.parent] && r.modes[n.parent] == visibility.Full))
		if !r.visible[i] {
			continue
		}
		v, err := p.blockTokens(r, c, i, r.form(i))
		if err != nil {
			return err
		}
		r.tokens[i] = v
		sum += v
		blocks++
	}
	sum += max(blocks-1, 0)
	lb, _ := c.(tokens.LowerBounder)
	var shown []int
	for k := len(order) - 1; k >= 0; k-- {
		i := order[k]
		if !r.visible[i] {
			// It comes back as declared with the section that hides it.
			if full[i] {
				r.modes[i] = visibility.Full
			}
			r.brief[i], r.whys[i] = false, r.declared[i]
			continue
		}
		if full[i] {
			ok, err := p.giveBack(r, c, lb, i, budget, &sum, &shown)
			if err != nil {
				return err
			}
			if ok {
				continue
			}
		}
		if !r.brief[i] {
			continue
		}
		st, err := p.blockTokens(r, c, i, summaryForm)
		if err != nil {
			return err
		}
		if delta := st - r.tokens[i]; delta <= 0 || sum+delta <= budget {
			sum += delta
			r.brief[i], r.tokens[i] = false, st
			if !full[i] {
				r.whys[i] = r.declared[i]
			}
		}
	}
	if sum > budget {
		return p.budgetError(r, budget, sum)
	}
	return nil
}

// giveBack shows the visible SUMMARY candidate i in full when it fits with
// what it reveals, updating sum; shown is scratch space.
func (p *Prompt) giveBack(r *Rendered, c tokens.Counter, lb tokens.LowerBounder, i, budget int, sum *int, shown *[]int) (bool, error) {
	*shown = p.revealed(r, i, (*shown)[:0])
	if lb != nil {
		lo, err := p.lowerDelta(r, c, lb, i, *shown)
		if err != nil {
			return false, err
		}
		if lo > 0 && *sum+lo > budget {
			return false, nil
		}
	}
	full, err := p.blockTokens(r, c, i, fullForm)
	if err != nil {
		return false, err
	}
	delta := full - r.tokens[i]
	for _, j := range *shown {
		v, err := p.blockTokens(r, c, j, r.form(j))
		if err != nil {
			return false, err
		}
		delta += v + 1
	}
	if delta > 0 && *sum+delta > budget {
		return false, nil
	}
	*sum += delta
	r.modes[i], r.whys[i], r.tokens[i], r.brief[i] = visibility.Full, r.declared[i], full, false
	for _, j := range *shown {
		r.visible[j] = true
		r.tokens[j], _ = p.blockTokens(r, c, j, r.form(j)) // counted above
	}
	return true, nil
}

// revealed appends to out the descendants of the visible SUMMARY section i
// that would show were i FULL: enabled, with every section between them and
// i FULL.
func (p *Prompt) revealed(r *Rendered, i int, out []int) []int {
	nodes := p.t.nodes
	pr := p.prepare()
	start := len(out)
	for j := i + 1; j < nodes[i].end; j++ {
		parent := nodes[j].parent
		if !pr.enabled[j] || (parent != i && (r.modes[parent] != visibility.Full || !slices.Contains(out[start:], parent))) {
			continue
		}
		out = append(out, j)
	}
	return out
}

// lowerDelta bounds from below what giving the visible SUMMARY section i
// back in full, with the sections it would show, adds to the prompt. Counts
// already known are used as they are.
func (p *Prompt) lowerDelta(r *Rendered, c tokens.Counter, lb tokens.LowerBounder, i int, shown []int) (int, error) {
	lo, err := p.lowerBlock(r, c, lb, i, fullForm)
	if err != nil {
		return 0, err
	}
	lo -= r.tokens[i]
	for _, j := range shown {
		v, err := p.lowerBlock(r, c, lb, j, r.form(j))
		if err != nil {
			return 0, err
		}
		lo += v + 1
	}
	return lo, nil
}

// lowerBlock is a lower bound of blockTokens: the cached count when there is
// one, the counter's bound otherwise.
func (p *Prompt) lowerBlock(r *Rendered, c tokens.Counter, lb tokens.LowerBounder, i int, f form) (int, error) {
	n := &p.t.nodes[i]
	if f != fullForm || !n.sec.Live() {
		if v, ok := p.counts.lookup(c, countKey{i, f}); ok {
			return v, nil
		}
	}
	if f != fullForm {
		text, _ := p.block(r, i, f)
		return lb.LowerBound(text), nil
	}
	body, err := r.body(i)
	if err != nil {
		return 0, err
	}
	// Bounds add up across the blank line between heading and body.
	return lb.LowerBound(n.heading) + lb.LowerBound(body), nil
}

// refit runs after the whole text was counted and found over budget: block
// counts do not add up exactly to the count of the whole, so it demotes
// further by the difference, renders and counts again.
func (p *Prompt) refit(r *Rendered, cfg renderConfig) error {
	for r.total > cfg.budget {
		slack := r.total - p.blockSum(r)
		more, _, err := p.demote(r, cfg.counter, cfg.budget-max(slack, 1))
		if err != nil {
			return err
		}
		if !more {
			return p.budgetError(r, cfg.budget, r.total)
		}
		if err := p.emit(r); err != nil {
			return err
		}
		r.total = cfg.counter.Count(r.text)
	}
	return nil
}

// blockSum estimates the prompt's tokens from its blocks: their counts plus
// one token for each blank line between them.
func (p *Prompt) blockSum(r *Rendered) int {
	sum, blocks := 0, 0
	for i, v := range r.visible {
		if v {
			sum += r.tokens[i]
			blocks++
		}
	}
	return sum + max(blocks-1, 0)
}

// demote summarizes sections, in budget order, until the block sum is at most
// target. It returns whether it demoted anything and the block sum it
// reached, which is still over target when nothing more could be demoted.
func (p *Prompt) demote(r *Rendered, c tokens.Counter, target int) (demoted bool, sum int, err error) {
	sum = p.blockSum(r)
	if sum <= target {
		return false, sum, nil
	}
	var briefs []int
	if r.brief != nil {
		briefs = p.briefCandidates(r)
	}
	for _, i := range p.budgetOrder(append(p.candidates(r), briefs...)) {
		if !r.visible[i] {
			continue // hidden by a section demoted before it
		}
		// A section in full goes to its brief when it has one, else to its
		// summary; a summary goes to its brief.
		to := briefForm
		if p.t.nodes[i].sec.Brief() == "" {
			to = summaryForm
		}
		st, err := p.blockTokens(r, c, i, to)
		if err != nil {
			return demoted, sum, err
		}
		n := &p.t.nodes[i]
		cost := r.tokens[i]
		if r.modes[i] == visibility.Full {
			for j := i + 1; j < n.end; j++ {
				if r.visible[j] {
					cost += r.tokens[j] + 1
				}
			}
		}
		if st >= cost {
			continue // its shorter form, with the suffix, costs as much as it saves
		}
		for j := i + 1; j < n.end; j++ {
			r.visible[j] = false
		}
		sum += st - cost
		if r.whys[i] != visibility.Budget {
			r.declared[i] = r.whys[i]
		}
		r.modes[i], r.whys[i], r.tokens[i] = visibility.Summary, visibility.Budget, st
		r.brief[i] = to == briefForm
		demoted = true
		if sum <= target {
			break
		}
	}
	return demoted, sum, nil
}

// candidates lists the sections a budget may summarize, in the order it
// does: visible, FULL, with a summary, neither opened through the session nor
// holding an opened section; lowest priority first, then deeper, then later.
func (p *Prompt) candidates(r *Rendered) []int {
	nodes := p.t.nodes
	protected := make([]bool, len(nodes))
	for i := len(nodes) - 1; i >= 0; i-- {
		if r.whys[i] == visibility.Overridden && r.modes[i] == visibility.Full && r.visible[i] {
			protected[i] = true
		}
		if protected[i] && nodes[i].parent >= 0 {
			protected[nodes[i].parent] = true
		}
	}
	var out []int
	for i := range nodes {
		if r.visible[i] && r.modes[i] == visibility.Full && p.hasSummary(i) && !protected[i] {
			out = append(out, i)
		}
	}
	return p.budgetOrder(out)
}

func (p *Prompt) budgetError(r *Rendered, budget, minimum int) error {
	var largest []SectionTokens
	for i, v := range r.visible {
		if v {
			largest = append(largest, SectionTokens{Path: p.t.nodes[i].path, Tokens: r.tokens[i]})
		}
	}
	slices.SortStableFunc(largest, func(a, b SectionTokens) int { return cmp.Compare(b.Tokens, a.Tokens) })
	if len(largest) > 5 {
		largest = largest[:5]
	}
	return &BudgetError{Budget: budget, Minimum: minimum, Largest: largest}
}
