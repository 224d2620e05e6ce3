package section

import (
	"fmt"
	"reflect"
	"sync"
	"text/template"
	"text/template/parse"
)

// What running a template may do besides writing is bounded too
// (docs/design.md, "Rendering rules"): a loop that writes nothing, or
// templates that call each other twice at every level, would otherwise
// run for hours, and a variable that doubles itself in a loop would fill
// memory without writing a byte. See [Work].

// maxWidth bounds a width or precision in a printf format: fmt pads in
// memory before anything is written.
const maxWidth = 1 << 16

// guarded is a compiled template with its bounds: charged is set when it
// loops, calls templates or calls a string builtin, so that an execution
// charges its work.
type guarded struct {
	t       *template.Template
	charged bool
	own     template.FuncMap // the bounded functions the template's Funcs leave it
	copies  sync.Pool        // of *charging, for executions that charge a Work
}

// charging is a copy of a guarded template whose functions charge via,
// a Work pointed at the Work of the one execution using the copy.
type charging struct {
	t   *template.Template
	via *Work
}

// guard puts the bounds on t, parsed with boundedFuncs and then funcs: a
// call of stepRange starts every range body and, when any template is
// called, a call of stepCall every template, the top one too (a body may
// call itself by the section's key).
func guard(t *template.Template, funcs template.FuncMap) *guarded {
	g := &guarded{t: t, own: template.FuncMap{}}
	for name := range boundedFuncs {
		if _, mine := funcs[name]; !mine {
			g.own[name] = nil
		}
	}
	var trees []*parse.ListNode
	calls := false
	for _, tt := range t.Templates() {
		if tt.Tree == nil || tt.Root == nil {
			continue
		}
		trees = append(trees, tt.Root)
		u := g.guardNodes(tt.Root)
		g.charged = g.charged || u.ranges || u.builtins
		calls = calls || u.calls
	}
	if calls {
		for _, root := range trees {
			prependStep(root, stepCall, root.Pos)
		}
		g.charged = true
	}
	return g
}

// uses is what guardNodes found under a node.
type uses struct{ ranges, calls, builtins bool }

func (u *uses) add(o uses) {
	u.ranges, u.calls, u.builtins = u.ranges || o.ranges, u.calls || o.calls, u.builtins || o.builtins
}

// guardNodes puts a call of stepRange first in every range body under n,
// and reports whether there was a range, whether a template is called and
// whether a bounded builtin is.
func (g *guarded) guardNodes(n parse.Node) (u uses) {
	walk := func(l *parse.ListNode) {
		if l != nil {
			for _, c := range l.Nodes {
				u.add(g.guardNodes(c))
			}
		}
	}
	switch n := n.(type) {
	case *parse.ListNode:
		walk(n)
	case *parse.ActionNode:
		u.add(g.guardNodes(n.Pipe))
	case *parse.PipeNode:
		if n != nil {
			for _, c := range n.Cmds {
				for _, a := range c.Args {
					u.add(g.guardNodes(a))
				}
			}
		}
	case *parse.ChainNode:
		u.add(g.guardNodes(n.Node))
	case *parse.IdentifierNode:
		_, u.builtins = g.own[n.Ident]
	case *parse.RangeNode:
		u.add(g.guardNodes(n.Pipe))
		walk(n.List)
		walk(n.ElseList)
		prependStep(n.List, stepRange, n.Pos)
		u.ranges = true
	case *parse.IfNode:
		u.add(g.guardNodes(n.Pipe))
		walk(n.List)
		walk(n.ElseList)
	case *parse.WithNode:
		u.add(g.guardNodes(n.Pipe))
		walk(n.List)
		walk(n.ElseList)
	case *parse.TemplateNode:
		u.add(g.guardNodes(n.Pipe))
		u.calls = true
	}
	return u
}

// prependStep puts a call of step first in list, at pos (where an error
// in it is said to be).
func prependStep(list *parse.ListNode, step string, pos parse.Pos) {
	if list == nil {
		return
	}
	call := &parse.ActionNode{NodeType: parse.NodeAction, Pos: pos, Pipe: &parse.PipeNode{
		NodeType: parse.NodePipe, Pos: pos,
		Cmds: []*parse.CommandNode{{NodeType: parse.NodeCommand, Pos: pos, Args: []parse.Node{parse.NewIdentifier(step).SetPos(pos)}}},
	}}
	list.Nodes = append([]parse.Node{call}, list.Nodes...)
}

// execute runs the template with dot into b, charging w (or a Work of its
// own when w is nil) for what it writes and, when it loops, calls
// templates or builds strings, for that: on a copy whose functions charge
// w, so that executions at once charge their own Work. Copies are kept
// for later executions, one execution at a time each: making one costs
// more than most executions.
func (g *guarded) execute(w *Work, b *boundedBuilder, dot any) error {
	w = w.orNew()
	t := g.t
	if g.charged {
		c, _ := g.copies.Get().(*charging)
		if c == nil {
			var err error
			if c, err = g.copy(); err != nil {
				return err
			}
		}
		c.via.to = w
		defer func() {
			c.via.to = nil
			g.copies.Put(c)
		}()
		t = c.t
	}
	b.work = w
	return sayStep(t.Execute(b, dot))
}

// copy makes a copy of the template whose functions charge a Work of its
// own, to be pointed at an execution's.
func (g *guarded) copy() (*charging, error) {
	c, err := g.t.Clone()
	if err != nil {
		return nil, err
	}
	via := &Work{}
	funcs := template.FuncMap{}
	for name, f := range workFuncs(via) {
		if _, ok := g.own[name]; ok {
			funcs[name] = f
		}
	}
	return &charging{t: c.Funcs(funcs), via: via}, nil
}

// sprint is fmt.Sprint (fmt.Sprintln when ln), refused before it is built
// when its text would be past MaxBodyBytes, and charged to w.
func (w *Work) sprint(name string, args []any, ln bool) (string, error) {
	z := sizer{limit: MaxBodyBytes}
	for i, a := range args {
		z.add(directive{verb: 'v', prec: -1}, reflect.ValueOf(a))
		if _, str := a.(string); ln || i > 0 && !str {
			z.n++ // a space, or the newline (Sprint puts none next to a string)
		}
	}
	if err := z.check(name); err != nil {
		return "", err
	}
	var made string
	if ln {
		made = fmt.Sprintln(args...)
	} else {
		made = fmt.Sprint(args...)
	}
	made, err := bounded(name, made)
	if err != nil {
		return "", err
	}
	return z.charge(name, w, made)
}

// printf is fmt.Sprintf with widths and precisions bounded by maxWidth,
// refused before it is built when its text would be past MaxBodyBytes,
// and charged to w.
func (w *Work) printf(format string, args ...any) (string, error) {
	z := sizer{limit: MaxBodyBytes, n: len(format), read: len(format)}
	var few [8]bool
	used := few[:0]
	if len(args) > len(few) {
		used = make([]bool, 0, len(args))
	}
	used = used[:len(args)]
	err := parseFormat(format, args, func(d directive) {
		if d.arg >= 0 && d.arg < len(args) {
			used[d.arg] = true
			z.add(d, reflect.ValueOf(args[d.arg]))
		}
		z.n += 16 // %!v(MISSING), %!v(BADINDEX) and the like
	})
	if err != nil {
		return "", err
	}
	for i, u := range used {
		if !u { // %!(EXTRA type=value)
			z.add(directive{verb: 'v', prec: -1, bad: true}, reflect.ValueOf(args[i]))
		}
	}
	if err := z.check("printf"); err != nil {
		return "", err
	}
	made, err := bounded("printf", fmt.Sprintf(format, args...))
	if err != nil {
		return "", err
	}
	return z.charge("printf", w, made)
}

// escape is one of text/template's escapers (html, js, urlquery): its
// arguments printed as print prints them (one string is taken as it is),
// refused when the escaped text would be past MaxBodyBytes (size gives a
// bound of it, reading the text once), and charged to w.
func (w *Work) escape(name string, args []any, size func(string) int, esc func(string) string) (string, error) {
	var s string
	if str, ok := oneString(args); ok {
		s = str
	} else {
		var err error
		if s, err = w.sprint(name, args, false); err != nil {
			return "", err
		}
	}
	n := size(s)
	if n > MaxBodyBytes {
		return "", fmt.Errorf("%s: its result would be up to %d bytes, more than the %d a body may hold", name, n, MaxBodyBytes)
	}
	if err := w.move(len(s) + n); err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	return esc(s), nil
}

func oneString(args []any) (string, bool) {
	if len(args) != 1 {
		return "", false
	}
	s, ok := args[0].(string)
	return s, ok
}

func queryEscape(s string) string { return template.URLQueryEscaper(s) }

// bounded checks a string built, for what the sizes before could not
// foresee: a String method's result.
func bounded(name, s string) (string, error) {
	if len(s) > MaxBodyBytes {
		return "", fmt.Errorf("%s: its result is %d bytes, more than the %d a body may hold", name, len(s), MaxBodyBytes)
	}
	return s, nil
}
