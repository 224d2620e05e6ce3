package prompt

import (
	"fmt"
	"strings"

	"github.com/spf13/afero"

	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/tokens"
	"github.com/unfold-dev/unfold/tools"
	"github.com/unfold-dev/unfold/visibility"
)

// Rendered is a prompt rendered once: its markdown, the tools to offer the
// model and a report on every section. It is immutable.
type Rendered struct {
	text  string
	tools []*tools.Tool
	total int // tokens of text, when counted
	// size is the bytes of the block the last count wrote, with the
	// blank line after it, for a tally (see countTable.size).
	size   int
	tokens []int32 // tokens of each visible section's block, when counted

	p  *Prompt
	st []nodeState // per node: how this render shows it
	// live holds the bodies of Content sections, computed once per render
	// however often counting and emitting need them.
	live map[int]string
	// overridden is set when some section's mode is the session's.
	overridden bool
	pr         *prepared // which sections are enabled in this render
	// work is what the templates this render executes may still do, all
	// together (docs/design.md, "Rendering rules").
	work *section.Work
	// made holds the summary blocks this render wrote that the Prompt
	// does not keep, up to MaxPromptBytes together, so that a budget's
	// fit, which weighs a block several times, runs its template once.
	made      map[[2]int]string
	madeBytes int
	sess      *session.Session
	fs        afero.Fs
}

// nodeState is how a render shows one node. All of it sits in one array
// of four bytes a node, for the passes over a large tree read it for
// every node, often in the budget's order rather than the tree's.
type nodeState struct {
	mode visibility.Mode // for enabled nodes
	why  visibility.Why
	// declared is, for a section a budget demoted, why it was FULL
	// before, so a section given back is reported as it was.
	declared visibility.Why
	flags    stateFlags
}

// stateFlags are the yes-or-no parts of a nodeState.
type stateFlags uint8

const (
	visibleF stateFlags = 1 << iota // rendered: enabled, and no ancestor summarized
	// candF, briefF and compactF are set under a budget: a section it
	// may summarize, and a SUMMARY it shortened to its brief, or wrote
	// with the compact suffix.
	candF
	briefF
	compactF
)

func (s nodeState) is(f stateFlags) bool { return s.flags&f != 0 }

// set sets f when on and clears it otherwise.
func (s *nodeState) set(f stateFlags, on bool) {
	if on {
		s.flags |= f
	} else {
		s.flags &^= f
	}
}

// SectionReport says how one section rendered.
type SectionReport struct {
	Path     string          `json:"path"`
	Number   string          `json:"number"` // "2.1."
	Title    string          `json:"title"`
	Depth    int             `json:"depth"` // 0 at the top
	Enabled  bool            `json:"enabled"`
	Visible  bool            `json:"visible"` // rendered: enabled, and no ancestor summarized
	Mode     visibility.Mode `json:"mode"`
	Why      visibility.Why  `json:"why"`
	HasTools bool            `json:"has_tools"`       // the section or an enabled descendant declares a tool
	Brief    bool            `json:"brief,omitempty"` // a SUMMARY a budget shortened to its brief
	Priority int             `json:"priority"`
	Tokens   int             `json:"tokens"` // of the section's own block as rendered, with the blank line after it but for the last; 0 when hidden or not counted
}

// Prompt returns the prompt that rendered.
func (r *Rendered) Prompt() *Prompt { return r.p }

// Text returns the rendered markdown.
func (r *Rendered) Text() string { return r.text }

// Tools returns the tools to offer the model: those of every section that
// rendered in full, depth first, then open_sections when anything rendered as
// a summary.
func (r *Rendered) Tools() []*tools.Tool { return append([]*tools.Tool(nil), r.tools...) }

// Tool returns the offered tool called name, or nil.
func (r *Rendered) Tool(name string) *tools.Tool {
	for _, t := range r.tools {
		if t.Name() == name {
			return t
		}
	}
	return nil
}

// Report returns how every section rendered, depth first. Disabled sections
// are listed with Enabled false.
func (r *Rendered) Report() []SectionReport {
	pr := r.pr
	rep := make([]SectionReport, len(r.p.t.nodes))
	for i, n := range r.p.t.nodes {
		st := r.st[i]
		rep[i] = SectionReport{
			Path: n.path, Number: n.number, Title: n.sec.Title(), Depth: n.depth,
			Enabled: pr.enabled(i), Visible: st.is(visibleF), Mode: st.mode, Why: st.why, HasTools: pr.hasTools(i),
			Priority: n.sec.Priority(), Brief: st.is(visibleF) && r.kind(i).brief(),
		}
		if r.tokens != nil && st.is(visibleF) {
			rep[i].Tokens = int(r.tokens[i])
		}
	}
	return rep
}

// Tokens returns the token count of the whole text, when the render was
// given a counter (WithTokens or WithBudget), and 0 otherwise. With a
// counter that is tokens.Additive it is the sum of the report's section
// counts, which is the text's count.
func (r *Rendered) Tokens() int { return r.total }

// RenderOption configures one render.
type RenderOption func(*renderConfig)

type renderConfig struct {
	budget  int
	counter tokens.Counter
}

// WithTokens counts the tokens of every rendered section and of the whole
// prompt with counter, for [Rendered.Tokens] and the report.
func WithTokens(counter tokens.Counter) RenderOption {
	return func(c *renderConfig) { c.counter = counter }
}

// WithBudget renders the prompt into at most budget tokens as counted by
// counter, showing FULL sections that have a summary as SUMMARY where
// needed. The fit starts with all of them summarized and gives them back
// in full, highest priority first (then shallower, then earlier), each one
// that fits in what is left; one that does not fit stays summarized, and
// lower ones that fit are still given back (see the example). Sections
// the session opened are never summarized. Summaries may get the compact
// suffix, and one that would cost more than its content shows the content
// (see the package documentation). When even the smallest reachable prompt
// is too large, Render fails with a [*BudgetError]. A budget of 0 means
// none.
func WithBudget(budget int, counter tokens.Counter) RenderOption {
	return func(c *renderConfig) { c.budget, c.counter = budget, counter }
}

// Render renders the prompt with the session's visibility overrides (sess may
// be nil) and fs as the filesystem open_sections writes context files to
// (nil for none; a tool call's own filesystem wins). It installs the
// visibility overrides slice in sess if it is not there yet.
func (p *Prompt) Render(sess *session.Session, fs afero.Fs, opts ...RenderOption) (*Rendered, error) {
	var cfg renderConfig
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.budget < 0 || (cfg.budget > 0 && cfg.counter == nil) {
		return nil, fmt.Errorf("prompt: render %s/%s: a budget needs a token count (0 for none) and a counter", p.t.ns, p.t.key)
	}
	if sess != nil && !session.Registered(sess, visibility.Slice) {
		if err := visibility.Register(sess); err != nil {
			return nil, fmt.Errorf("prompt: render: %w", err)
		}
	}
	r, err := p.resolve(sess, fs)
	if err == nil && cfg.counter != nil {
		err = p.count(r, cfg)
	}
	if err == nil {
		err = p.emit(r)
	}
	if _, additive := cfg.counter.(tokens.Additive); err == nil && cfg.counter != nil && !additive {
		// The blocks' counts need not add up to the text's: count it, and
		// fit again if it is over.
		r.total = cfg.counter.Count(r.text)
		if cfg.budget > 0 && r.total > cfg.budget {
			err = p.refit(r, cfg)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("prompt: render %s/%s: %w", p.t.ns, p.t.key, err)
	}
	return r, nil
}

// body returns node i's processed body as this render shows it.
func (r *Rendered) body(i int) (string, error) {
	n := &r.p.t.nodes[i]
	if !r.p.t.hot[i].is(live) {
		return r.p.body(r.work, i, n.depth)
	}
	if b, ok := r.live[i]; ok {
		return b, nil
	}
	b, err := r.p.body(r.work, i, n.depth)
	if err != nil {
		return "", err
	}
	if r.live == nil {
		r.live = map[int]string{}
	}
	r.live[i] = b
	return b, nil
}

// summary returns node i's summary as this render would show it, or its
// declared text should it fail to render. It runs after the render, for
// help and the list of deferred tools, each time with work of its own.
func (r *Rendered) summary(i int) string {
	text, err := r.p.summaryText(section.NewWork(), i, summaryBlock)
	if err != nil {
		return r.p.t.nodes[i].sec.Summary()
	}
	return text
}

// summaryBlock returns node i's SUMMARY block written as k, its template
// run once in this render (see made).
func (r *Rendered) summaryBlock(i int, k blockKind) (string, error) {
	key := [2]int{i, int(k)}
	if block, ok := r.made[key]; ok {
		return block, nil
	}
	block, err := r.p.summaryBlock(r.work, r.pr, i, k)
	if err != nil {
		return "", err
	}
	if r.madeBytes+len(block) <= MaxPromptBytes {
		if r.made == nil {
			r.made = map[[2]int]string{}
		}
		r.made[key] = block
		r.madeBytes += len(block)
	}
	return block, nil
}

// resolve decides every section's mode and visibility.
func (p *Prompt) resolve(sess *session.Session, fs afero.Fs) (*Rendered, error) {
	pr := p.prepareFor(sess)
	if pr.err != nil {
		return nil, pr.err
	}
	nodes := p.t.nodes
	ov := visibility.Get(sess)
	r := &Rendered{
		p:    p,
		st:   make([]nodeState, len(nodes)),
		pr:   pr,
		sess: sess,
		fs:   fs,
		work: section.NewWork(),
	}
	// Without overrides, a constant selector decides with no look at the
	// node itself.
	plain := ov.Len() == 0
	for i, h := range p.t.hot {
		if !pr.enabled(i) {
			continue
		}
		mode, why := visibility.Mode(h.mode), visibility.Declared
		if !plain || h.mode < 0 {
			n := &nodes[i]
			var err error
			if mode, why, err = ov.Resolve(sess, n.path, n.sel, p.params[i]); err != nil {
				return nil, &section.Error{Path: n.path, Err: err}
			}
		}
		if why == visibility.Overridden && mode == visibility.Summary && !h.is(summarized) {
			// Not applicable, as an override of a path no section has.
			mode, why = visibility.Full, visibility.NoSummary
		}
		st := &r.st[i]
		st.mode, st.why = mode, why
		if why == visibility.Overridden {
			r.overridden = true
		}
		st.set(visibleF, h.parent < 0 || (r.st[h.parent].is(visibleF) && r.st[h.parent].mode == visibility.Full))
		if st.is(visibleF) && mode == visibility.Summary && !h.is(summarized) {
			path := nodes[i].path
			return nil, &section.Error{Path: path, Err: &section.NoSummaryError{Path: path}}
		}
	}
	return r, nil
}

// size returns about the length of r's text, a little more when it shows
// blocks not written yet, so emit can write it to a buffer allocated once.
func (p *Prompt) size(r *Rendered) (int, error) {
	size, blocks := 0, 0
	for i, st := range r.st {
		if !st.is(visibleF) {
			continue
		}
		blocks++
		k := r.kind(i)
		if lb := &p.blocks[k][i]; lb.done.Load() {
			size += len(lb.text)
			continue
		}
		if k != fullBlock {
			size += p.summarySize(i, k)
			continue
		}
		n := &p.t.nodes[i]
		size += len(n.heading) + 2
		if p.pending(i) {
			size += len(n.sec.Source()) + len(n.sec.Source())/8
			continue
		}
		body, err := r.body(i)
		if err != nil {
			return 0, err
		}
		size += len(body)
	}
	return size + 2*max(blocks-1, 0), nil
}

// MaxPromptBytes bounds a rendered prompt's text, whether its tokens are
// counted or not, a section's context file ([Prompt.Standalone]), and the
// bodies and the blocks a Prompt keeps, each: sixteen sections that each
// write the most a body may would otherwise take 256 MiB.
const MaxPromptBytes = 32 << 20

// ErrPromptTooLarge is the error of a render whose text would pass
// [MaxPromptBytes], wrapped in a [section.Error] naming the section that
// took it past.
var ErrPromptTooLarge = fmt.Errorf("the prompt is larger than %d bytes with this section's body; sections that repeat themselves that much are a mistake", MaxPromptBytes)

// tooLarge fails with ErrPromptTooLarge, naming the section at path, once
// b, a document being written, holds more than MaxPromptBytes.
func tooLarge(b *strings.Builder, path string) error {
	if b.Len() > MaxPromptBytes {
		return &section.Error{Path: path, Err: ErrPromptTooLarge}
	}
	return nil
}

// pending reports whether node i's body is a template not executed yet.
func (p *Prompt) pending(i int) bool {
	h := p.t.hot[i]
	return h.is(dynamic) && !h.is(live) && !p.bodies[i].done.Load()
}

// emit writes the text of the visible sections and collects the tools.
// Blocks written before are copied as they are; blocks written for the
// first time are kept (see keepBlock) as slices of the text, not copies.
func (p *Prompt) emit(r *Rendered) error {
	nodes := p.t.nodes
	size, err := p.size(r)
	if err != nil {
		return err
	}
	var b strings.Builder
	b.Grow(size)
	summarized := false
	r.tools = r.tools[:0]
	type span struct {
		node, start, end int
		kind             blockKind
	}
	var fresh, freshBodies []span
	var scratch []byte
	for i, st := range r.st {
		if !st.is(visibleF) {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		k := r.kind(i)
		if k != fullBlock {
			summarized = true
		} else if p.t.hot[i].is(tooled) {
			r.tools = append(r.tools, nodes[i].sec.Tools()...)
		}
		start := b.Len()
		lb := &p.blocks[k][i]
		switch {
		case lb.done.Load():
			b.WriteString(lb.text)
		case k != fullBlock:
			block, err := r.summaryBlock(i, k)
			if err != nil {
				return err
			}
			b.WriteString(block)
		default:
			from, to, plain, err := p.writeFull(r, &b, i, &scratch)
			if err != nil {
				return err
			}
			if plain {
				freshBodies = append(freshBodies, span{i, from, to, fullBlock})
			}
		}
		// Each body and summary is bounded (section.MaxBodyBytes); so is
		// the text of them all, blocks kept from earlier renders included,
		// before the next one runs.
		if err := tooLarge(&b, nodes[i].path); err != nil {
			return err
		}
		if !lb.done.Load() && p.keeps(i, k) {
			fresh = append(fresh, span{i, start, b.Len(), k})
		}
	}
	if summarized {
		r.tools = append(r.tools, r.openSectionsTool())
	}
	r.text = b.String()
	if len(fresh) > 0 || len(freshBodies) > 0 {
		// Blocks are kept as slices of the text, unless they are less
		// than half of it: a block or two new in a render (a section
		// opened) are copied, so that each render's text is not kept
		// whole for them.
		n := 0
		for _, f := range fresh {
			n += f.end - f.start
		}
		copied := 2*n < len(r.text)
		slice := func(f span) string {
			if copied {
				return strings.Clone(r.text[f.start:f.end])
			}
			return r.text[f.start:f.end]
		}
		p.cacheMu.Lock()
		for _, f := range fresh {
			p.setBlock(f.node, f.kind, slice(f))
		}
		for _, f := range freshBodies {
			p.setBody(f.node, slice(f))
		}
		p.cacheMu.Unlock()
	}
	return nil
}

// writeFull writes node i's block in full: its heading and its body. A
// template body executed for the first time goes straight into the text
// when it needs no processing (using scratch); then writeFull reports plain
// and where in b the body is, so it can be kept as a slice of the text.
func (p *Prompt) writeFull(r *Rendered, b *strings.Builder, i int, scratch *[]byte) (from, to int, plain bool, err error) {
	n := &p.t.nodes[i]
	if p.pending(i) {
		if *scratch, err = n.sec.AppendBodyWith(r.work, (*scratch)[:0], p.params[i]); err != nil {
			return 0, 0, false, &section.Error{Path: n.path, Err: err}
		}
		if body, ok := plainBody(*scratch); ok {
			b.WriteString(n.heading)
			from = b.Len()
			if len(body) > 0 {
				b.WriteString("\n\n")
				from = b.Len()
				b.Write(body)
			}
			return from, b.Len(), true, nil
		}
	}
	body, err := r.body(i)
	if err != nil {
		return 0, 0, false, err
	}
	b.WriteString(n.heading)
	if body != "" {
		b.WriteString("\n\n")
		b.WriteString(body)
	}
	return 0, 0, false, nil
}
