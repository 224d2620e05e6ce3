package prompt

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/unfold-dev/unfold/internal/markdown"
	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/session"
)

// Prompt is a [Template] with its params bound ([Prompt.Template]). It is immutable and safe for
// concurrent use. Template bodies are executed at most once per Prompt and
// their text reused, so params must not be changed after Bind; Content
// functions run at every render.
type Prompt struct {
	t      *Template
	args   []any // as given to Bind, to bind the template unfolded
	params []any // per node: the bound params, nil for section.None
	// off marks the nodes Bind found disabled whatever the session,
	// without params of their own (see Bind); nil when there are none.
	off []bool

	prepOnce sync.Once
	prep     prepared
	bodies   []lazyBody // per node: the executed, processed template body
	// blocks holds, per kind of block, per node, the block written that
	// way, once a render wrote it and when it is the same at every render
	// (see keeps); the briefs' only when the template has briefs. A render
	// copies these, as they are, into its text.
	blocks  [numKinds][]lazyBlock
	cacheMu sync.Mutex // held while bodies or blocks are filled in
	// kept and keptBlocks are the bytes of the bodies and of the blocks
	// kept, each bounded by MaxPromptBytes; guarded by cacheMu.
	kept, keptBlocks int

	counts atomic.Pointer[countTable] // token counts of fixed blocks, for the counter used last
}

// prepared is everything about a Prompt that depends on params only.
type prepared struct {
	// on holds, per node, whether it is enabled, holds tools, has
	// enabled children: one byte, so that the fit, which asks all three of
	// a node, reads one array.
	on  []nodeOn
	err error
}

// nodeOn is what a prepared render knows of one node.
type nodeOn uint8

const (
	enabledOn nodeOn = 1 << iota // the node and every ancestor enabled
	toolsOn                      // the node or an enabled descendant declares a tool
	kidsOn                       // some direct child is enabled
)

// enabled reports whether node i and every ancestor are enabled.
func (pr *prepared) enabled(i int) bool { return pr.on[i]&enabledOn != 0 }

// hasTools reports whether node i or an enabled descendant declares a tool.
func (pr *prepared) hasTools(i int) bool { return pr.on[i]&toolsOn != 0 }

// hasKids reports whether node i has an enabled child, so that its
// compact suffix differs from the default one.
func (pr *prepared) hasKids(i int) bool { return pr.on[i]&kidsOn != 0 }

type lazyBody struct {
	done atomic.Bool // the fields below are set; written under Prompt.cacheMu
	raw  string      // executed and dedented
	text string      // raw with headings shifted for the node's depth
	err  error
}

// lazyBlock is a node's block written one way, kept from the first render
// that shows it: most often a slice of that render's text.
type lazyBlock struct {
	done atomic.Bool // text is set; written under Prompt.cacheMu
	text string
}

// Bind binds params to the template, one value per params type its sections
// use (a struct, or a pointer to one). A type no section takes, a type given
// twice, or a type a section needs but is missing is an error naming it.
//
// A section needs no value of its type when it declares defaults
// ([section.Spec] Defaults), which it renders with then, or when it is
// disabled whatever the session: below a section whose Enabled predicate
// says false for its params (given to Bind, or its defaults), or disabled
// by its own Enabled given the zero value of its params type (an unset
// switch, an empty name). An EnabledIn predicate reads the session, known
// only at render, so a section with one, and every section below it, needs
// its params.
func (t *Template) Bind(params ...any) (*Prompt, error) {
	byType := make(map[reflect.Type]any, len(params))
	var errs []error
	for i, p := range params {
		v := reflect.ValueOf(p)
		if !v.IsValid() {
			errs = append(errs, fmt.Errorf("params %d is nil", i+1))
			continue
		}
		if v.Kind() == reflect.Pointer {
			if v.IsNil() {
				errs = append(errs, fmt.Errorf("params %d is a nil %v", i+1, v.Type()))
				continue
			}
			v = v.Elem()
		}
		pt := v.Type()
		if _, dup := byType[pt]; dup {
			errs = append(errs, fmt.Errorf("duplicate params of type %v: pass one value per type", pt))
			continue
		}
		if !slices.Contains(t.needs, pt) {
			errs = append(errs, fmt.Errorf("unused params of type %v: no section takes it", pt))
			continue
		}
		byType[pt] = v.Interface()
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("prompt: bind %s/%s: %w", t.ns, t.key, err)
	}
	p := &Prompt{t: t, args: slices.Clone(params), params: make([]any, len(t.nodes)), bodies: make([]lazyBody, len(t.nodes))}
	for k := fullBlock; k < numKinds; k++ {
		if !k.brief() || t.briefs {
			p.blocks[k] = make([]lazyBlock, len(t.nodes))
		}
	}
	if len(byType) == len(t.needs) {
		// Every type given: the common case costs a lookup per node.
		for i, n := range t.nodes {
			if pt := n.sec.ParamsType(); pt != nil {
				p.params[i] = byType[pt]
			}
		}
		return p, nil
	}
	if err := p.bindMissing(byType); err != nil {
		return nil, fmt.Errorf("prompt: bind %s/%s: %w", t.ns, t.key, err)
	}
	return p, nil
}

// bindMissing binds params when some type was not given: each section
// takes the value given, or its defaults, or, when it is disabled whatever
// the session, nothing; any other section missing its params is an error
// naming its type and path.
func (p *Prompt) bindMissing(byType map[reflect.Type]any) error {
	t := p.t
	p.off = make([]bool, len(t.nodes))
	// dark marks the nodes a params-only predicate disables, themselves or
	// through an ancestor, as far as Bind can tell.
	dark := make([]bool, len(t.nodes))
	missing := map[reflect.Type][]string{}
	var errs []error
	for i, n := range t.nodes {
		under := n.parent >= 0 && dark[n.parent]
		pt := n.sec.ParamsType()
		v, given := byType[pt]
		if !given {
			v, given = n.sec.Defaults()
		}
		switch {
		case pt == nil || given:
			p.params[i] = v
		case under:
			p.off[i], dark[i] = true, true
			continue
		default:
			ok, err := n.sec.EnabledUnbound()
			switch {
			case err != nil:
				errs = append(errs, &section.Error{Path: n.path, Err: err})
			case ok:
				missing[pt] = append(missing[pt], n.path)
			default:
				p.off[i], dark[i] = true, true
			}
			continue
		}
		if under || n.sec.ReadsSession() {
			dark[i] = under
			continue
		}
		ok, err := n.sec.Enabled(p.params[i], nil)
		if err != nil {
			errs = append(errs, &section.Error{Path: n.path, Err: err})
		}
		dark[i] = !ok
	}
	var lines []string
	for pt, paths := range missing {
		lines = append(lines, fmt.Sprintf("missing params of type %v (needed by section %s)", pt, strings.Join(paths, ", ")))
	}
	sort.Strings(lines)
	for _, l := range lines {
		errs = append(errs, errors.New(l))
	}
	return errors.Join(errs...)
}

// MustBind is like [Template.Bind] but panics on error.
func (t *Template) MustBind(params ...any) *Prompt {
	p, err := t.Bind(params...)
	if err != nil {
		panic(err)
	}
	return p
}

// Template returns the template the prompt was bound from.
func (p *Prompt) Template() *Template { return p.t }

// prepare returns what depends on the params only: which sections are
// enabled (EnabledIn predicates asked with no session) and which hold
// tools. Renders use prepareFor.
func (p *Prompt) prepare() *prepared {
	p.prepOnce.Do(func() { p.prep = p.enable(nil) })
	return &p.prep
}

// prepareFor returns which sections are enabled in sess, and which hold
// tools: prepare's, unless some predicate reads the session.
func (p *Prompt) prepareFor(sess *session.Session) *prepared {
	if !p.t.session {
		return p.prepare()
	}
	pr := p.enable(sess)
	return &pr
}

func (p *Prompt) enable(sess *session.Session) prepared {
	nodes := p.t.nodes
	pr := prepared{on: make([]nodeOn, len(nodes))}
	var errs []error
	for i, n := range nodes {
		if n.parent >= 0 && !pr.enabled(n.parent) || p.off != nil && p.off[i] {
			continue
		}
		ok, err := n.sec.Enabled(p.params[i], sess)
		if err != nil {
			errs = append(errs, &section.Error{Path: n.path, Err: err})
		}
		if ok {
			pr.on[i] = enabledOn
		}
	}
	for i := len(nodes) - 1; i >= 0; i-- {
		if !pr.enabled(i) {
			continue
		}
		if p.t.hot[i].is(tooled) {
			pr.on[i] |= toolsOn
		}
		for _, c := range nodes[i].children {
			if pr.enabled(c) {
				pr.on[i] |= kidsOn | pr.on[c]&toolsOn
			}
		}
	}
	pr.err = errors.Join(errs...)
	return pr
}

// summaryBlock returns node i's SUMMARY block written as k, as a render
// whose enabled sections are pr's shows it.
func (p *Prompt) summaryBlock(w *section.Work, pr *prepared, i int, k blockKind) (string, error) {
	ls := &p.blocks[k][i]
	if ls.done.Load() {
		return ls.text, nil
	}
	var b strings.Builder
	b.Grow(p.summarySize(i, k))
	if err := p.writeSummary(w, &b, pr, i, k); err != nil {
		return "", err
	}
	p.keepBlock(i, k, b.String())
	return b.String(), nil
}

// keepBlock keeps text as node i's block written as k unless one is kept,
// the block may change from one render to the next, or the blocks kept
// would take more than MaxPromptBytes with it (then each render writes
// the block again: blocks shown with different sessions, each render
// within the bound, must not add up without end).
func (p *Prompt) keepBlock(i int, k blockKind, text string) {
	p.cacheMu.Lock()
	p.setBlock(i, k, text)
	p.cacheMu.Unlock()
}

// setBlock is keepBlock with cacheMu held.
func (p *Prompt) setBlock(i int, k blockKind, text string) {
	if lb := &p.blocks[k][i]; p.keeps(i, k) && !lb.done.Load() && p.keptBlocks+len(text) <= MaxPromptBytes {
		p.keptBlocks += len(text)
		lb.text = text
		lb.done.Store(true)
	}
}

// summarySize is the length of node i's SUMMARY block written as k, or a
// little more until it was written once.
func (p *Prompt) summarySize(i int, k blockKind) int {
	if ls := &p.blocks[k][i]; ls.done.Load() {
		return len(ls.text)
	}
	n := &p.t.nodes[i]
	text := n.sec.Brief()
	if !k.brief() {
		text = n.sec.Summary() // a template's source, about as long
	}
	size := len(n.heading) + len(text) + 2*len(n.path) + 160
	if !k.compact() {
		for _, c := range n.children {
			size += len(p.t.nodes[c].sec.Key()) + 2
		}
	}
	return size
}

// outOfWork reports whether err is a render's work running out
// (section.Work), which depends on the render, not on one section.
func outOfWork(err error) bool {
	return errors.Is(err, section.ErrTooManySteps) || errors.Is(err, section.ErrTooMuchText)
}

// summaryText is node i's summary, or its brief for a brief kind,
// rendered with its params.
func (p *Prompt) summaryText(w *section.Work, i int, k blockKind) (string, error) {
	n := &p.t.nodes[i]
	var text string
	var err error
	if k.brief() {
		text, err = n.sec.BriefWith(w, p.params[i])
	} else {
		text, err = n.sec.SummaryWith(w, p.params[i])
	}
	if err != nil {
		return "", &section.Error{Path: n.path, Err: err}
	}
	// A summary may come from params or from elsewhere (a skill's
	// description): as a body's, its headings go below the section's and
	// a fence it leaves open is closed, so that it cannot swallow the line
	// saying how to open it and the sections after it.
	return markdown.CloseFence(shiftHeadings(text, n.depth+2)), nil
}

// writeSummary writes node i's SUMMARY block written as k: heading, summary
// (or brief), and the line telling the model how to open it.
func (p *Prompt) writeSummary(w *section.Work, b *strings.Builder, pr *prepared, i int, k blockKind) error {
	n := &p.t.nodes[i]
	text, err := p.summaryText(w, i, k)
	if err != nil {
		return err
	}
	b.WriteString(n.heading)
	b.WriteString("\n\n")
	b.WriteString(text)
	writeSuffixAs(b, n.path, enabledKids{p.t.nodes, n.children, pr}, pr.hasTools(i), k.compact())
	return nil
}

// body returns node i's body processed for a heading at depth: fixed text,
// the template executed once per Prompt, or Content called now.
func (p *Prompt) body(w *section.Work, i int, depth int) (string, error) {
	n := &p.t.nodes[i]
	switch {
	case !p.t.hot[i].is(dynamic):
		if depth == n.depth {
			return n.static, nil
		}
		return shiftHeadings(n.dedented, depth+2), nil
	case p.t.hot[i].is(live):
		raw, err := p.execBody(w, i)
		if err != nil {
			return "", err
		}
		return shiftHeadings(raw, depth+2), nil
	}
	lb := &p.bodies[i]
	if !lb.done.Load() {
		p.cacheMu.Lock()
		if !lb.done.Load() {
			lb.raw, lb.err = p.execBody(w, i)
			if outOfWork(lb.err) {
				// The render's work ran out, which other sections
				// spent too: not the body's own error, so not kept.
				err := lb.err
				lb.raw, lb.err = "", nil
				p.cacheMu.Unlock()
				return "", err
			}
			if p.kept += len(lb.raw); p.kept > MaxPromptBytes {
				// Bodies kept are bounded all together, as a render is.
				lb.raw, lb.err = "", &section.Error{Path: n.path, Err: ErrPromptTooLarge}
			}
			lb.text = shiftHeadings(lb.raw, n.depth+2)
			lb.done.Store(true)
		}
		p.cacheMu.Unlock()
	}
	if lb.err != nil || depth == n.depth {
		return lb.text, lb.err
	}
	return shiftHeadings(lb.raw, depth+2), nil
}

// setBody keeps text, which needed no processing, as node i's executed
// body unless one is kept, or the bodies kept would take more than
// MaxPromptBytes with it (then the body is executed again when it is
// next shown, and fails as body's would). cacheMu must be held.
func (p *Prompt) setBody(i int, text string) {
	if lb := &p.bodies[i]; !lb.done.Load() && p.kept+len(text) <= MaxPromptBytes {
		p.kept += len(text)
		lb.raw, lb.text, lb.err = text, text, nil
		lb.done.Store(true)
	}
}

// execBody executes node i's body and dedents it.
func (p *Prompt) execBody(w *section.Work, i int) (string, error) {
	n := &p.t.nodes[i]
	raw, err := n.sec.BodyWith(w, p.params[i])
	if err != nil {
		return "", &section.Error{Path: n.path, Err: err}
	}
	body := markdown.Dedent(raw)
	if line := markdown.OpenFence(body); line > 0 {
		return "", &section.Error{Path: n.path, Err: fmt.Errorf("rendered body opens a code fence on line %d and never closes it", line)}
	}
	return body, nil
}
