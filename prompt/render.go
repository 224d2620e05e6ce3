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
	text   string
	tools  []*tools.Tool
	total  int   // tokens of text, when counted
	tokens []int // tokens of each visible section's block, when counted

	p       *Prompt
	modes   []visibility.Mode // per node, for enabled nodes
	whys    []visibility.Why
	visible []bool
	// live holds the bodies of Content sections, computed once per render
	// however often counting and emitting need them.
	live map[int]string
	// declared holds, for sections a budget demoted, why they were FULL
	// before, so a section given back is reported as it was.
	declared []visibility.Why
	// cand, brief and compact are set under a budget: the sections it may
	// summarize, and the SUMMARY sections it shortened to their brief and
	// wrote with the compact suffix.
	cand, brief, compact []bool
	pr                   *prepared // which sections are enabled in this render
	sess                 *session.Session
	fs                   afero.Fs
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
		rep[i] = SectionReport{
			Path: n.path, Number: n.number, Title: n.sec.Title(), Depth: n.depth,
			Enabled: pr.enabled[i], Visible: r.visible[i], Mode: r.modes[i], Why: r.whys[i], HasTools: pr.hasTools[i],
			Priority: n.sec.Priority(), Brief: r.visible[i] && r.kind(i).brief(),
		}
		if r.tokens != nil && r.visible[i] {
			rep[i].Tokens = r.tokens[i]
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
// counter: FULL sections that have a summary are demoted to SUMMARY, lowest
// priority first (then deeper, then later first), until the prompt fits.
// Sections the session opened are never demoted. Summaries may get the
// compact suffix, and one that would cost more than its content shows the
// content (see the package documentation). When even the smallest reachable
// prompt is too large, Render fails with a [*BudgetError]. A budget of 0
// means none.
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
		return r.p.body(i, n.depth)
	}
	if b, ok := r.live[i]; ok {
		return b, nil
	}
	b, err := r.p.body(i, n.depth)
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
// declared text should it fail to render.
func (r *Rendered) summary(i int) string {
	text, err := r.p.summaryText(i, summaryBlock)
	if err != nil {
		return r.p.t.nodes[i].sec.Summary()
	}
	return text
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
		p:       p,
		modes:   make([]visibility.Mode, len(nodes)),
		whys:    make([]visibility.Why, len(nodes)),
		visible: make([]bool, len(nodes)),
		pr:      pr,
		sess:    sess,
		fs:      fs,
	}
	// Without overrides, a constant selector decides with no look at the
	// node itself.
	plain := ov.Len() == 0
	for i, h := range p.t.hot {
		if !pr.enabled[i] {
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
		r.modes[i], r.whys[i] = mode, why
		r.visible[i] = h.parent < 0 || (r.visible[h.parent] && r.modes[h.parent] == visibility.Full)
		if r.visible[i] && mode == visibility.Summary && !h.is(summarized) {
			path := nodes[i].path
			return nil, &section.Error{Path: path, Err: &section.NoSummaryError{Path: path}}
		}
	}
	return r, nil
}

// size returns about the length of r's text, a little more when it shows
// template bodies not executed yet, so emit can write it to a buffer
// allocated once.
func (p *Prompt) size(r *Rendered) (int, error) {
	size, blocks := 0, 0
	for i, v := range r.visible {
		if !v {
			continue
		}
		blocks++
		if k := r.kind(i); k != fullBlock {
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

// pending reports whether node i's body is a template not executed yet.
func (p *Prompt) pending(i int) bool {
	h := p.t.hot[i]
	return h.is(dynamic) && !h.is(live) && !p.bodies[i].done.Load()
}

// emit writes the text of the visible sections and collects the tools.
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
	// SUMMARY blocks written for the first time are kept as slices of the
	// text, not copies.
	type span struct {
		node, start, end int
		kind             blockKind
	}
	var fresh, freshBodies []span
	var scratch []byte
	for i := range nodes {
		if !r.visible[i] {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		if k := r.kind(i); k != fullBlock {
			summarized = true
			if ls := &p.blocks[k][i]; ls.done.Load() {
				b.WriteString(ls.text)
				continue
			}
			start := b.Len()
			if err := p.writeSummary(&b, r.pr, i, k); err != nil {
				return err
			}
			fresh = append(fresh, span{i, start, b.Len(), k})
			continue
		}
		n := &nodes[i]
		if p.pending(i) {
			// A template body executed for the first time goes straight
			// into the text when it needs no processing, and is kept as a
			// slice of it.
			var err error
			scratch, err = n.sec.AppendBody(scratch[:0], p.params[i])
			if err != nil {
				return &section.Error{Path: n.path, Err: err}
			}
			if body, ok := plainBody(scratch); ok {
				b.WriteString(n.heading)
				start := b.Len()
				if len(body) > 0 {
					b.WriteString("\n\n")
					start = b.Len()
					b.Write(body)
				}
				freshBodies = append(freshBodies, span{i, start, b.Len(), fullBlock})
				r.tools = append(r.tools, n.sec.Tools()...)
				continue
			}
		}
		body, err := r.body(i)
		if err != nil {
			return err
		}
		b.WriteString(n.heading)
		if body != "" {
			b.WriteString("\n\n")
			b.WriteString(body)
		}
		r.tools = append(r.tools, n.sec.Tools()...)
	}
	if summarized {
		r.tools = append(r.tools, r.openSectionsTool())
	}
	r.text = b.String()
	for _, f := range fresh {
		p.keepSummary(f.node, f.kind, r.text[f.start:f.end])
	}
	for _, f := range freshBodies {
		p.keepBody(f.node, r.text[f.start:f.end])
	}
	return nil
}
