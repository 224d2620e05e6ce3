package prompt

import (
	"cmp"
	"slices"
	"strings"

	"github.com/unfold-dev/unfold/visibility"
)

// form is how a visible section is written: in full, as its summary, or,
// when a budget shortened it, as its brief (a shorter summary,
// section.Spec.Brief). A brief is SUMMARY mode in every other respect.
type form uint8

const (
	fullForm form = iota
	summaryForm
	briefForm
)

// formOf is the form of a section in mode m, shortened to its brief or not.
func formOf(m visibility.Mode, brief bool) form {
	switch {
	case m == visibility.Full:
		return fullForm
	case brief:
		return briefForm
	}
	return summaryForm
}

// form returns the form node i is written in by r.
func (r *Rendered) form(i int) form {
	return formOf(r.modes[i], r.brief != nil && r.brief[i])
}

// briefBlock returns node i's block as its brief: heading, brief and the
// line telling the model how to open it, as a summary's.
func (p *Prompt) briefBlock(i int) string {
	lb := &p.briefs[i]
	if lb.done.Load() {
		return lb.text
	}
	n := &p.t.nodes[i]
	var b strings.Builder
	b.Grow(len(n.heading) + len(n.sec.Brief()) + 2*len(n.path) + 160)
	b.WriteString(n.heading)
	b.WriteString("\n\n")
	b.WriteString(n.sec.Brief())
	pr := p.prepare()
	writeSuffix(&b, n.path, enabledKids{p.t.nodes, n.children, pr.enabled}, pr.hasTools[i])
	p.cacheMu.Lock()
	if !lb.done.Load() {
		lb.text = b.String()
		lb.done.Store(true)
	}
	p.cacheMu.Unlock()
	return lb.text
}

// block returns node i's block written as f, for counting: the summary or
// the brief, or the heading and the body as r renders them.
func (p *Prompt) block(r *Rendered, i int, f form) (string, error) {
	switch f {
	case summaryForm:
		return p.summary(i), nil
	case briefForm:
		return p.briefBlock(i), nil
	}
	n := &p.t.nodes[i]
	body, err := r.body(i)
	if err != nil || body == "" {
		return n.heading, err
	}
	return n.heading + "\n\n" + body, nil
}

// briefCandidates lists the sections a budget may shorten to their brief:
// enabled, with a brief, SUMMARY (declared, selected, overridden to it, or
// demoted by the budget already) and not shortened yet.
func (p *Prompt) briefCandidates(r *Rendered) []int {
	pr := p.prepare()
	var out []int
	for i, n := range p.t.nodes {
		if pr.enabled[i] && r.modes[i] == visibility.Summary && n.sec.Brief() != "" && !r.brief[i] {
			out = append(out, i)
		}
	}
	return out
}

// budgetOrder sorts nodes in the order a budget demotes them: lowest
// priority first, then deeper, then later; it gives them back in the
// reverse order.
func (p *Prompt) budgetOrder(list []int) []int {
	nodes := p.t.nodes
	slices.SortFunc(list, func(a, b int) int {
		return cmp.Or(
			cmp.Compare(nodes[a].sec.Priority(), nodes[b].sec.Priority()),
			cmp.Compare(nodes[b].depth, nodes[a].depth),
			cmp.Compare(b, a),
		)
	})
	return list
}
