package section

import (
	"errors"
	"fmt"
	"strconv"
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

// boundedPrintf is printf with widths and precisions bounded by maxWidth:
// a number in the format, or any integer argument when the format takes
// one with '*'.
func boundedPrintf(format string, args ...any) (string, error) {
	star := false
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		for i++; i < len(format); i++ {
			c := format[i]
			switch {
			case c == '*':
				star = true
			case c >= '0' && c <= '9':
				j := i
				for j < len(format) && format[j] >= '0' && format[j] <= '9' {
					j++
				}
				if n, err := strconv.Atoi(format[i:j]); err != nil || n > maxWidth {
					return "", fmt.Errorf("printf: the width or precision %s is more than the %d a format may give", format[i:j], maxWidth)
				}
				i = j - 1
			case c == '+' || c == '-' || c == '#' || c == ' ' || c == '.' || c == '[' || c == ']':
			default:
				goto verb
			}
		}
	verb:
	}
	if star {
		for _, a := range args {
			if n, ok := a.(int); ok && (n > maxWidth || n < -maxWidth) {
				return "", fmt.Errorf("printf: the argument %d may be a width or precision (the format has '*'), more than the %d a format may give", n, maxWidth)
			}
		}
	}
	return bounded("printf", fmt.Sprintf(format, args...))
}

// guard puts the bounds on t, parsed with boundedFuncs: a call of stepFunc
// starts every range body and every template t defines.
func guard(t *template.Template) *guarded {
	g := &guarded{t: t}
	for _, tt := range t.Templates() {
		if tt.Tree == nil || tt.Root == nil {
			continue
		}
		if tt != t {
			// A defined template: calls of it, and recursion, count.
			prependStep(tt.Root)
			g.steps = true
		}
		if guardRanges(tt.Root) {
			g.steps = true
		}
	}
	return g
}

// guardRanges puts a call of stepFunc first in every range body under n,
// and reports whether there was one.
func guardRanges(n parse.Node) bool {
	found := false
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return false
		}
		for _, c := range n.Nodes {
			found = guardRanges(c) || found
		}
	case *parse.RangeNode:
		guardRanges(n.List)
		guardRanges(n.ElseList)
		prependStep(n.List)
		found = true
	case *parse.IfNode:
		found = guardRanges(n.List)
		found = guardRanges(n.ElseList) || found
	case *parse.WithNode:
		found = guardRanges(n.List)
		found = guardRanges(n.ElseList) || found
	}
	return found
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
