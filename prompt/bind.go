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
)

// Prompt is a [Template] with its params bound ([Prompt.Template]). It is immutable and safe for
// concurrent use. Template bodies are executed at most once per Prompt and
// their text reused, so params must not be changed after Bind; Content
// functions run at every render.
type Prompt struct {
	t      *Template
	params []any // per node: the bound params, nil for section.None

	prepOnce sync.Once
	prep     prepared
	bodies   []lazyBody // per node: the executed, processed template body
	// blocks holds, per kind of SUMMARY block (summaryBlock and on), per
	// node, the block written that way; the briefs' only when the template
	// has briefs.
	blocks  [numKinds][]lazySummary
	cacheMu sync.Mutex // held while bodies or summaries are filled in

	counts atomic.Pointer[countTable] // token counts of fixed blocks, for the counter used last
}

// prepared is everything about a Prompt that depends on params only.
type prepared struct {
	enabled  []bool // the node and every ancestor enabled
	hasTools []bool // the node or an enabled descendant declares a tool
	err      error
}

type lazyBody struct {
	done atomic.Bool // the fields below are set; written under Prompt.cacheMu
	raw  string      // executed and dedented
	text string      // raw with headings shifted for the node's depth
	err  error
}

// lazySummary is a node's SUMMARY block, kept from the first render that
// shows it: most often a slice of that render's text.
type lazySummary struct {
	done atomic.Bool // text is set; written under Prompt.cacheMu
	text string
}

// Bind binds params to the template, one value per params type its sections
// use (a struct, or a pointer to one). A type no section takes, a type given
// twice, or a type a section needs but is missing is an error naming it.
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
	var missing []string
	for _, pt := range t.needs {
		if _, ok := byType[pt]; !ok {
			missing = append(missing, fmt.Sprintf("missing params of type %v (needed by section %s)", pt, strings.Join(t.pathsTaking(pt), ", ")))
		}
	}
	sort.Strings(missing)
	for _, m := range missing {
		errs = append(errs, errors.New(m))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("prompt: bind %s/%s: %w", t.ns, t.key, err)
	}
	p := &Prompt{t: t, params: make([]any, len(t.nodes)), bodies: make([]lazyBody, len(t.nodes))}
	for k := summaryBlock; k < numKinds; k++ {
		if !k.brief() || t.briefs {
			p.blocks[k] = make([]lazySummary, len(t.nodes))
		}
	}
	for i, n := range t.nodes {
		if pt := n.sec.ParamsType(); pt != nil {
			p.params[i] = byType[pt]
		}
	}
	return p, nil
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

func (p *Prompt) prepare() *prepared {
	p.prepOnce.Do(func() {
		nodes := p.t.nodes
		pr := prepared{
			enabled:  make([]bool, len(nodes)),
			hasTools: make([]bool, len(nodes)),
		}
		var errs []error
		for i, n := range nodes {
			if n.parent >= 0 && !pr.enabled[n.parent] {
				continue
			}
			ok, err := n.sec.Enabled(p.params[i])
			if err != nil {
				errs = append(errs, &section.Error{Path: n.path, Err: err})
			}
			pr.enabled[i] = ok
		}
		for i := len(nodes) - 1; i >= 0; i-- {
			if !pr.enabled[i] {
				continue
			}
			n := nodes[i]
			pr.hasTools[i] = len(n.sec.Tools()) > 0
			for _, c := range n.children {
				if pr.enabled[c] && pr.hasTools[c] {
					pr.hasTools[i] = true
					break
				}
			}
		}
		pr.err = errors.Join(errs...)
		p.prep = pr
	})
	return &p.prep
}

// hasSummary reports whether node i has a summary to render as SUMMARY.
func (p *Prompt) hasSummary(i int) bool { return p.t.hot[i].is(summarized) }

// summary returns node i's SUMMARY block.
func (p *Prompt) summary(i int) string { return p.summaryBlock(i, summaryBlock) }

// summaryBlock returns node i's SUMMARY block written as k.
func (p *Prompt) summaryBlock(i int, k blockKind) string {
	ls := &p.blocks[k][i]
	if ls.done.Load() {
		return ls.text
	}
	var b strings.Builder
	b.Grow(p.summarySize(i, k))
	p.writeSummary(&b, p.prepare(), i, k)
	p.keepSummary(i, k, b.String())
	return b.String()
}

// keepSummary keeps text as node i's SUMMARY block written as k unless one
// is kept.
func (p *Prompt) keepSummary(i int, k blockKind, text string) {
	ls := &p.blocks[k][i]
	p.cacheMu.Lock()
	if !ls.done.Load() {
		ls.text = text
		ls.done.Store(true)
	}
	p.cacheMu.Unlock()
}

// summarySize is the length of node i's SUMMARY block written as k, or a
// little more until it was written once.
func (p *Prompt) summarySize(i int, k blockKind) int {
	if ls := &p.blocks[k][i]; ls.done.Load() {
		return len(ls.text)
	}
	n := &p.t.nodes[i]
	size := len(n.heading) + len(p.summaryText(i, k)) + 2*len(n.path) + 160
	if !k.compact() {
		for _, c := range n.children {
			size += len(p.t.nodes[c].sec.Key()) + 2
		}
	}
	return size
}

// summaryText is node i's summary, or its brief for a brief kind.
func (p *Prompt) summaryText(i int, k blockKind) string {
	if k.brief() {
		return p.t.nodes[i].sec.Brief()
	}
	return p.t.nodes[i].sec.Summary()
}

// writeSummary writes node i's SUMMARY block written as k: heading, summary
// (or brief), and the line telling the model how to open it.
func (p *Prompt) writeSummary(b *strings.Builder, pr *prepared, i int, k blockKind) {
	n := &p.t.nodes[i]
	b.WriteString(n.heading)
	b.WriteString("\n\n")
	b.WriteString(p.summaryText(i, k))
	writeSuffixAs(b, n.path, enabledKids{p.t.nodes, n.children, pr.enabled}, pr.hasTools[i], k.compact())
}

// body returns node i's body processed for a heading at depth: fixed text,
// the template executed once per Prompt, or Content called now.
func (p *Prompt) body(i int, depth int) (string, error) {
	n := &p.t.nodes[i]
	switch {
	case !p.t.hot[i].is(dynamic):
		if depth == n.depth {
			return n.static, nil
		}
		return shiftHeadings(n.dedented, depth+2), nil
	case p.t.hot[i].is(live):
		raw, err := p.execBody(i)
		if err != nil {
			return "", err
		}
		return shiftHeadings(raw, depth+2), nil
	}
	lb := &p.bodies[i]
	if !lb.done.Load() {
		p.cacheMu.Lock()
		if !lb.done.Load() {
			lb.raw, lb.err = p.execBody(i)
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

// keepBody keeps text, which needed no processing, as node i's executed
// body unless one is kept.
func (p *Prompt) keepBody(i int, text string) {
	lb := &p.bodies[i]
	p.cacheMu.Lock()
	if !lb.done.Load() {
		lb.raw, lb.text, lb.err = text, text, nil
		lb.done.Store(true)
	}
	p.cacheMu.Unlock()
}

// execBody executes node i's body and dedents it.
func (p *Prompt) execBody(i int) (string, error) {
	n := &p.t.nodes[i]
	raw, err := n.sec.Body(p.params[i])
	if err != nil {
		return "", &section.Error{Path: n.path, Err: err}
	}
	body := markdown.Dedent(raw)
	if line := markdown.OpenFence(body); line > 0 {
		return "", &section.Error{Path: n.path, Err: fmt.Errorf("rendered body opens a code fence on line %d and never closes it", line)}
	}
	return body, nil
}
