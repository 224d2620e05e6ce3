package section

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"text/template"
	"text/template/parse"
)

// What running a template may do besides writing is bounded too
// (docs/design.md, "Rendering rules"): a loop that writes nothing, or
// templates that call each other twice at every level, would otherwise
// run for hours, and a variable that doubles itself in a loop would fill
// memory without writing a byte.

// MaxTemplateSteps bounds the loop iterations and template calls of one
// execution of a template (a body, a summary or a brief).
const MaxTemplateSteps = 1_000_000

// ErrTooManySteps is the error of a template that made more than
// [MaxTemplateSteps] loop iterations and template calls.
var ErrTooManySteps = errors.New("too many loop iterations and template calls")

// maxSteps is MaxTemplateSteps, lowered by tests.
var maxSteps = MaxTemplateSteps

// maxWidth bounds a width or precision in a printf format: fmt pads in
// memory before anything is written.
const maxWidth = 1 << 16

// stepFunc is the function a guarded template calls at the start of every
// range iteration and every template; an execution counts its calls.
const stepFunc = "unfold_step"

// guarded is a compiled template with its bounds: steps is set when it
// loops or calls templates, so that an execution counts its steps.
type guarded struct {
	t     *template.Template
	steps bool
}

// boundedFuncs replace the builtins that build strings, so that no
// string a template builds grows past MaxBodyBytes. stepFunc is a
// placeholder each counting execution replaces.
var boundedFuncs = template.FuncMap{
	"print":    func(args ...any) (string, error) { return bounded("print", fmt.Sprint(args...)) },
	"println":  func(args ...any) (string, error) { return bounded("println", fmt.Sprintln(args...)) },
	"printf":   boundedPrintf,
	"html":     func(args ...any) (string, error) { return bounded("html", template.HTMLEscaper(args...)) },
	"js":       func(args ...any) (string, error) { return bounded("js", template.JSEscaper(args...)) },
	"urlquery": func(args ...any) (string, error) { return bounded("urlquery", template.URLQueryEscaper(args...)) },
	stepFunc:   func() string { return "" },
}

func bounded(name, s string) (string, error) {
	if len(s) > MaxBodyBytes {
		return "", fmt.Errorf("%s: its result is %d bytes, more than the %d a body may hold", name, len(s), MaxBodyBytes)
	}
	return s, nil
}

// formatNumbers returns the largest number a printf format's verbs give
// (as a width, a precision or an argument index), and whether one takes
// its width or precision from an argument ('*').
func formatNumbers(format string) (most int, star bool) {
	inVerb, n := false, 0
	for i := 0; i < len(format); i++ {
		switch c := format[i]; {
		case !inVerb:
			inVerb = c == '%'
		case c >= '0' && c <= '9':
			n = min(n*10+int(c-'0'), math.MaxInt32)
			most = max(most, n)
		case c == '*':
			star, n = true, 0
		case strings.IndexByte("+-# .[]", c) >= 0:
			n = 0
		default: // the verb, or the second % of %%
			inVerb, n = false, 0
		}
	}
	return most, star
}

// boundedPrintf is printf with widths and precisions bounded by maxWidth:
// a number in the format, or any integer argument when the format takes
// one with '*'.
func boundedPrintf(format string, args ...any) (string, error) {
	most, star := formatNumbers(format)
	if most > maxWidth {
		return "", fmt.Errorf("printf: the width or precision %d is more than the %d a format may give", most, maxWidth)
	}
	if star {
		// fmt takes a width from an argument of any integer type.
		for _, a := range args {
			v := reflect.ValueOf(a)
			big := false
			switch v.Kind() {
			case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
				big = v.Int() > maxWidth || v.Int() < -maxWidth
			case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
				big = v.Uint() > maxWidth
			}
			if big {
				return "", fmt.Errorf("printf: the argument %v may be a width or precision (the format has '*'), more than the %d a format may give", a, maxWidth)
			}
		}
	}
	return bounded("printf", fmt.Sprintf(format, args...))
}

// guard puts the bounds on t, parsed with boundedFuncs: a call of stepFunc
// starts every range body and, when any template is called, every
// template, the top one too (a body may call itself by the section's
// key).
func guard(t *template.Template) *guarded {
	g := &guarded{t: t}
	var trees []*parse.ListNode
	calls := false
	for _, tt := range t.Templates() {
		if tt.Tree == nil || tt.Root == nil {
			continue
		}
		trees = append(trees, tt.Root)
		ranges, called := guardNodes(tt.Root)
		g.steps = g.steps || ranges
		calls = calls || called
	}
	if calls {
		for _, root := range trees {
			prependStep(root)
		}
		g.steps = true
	}
	return g
}

// guardNodes puts a call of stepFunc first in every range body under n,
// and reports whether there was a range, and whether a template is called.
func guardNodes(n parse.Node) (ranges, calls bool) {
	walk := func(l *parse.ListNode) {
		if l == nil {
			return
		}
		for _, c := range l.Nodes {
			r, k := guardNodes(c)
			ranges, calls = ranges || r, calls || k
		}
	}
	switch n := n.(type) {
	case *parse.ListNode:
		walk(n)
	case *parse.RangeNode:
		walk(n.List)
		walk(n.ElseList)
		prependStep(n.List)
		ranges = true
	case *parse.IfNode:
		walk(n.List)
		walk(n.ElseList)
	case *parse.WithNode:
		walk(n.List)
		walk(n.ElseList)
	case *parse.TemplateNode:
		calls = true
	}
	return ranges, calls
}

// prependStep puts a call of stepFunc first in list.
func prependStep(list *parse.ListNode) {
	if list == nil {
		return
	}
	call := &parse.ActionNode{NodeType: parse.NodeAction, Pos: list.Pos, Pipe: &parse.PipeNode{
		NodeType: parse.NodePipe, Pos: list.Pos,
		Cmds: []*parse.CommandNode{{NodeType: parse.NodeCommand, Pos: list.Pos, Args: []parse.Node{parse.NewIdentifier(stepFunc).SetPos(list.Pos)}}},
	}}
	list.Nodes = append([]parse.Node{call}, list.Nodes...)
}

// execute runs the template with dot into b, counting its steps when it
// loops or calls templates: on a copy whose stepFunc counts, so that
// executions at once count apart.
func (g *guarded) execute(b *boundedBuilder, dot any) error {
	t := g.t
	if g.steps {
		c, err := t.Clone()
		if err != nil {
			return err
		}
		n, limit := 0, maxSteps
		c.Funcs(template.FuncMap{stepFunc: func() (string, error) {
			if n++; n > limit {
				return "", fmt.Errorf("%w: more than %d; a template that repeats itself that much is a mistake", ErrTooManySteps, limit)
			}
			return "", nil
		}})
		t = c
	}
	return t.Execute(b, dot)
}
