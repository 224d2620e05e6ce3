package prompt

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/unfold-dev/unfold/section"
)

// Prompt is a [Template] with its params bound. It is immutable and safe for
// concurrent use. Template bodies are executed at most once per Prompt and
// their text reused, so params must not be changed after Bind; Content
// functions run at every render.
type Prompt struct {
	t      *Template
	params []any // per node: the bound params, nil for section.None

	prepOnce sync.Once
	prep     prepared
	bodies   []lazyBody // per node: the executed, processed template body

	lastLen atomic.Int64 // length of the last render, to size the next one's buffer
	counts  countCache   // token counts of fixed blocks
}

// prepared is everything about a Prompt that depends on params only.
type prepared struct {
	enabled  []bool     // the node and every ancestor enabled
	hasTools []bool     // the node or an enabled descendant declares a tool
	kids     [][]string // keys of enabled direct children
	summary  []string   // the SUMMARY block of enabled nodes with a summary
	err      error
}

type lazyBody struct {
	once sync.Once
	raw  string // executed and dedented
	text string // raw with headings shifted for the node's depth
	err  error
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
		if _, used := t.needs[pt]; !used {
			errs = append(errs, fmt.Errorf("unused params of type %v: no section takes it", pt))
			continue
		}
		byType[pt] = v.Interface()
	}
	var missing []string
	for pt, paths := range t.needs {
		if _, ok := byType[pt]; !ok {
			missing = append(missing, fmt.Sprintf("missing params of type %v (needed by section %s)", pt, strings.Join(paths, ", ")))
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
			kids:     make([][]string, len(nodes)),
			summary:  make([]string, len(nodes)),
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
				if pr.enabled[c] {
					pr.hasTools[i] = pr.hasTools[i] || pr.hasTools[c]
					pr.kids[i] = append(pr.kids[i], nodes[c].sec.Key())
				}
			}
		}
		for i := range nodes {
			if pr.enabled[i] && nodes[i].sec.Summary() != "" {
				pr.summary[i] = summaryBlock(&nodes[i], pr.kids[i], pr.hasTools[i])
			}
		}
		pr.err = errors.Join(errs...)
		p.prep = pr
	})
	return &p.prep
}

// hasSummary reports whether node i has a summary to render as SUMMARY.
func (p *Prompt) hasSummary(i int) bool { return p.t.nodes[i].sec.Summary() != "" }

// summaryBlock returns n's SUMMARY block: heading, summary, and the line
// telling the model how to open it.
func summaryBlock(n *node, kids []string, hasTools bool) string {
	var b strings.Builder
	b.Grow(len(n.heading) + len(n.sec.Summary()) + 200)
	b.WriteString(n.heading)
	b.WriteString("\n\n")
	b.WriteString(n.sec.Summary())
	writeSuffix(&b, n.path, kids, hasTools)
	return b.String()
}

// body returns node i's body processed for a heading at depth: fixed text,
// the template executed once per Prompt, or Content called now.
func (p *Prompt) body(i int, depth int) (string, error) {
	n := &p.t.nodes[i]
	switch {
	case !n.sec.Dynamic():
		if depth == n.depth {
			return n.static, nil
		}
		return shiftHeadings(n.dedented, depth+2), nil
	case n.sec.Live():
		raw, err := p.execBody(i)
		if err != nil {
			return "", err
		}
		return shiftHeadings(raw, depth+2), nil
	}
	lb := &p.bodies[i]
	lb.once.Do(func() {
		lb.raw, lb.err = p.execBody(i)
		lb.text = shiftHeadings(lb.raw, n.depth+2)
	})
	if lb.err != nil || depth == n.depth {
		return lb.text, lb.err
	}
	return shiftHeadings(lb.raw, depth+2), nil
}

// execBody executes node i's body and dedents it.
func (p *Prompt) execBody(i int) (string, error) {
	n := &p.t.nodes[i]
	raw, err := n.sec.Body(p.params[i])
	if err != nil {
		return "", &section.Error{Path: n.path, Err: err}
	}
	body := section.Dedent(raw)
	if line := section.OpenFence(body); line > 0 {
		return "", &section.Error{Path: n.path, Err: fmt.Errorf("rendered body opens a code fence on line %d and never closes it", line)}
	}
	return body, nil
}
