package prompt

import (
	"math"
	"strings"
	"sync/atomic"

	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/tokens"
	"github.com/unfold-dev/unfold/visibility"
)

// blockKind is how a section's block is written.
type blockKind uint8

const (
	fullBlock         blockKind = iota // heading and body
	summaryBlock                       // heading, summary and the default suffix
	compactBlock                       // heading, summary and the compact suffix
	briefBlock                         // heading, brief and the default suffix
	briefCompactBlock                  // heading, brief and the compact suffix
	numKinds
)

// summaryKind is the kind of a SUMMARY block shortened to its brief or
// not, with the compact suffix or not.
func summaryKind(brief, compact bool) blockKind {
	switch {
	case brief && compact:
		return briefCompactBlock
	case brief:
		return briefBlock
	case compact:
		return compactBlock
	}
	return summaryBlock
}

func (k blockKind) brief() bool   { return k == briefBlock || k == briefCompactBlock }
func (k blockKind) compact() bool { return k == compactBlock || k == briefCompactBlock }

// kind returns how r writes node i's block.
func (r *Rendered) kind(i int) blockKind {
	if r.st[i].mode == visibility.Full {
		return fullBlock
	}
	return summaryKind(r.st[i].is(briefF), r.st[i].is(compactF))
}

// A block's tokens are counted with the blank line that follows it in the
// text ("sep"), or, for the last block, without ("end"). Counters that add
// up at headings (tokens.Additive) then count the whole text as the sum of
// its blocks, since every block starts with a heading.
const (
	sep = 0
	end = 1
)

// countTable holds the token counts of a Prompt's fixed blocks under one
// counter: per node and kind, the count with the blank line after the
// block (sep), without it (end), and a lower bound (bound); and the count
// of the node's heading with the blank line after it. Each is stored plus
// one, zero until counted. They are written once and read without a lock.
//
// The fit reads a node's sep counts and bounds together, often for runs of
// siblings: they sit in a record of their own, eight slots (one 32-byte
// half of a cache line) when no section has a brief. The end counts, which
// only the last block needs, sit apart, as do the blocks' sizes in bytes
// (with the blank line after them, plus one), which a tally adds up.
type countTable struct {
	counter  tokens.Counter
	additive bool // counter is tokens.Additive
	kinds    int  // kinds of block a node has slots for: the briefs' only when the template has briefs
	stride   int  // slots of a node's record in n
	n        []atomic.Int32
	ends     []atomic.Int32 // kinds slots per node
	sizes    []atomic.Int32 // kinds slots per node
	fitted   atomic.Bool    // the table served a fit
}

// bound is the slot of a lower bound, beside sep and end.
const bound = 2

func newCountTable(c tokens.Counter, nodes int, briefs bool) *countTable {
	_, additive := c.(tokens.Additive)
	t := &countTable{counter: c, additive: additive, kinds: int(briefBlock), stride: 8}
	if briefs {
		t.kinds, t.stride = int(numKinds), 16
	}
	t.n = make([]atomic.Int32, nodes*t.stride)
	t.ends = make([]atomic.Int32, nodes*t.kinds)
	t.sizes = make([]atomic.Int32, nodes*t.kinds)
	return t
}

func (t *countTable) slot(i int, k blockKind, e int) *atomic.Int32 {
	switch e {
	case end:
		return &t.ends[i*t.kinds+int(k)]
	case bound:
		return &t.n[i*t.stride+2*int(k)+1]
	}
	return &t.n[i*t.stride+2*int(k)]
}

func (t *countTable) headSlot(i int) *atomic.Int32 { return &t.n[i*t.stride+2*t.kinds] }

// floorSlot holds node i's floor (see solver.keepFloor), 0 until known.
func (t *countTable) floorSlot(i int) *atomic.Int32 { return &t.n[i*t.stride+2*t.kinds+1] }

// known returns what lowerCost would for node i's block written as k, the
// count or else the bound, when one is kept.
func (t *countTable) known(i int, k blockKind) (int, bool) {
	if v := t.slot(i, k, sep).Load(); v > 0 {
		return int(v - 1), true
	}
	if v := t.slot(i, k, bound).Load(); v > 0 {
		return int(v - 1), true
	}
	return 0, false
}

// countTable returns the table of counts under c: the Prompt's, which it
// keeps for the counter used last, or a fresh one for a counter that cannot
// be compared (a func, or a struct holding one) and so is never cached.
func (p *Prompt) countTable(c tokens.Counter) *countTable {
	if t := p.counts.Load(); t != nil && sameCounter(t.counter, c) {
		return t
	}
	t := newCountTable(c, len(p.t.nodes), p.t.briefs)
	if sameCounter(c, c) {
		p.counts.Store(t)
	}
	return t
}

// sameCounter reports whether a and b are the same counter; counters whose
// dynamic type cannot be compared never are.
func sameCounter(a, b tokens.Counter) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a != nil && a == b
}

// cost counts the tokens of node i's block written as k, as r renders it,
// with the blank line after it (e == sep) or without (e == end). Counts of
// fixed blocks are cached per Prompt, so a Prompt rendered again counts only
// its Content sections.
func (p *Prompt) cost(r *Rendered, t *countTable, i int, k blockKind, e int) (int, error) {
	cacheable := p.keeps(i, k)
	if cacheable {
		if v := t.slot(i, k, e).Load(); v > 0 {
			return int(v - 1), nil
		}
	}
	text, err := p.blockText(r, i, k, e == sep)
	if err != nil {
		return 0, err
	}
	v := t.counter.Count(text)
	if cacheable && v < math.MaxInt32 {
		if e == sep {
			t.sizes[i*t.kinds+int(k)].Store(int32(len(text) + 1))
		}
		t.slot(i, k, e).Store(int32(v + 1))
	}
	r.size = len(text)
	return v, nil
}

// size returns the bytes of node i's block written as k, with the blank
// line after it, as the cost just asked for it found: kept with its
// count, or of the text the cost wrote.
func (t *countTable) size(r *Rendered, i int, k blockKind) int {
	if v := t.sizes[i*t.kinds+int(k)].Load(); v > 0 {
		return int(v - 1)
	}
	return r.size
}

// keeps reports whether node i's block written as k is the same at every
// render of p, so its count is kept: not a Content body, nor a summary
// whose suffix depends on the session.
func (p *Prompt) keeps(i int, k blockKind) bool {
	if k == fullBlock {
		return !p.t.hot[i].is(live)
	}
	return !p.t.hot[i].is(sessionBelow)
}

// blockText returns node i's block written as k, followed by a blank line
// when withSep.
func (p *Prompt) blockText(r *Rendered, i int, k blockKind, withSep bool) (string, error) {
	n := &p.t.nodes[i]
	var parts [3]string
	switch k {
	case fullBlock:
		body, err := r.body(i)
		if err != nil {
			return "", err
		}
		parts[0] = n.heading
		if body != "" {
			parts[1], parts[2] = "\n\n", body
		}
	default:
		var err error
		if parts[0], err = r.summaryBlock(i, k); err != nil {
			return "", err
		}
	}
	if !withSep && parts[1] == "" {
		return parts[0], nil
	}
	var b strings.Builder
	b.Grow(len(parts[0]) + len(parts[1]) + len(parts[2]) + 2)
	for _, s := range parts {
		b.WriteString(s)
	}
	if withSep {
		b.WriteString("\n\n")
	}
	return b.String(), nil
}

// lowerCost bounds cost(r, t, i, k, sep) from below: the count when it is
// cached, the counter's bound otherwise (cached too, for fixed blocks).
func (p *Prompt) lowerCost(r *Rendered, t *countTable, lb tokens.LowerBounder, i int, k blockKind) (int, error) {
	n := &p.t.nodes[i]
	cacheable := p.keeps(i, k)
	if cacheable {
		if v := t.slot(i, k, sep).Load(); v > 0 {
			return int(v - 1), nil
		}
		if v := t.slot(i, k, bound).Load(); v > 0 {
			return int(v - 1), nil
		}
	}
	// rest is what follows the heading and the blank line after it.
	var rest string
	if k != fullBlock {
		block, err := r.summaryBlock(i, k)
		if err != nil {
			return 0, err
		}
		rest = block[len(n.heading)+2:]
	} else {
		body, err := r.body(i)
		if err != nil {
			return 0, err
		}
		rest = body
	}
	// With an additive counter, the heading and its blank line count
	// exactly (the heading is short, and its count cached) when the rest
	// starts a chunk of its own; otherwise bounds add up across the blank
	// line. The blank line after the block costs nothing in a bound.
	var v int
	switch {
	case rest == "":
		v = p.headCost(t, i) // the whole block: heading and blank line
	case t.additive && rest[0] > ' ' && rest[0] <= '~' && rest[0] != '/':
		v = p.headCost(t, i) + lb.LowerBound(rest)
	default:
		v = lb.LowerBound(n.heading) + lb.LowerBound(rest)
	}
	if cacheable && v < math.MaxInt32 {
		t.slot(i, k, bound).Store(int32(v + 1))
	}
	return v, nil
}

// headCost counts node i's heading with the blank line after it.
func (p *Prompt) headCost(t *countTable, i int) int {
	if v := t.headSlot(i).Load(); v > 0 {
		return int(v - 1)
	}
	v := t.counter.Count(p.t.nodes[i].heading + "\n\n")
	if v < math.MaxInt32 {
		t.headSlot(i).Store(int32(v + 1))
	}
	return v
}

// count fills r.tokens for the visible sections and r.total, and under a
// budget fits the prompt into it first.
func (p *Prompt) count(r *Rendered, cfg renderConfig) error {
	t := p.countTable(cfg.counter)
	if cfg.budget > 0 {
		// The fit leaves the counts of what it shows set.
		return p.fit(r, t, cfg.budget)
	}
	return p.tally(r, t)
}

// tally sets r.tokens to each visible block's count, the last one without
// the blank line after it, and r.total to their sum.
func (p *Prompt) tally(r *Rendered, t *countTable) error {
	r.tokens = make([]int32, len(p.t.nodes))
	r.total = 0
	last, size := -1, 0
	for i, st := range r.st {
		if !st.is(visibleF) {
			continue
		}
		c, err := p.cost(r, t, i, r.kind(i), sep)
		if err != nil {
			return err
		}
		if size += t.size(r, i, r.kind(i)); size > MaxPromptBytes {
			// The blocks counted make up the text, which emit would
			// refuse: stop before writing and counting the rest.
			return &section.Error{Path: p.t.nodes[i].path, Err: ErrPromptTooLarge}
		}
		r.tokens[i] = int32(c)
		r.total += c
		last = i
	}
	if last >= 0 {
		c, err := p.cost(r, t, last, r.kind(last), end)
		if err != nil {
			return err
		}
		r.total += c - int(r.tokens[last])
		r.tokens[last] = int32(c)
	}
	return nil
}
