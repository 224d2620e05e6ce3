package section

import (
	"fmt"
	"reflect"
	"text/template"
	"text/template/parse"
)

// checkFields reports the first field or method a template names that its
// params type lacks, so a typo fails when the prompt is built rather than at
// the first render. Where the type of dot cannot be known statically (an
// interface, a variable other than $, a function's result) the check stops
// and leaves the rest to execution, which runs with missingkey=error.
func checkFields(t *template.Template, params reflect.Type) error {
	c := fieldChecker{root: params}
	for _, tt := range t.Templates() {
		if tt.Tree == nil || tt.Root == nil {
			continue
		}
		c.tree = tt.Tree
		dot := params
		if tt.Name() != t.Name() {
			dot = nil // a {{define}}d template: dot is whatever it is called with
		}
		if err := c.list(tt.Root, dot); err != nil {
			return err
		}
	}
	return nil
}

type fieldChecker struct {
	root reflect.Type
	tree *parse.Tree // the template being checked, for error locations
}

func (c *fieldChecker) list(l *parse.ListNode, dot reflect.Type) error {
	if l == nil {
		return nil
	}
	for _, n := range l.Nodes {
		if err := c.node(n, dot); err != nil {
			return err
		}
	}
	return nil
}

func (c *fieldChecker) node(n parse.Node, dot reflect.Type) error {
	switch n := n.(type) {
	case *parse.ActionNode:
		_, err := c.pipe(n.Pipe, dot)
		return err
	case *parse.IfNode:
		return c.branch(&n.BranchNode, dot, false)
	case *parse.WithNode:
		return c.branch(&n.BranchNode, dot, true)
	case *parse.RangeNode:
		t, err := c.pipe(n.Pipe, dot)
		if err != nil {
			return err
		}
		if err := c.list(n.List, elemType(t)); err != nil {
			return err
		}
		return c.list(n.ElseList, dot)
	case *parse.TemplateNode:
		if n.Pipe != nil {
			_, err := c.pipe(n.Pipe, dot)
			return err
		}
	case *parse.ListNode:
		return c.list(n, dot)
	}
	return nil
}

func (c *fieldChecker) branch(b *parse.BranchNode, dot reflect.Type, with bool) error {
	t, err := c.pipe(b.Pipe, dot)
	if err != nil {
		return err
	}
	inner := dot
	if with {
		inner = t
	}
	if err := c.list(b.List, inner); err != nil {
		return err
	}
	return c.list(b.ElseList, dot)
}

// pipe checks a pipeline and returns the type it yields, nil when unknown.
func (c *fieldChecker) pipe(p *parse.PipeNode, dot reflect.Type) (reflect.Type, error) {
	if p == nil {
		return nil, nil
	}
	var last reflect.Type
	for i, cmd := range p.Cmds {
		var t reflect.Type
		for j, arg := range cmd.Args {
			at, err := c.arg(arg, dot)
			if err != nil {
				return nil, err
			}
			if j == 0 && len(cmd.Args) == 1 {
				t = at
			}
		}
		if i == len(p.Cmds)-1 {
			last = t
		}
	}
	if len(p.Decl) > 0 {
		return nil, nil
	}
	return last, nil
}

func (c *fieldChecker) arg(n parse.Node, dot reflect.Type) (reflect.Type, error) {
	switch n := n.(type) {
	case *parse.DotNode:
		return dot, nil
	case *parse.FieldNode:
		return c.chain(dot, n.Ident, n)
	case *parse.VariableNode:
		if n.Ident[0] == "$" {
			return c.chain(c.root, n.Ident[1:], n)
		}
	case *parse.ChainNode:
		t, err := c.arg(n.Node, dot)
		if err != nil {
			return nil, err
		}
		return c.chain(t, n.Field, n)
	case *parse.PipeNode:
		return c.pipe(n, dot)
	}
	return nil, nil
}

// chain follows field names from t, failing on the first name t lacks.
func (c *fieldChecker) chain(t reflect.Type, names []string, at parse.Node) (reflect.Type, error) {
	for _, name := range names {
		if t == nil {
			return nil, nil
		}
		next, known, ok := member(t, name)
		if !ok {
			loc, _ := c.tree.ErrorContext(at)
			return nil, &FieldError{Type: t, Field: name, Location: loc}
		}
		if !known {
			return nil, nil
		}
		t = next
	}
	return t, nil
}

// member returns the type of t.name. known is false when the name cannot be
// checked (a map or interface); ok is false when t has no such member.
func member(t reflect.Type, name string) (next reflect.Type, known, ok bool) {
	if m, found := t.MethodByName(name); found {
		return methodResult(m.Type), true, true
	}
	if t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface {
		if m, found := reflect.PointerTo(t).MethodByName(name); found {
			return methodResult(m.Type), true, true
		}
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		f, found := t.FieldByName(name)
		if !found || !f.IsExported() {
			return nil, false, false
		}
		return f.Type, true, true
	case reflect.Map:
		return t.Elem(), true, true
	case reflect.Interface:
		return nil, false, true
	}
	return nil, false, false
}

func methodResult(m reflect.Type) reflect.Type {
	if m.NumOut() == 0 {
		return nil
	}
	return m.Out(0)
}

func elemType(t reflect.Type) reflect.Type {
	if t == nil {
		return nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map, reflect.Chan:
		return t.Elem()
	}
	return nil
}

// FieldError reports a template that names a field or method its params
// type does not have.
type FieldError struct {
	Type     reflect.Type // the type that lacks the field
	Field    string       // the missing name
	Location string       // template name, line and column
	Template string       // which template: "body", "summary" or "brief"
}

func (e *FieldError) Error() string {
	kind := e.Template
	if kind == "" {
		kind = "body"
	}
	return fmt.Sprintf("%s template references .%s, but %v has no field or method %s (at %s)", kind, e.Field, e.Type, e.Field, e.Location)
}
