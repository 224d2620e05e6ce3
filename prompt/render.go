package prompt

import (
	"fmt"
	"strings"

	"github.com/spf13/afero"

	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/tools"
	"github.com/unfold-dev/unfold/visibility"
)

// Rendered is a prompt rendered once: its markdown, the tools to offer the
// model and a report on every section. It is immutable.
type Rendered struct {
	text  string
	tools []*tools.Tool

	p       *Prompt
	modes   []visibility.Mode // per node, for enabled nodes
	whys    []visibility.Why
	visible []bool
	sess    *session.Session
	fs      afero.Fs
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
	HasTools bool            `json:"has_tools"` // the section or an enabled descendant declares a tool
}

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
	pr := r.p.prepare()
	rep := make([]SectionReport, len(r.p.t.nodes))
	for i, n := range r.p.t.nodes {
		rep[i] = SectionReport{
			Path: n.path, Number: n.number, Title: n.sec.Title(), Depth: n.depth,
			Enabled: pr.enabled[i], Visible: r.visible[i], Mode: r.modes[i], Why: r.whys[i], HasTools: pr.hasTools[i],
		}
	}
	return rep
}

// Render renders the prompt with the session's visibility overrides (sess may
// be nil) and fs as the filesystem open_sections writes context files to
// (nil for none; a tool call's own filesystem wins). It installs the
// visibility overrides slice in sess if it is not there yet.
func (p *Prompt) Render(sess *session.Session, fs afero.Fs) (*Rendered, error) {
	if sess != nil && !session.Registered(sess, visibility.Slice) {
		if err := visibility.Register(sess); err != nil {
			return nil, fmt.Errorf("prompt: render: %w", err)
		}
	}
	pr := p.prepare()
	if pr.err != nil {
		return nil, fmt.Errorf("prompt: render %s/%s: %w", p.t.ns, p.t.key, pr.err)
	}
	nodes := p.t.nodes
	ov := visibility.Get(sess)
	r := &Rendered{
		p:       p,
		modes:   make([]visibility.Mode, len(nodes)),
		whys:    make([]visibility.Why, len(nodes)),
		visible: make([]bool, len(nodes)),
		sess:    sess,
		fs:      fs,
	}
	var b strings.Builder
	b.Grow(max(p.t.sizeHint, int(p.lastLen.Load())))
	summarized := false
	for i := range nodes {
		n := &nodes[i]
		if !pr.enabled[i] {
			continue
		}
		mode, why, err := ov.Resolve(sess, n.path, n.sec.Selector(), p.params[i])
		if err != nil {
			return nil, fmt.Errorf("prompt: render %s/%s: %w", p.t.ns, p.t.key, &section.Error{Path: n.path, Err: err})
		}
		r.modes[i], r.whys[i] = mode, why
		visible := n.parent < 0 || (r.visible[n.parent] && r.modes[n.parent] == visibility.Full)
		r.visible[i] = visible
		if !visible {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		if mode == visibility.Summary {
			if pr.summary[i] == "" {
				return nil, fmt.Errorf("prompt: render %s/%s: %w", p.t.ns, p.t.key, &section.Error{Path: n.path, Err: &section.NoSummaryError{Path: n.path}})
			}
			b.WriteString(pr.summary[i])
			summarized = true
			continue
		}
		body, err := p.body(i, n.depth)
		if err != nil {
			return nil, fmt.Errorf("prompt: render %s/%s: %w", p.t.ns, p.t.key, err)
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
	p.lastLen.Store(int64(len(r.text)))
	return r, nil
}
