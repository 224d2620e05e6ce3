package tools

import (
	"regexp"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// This file holds what only bash needs checking: bash evaluates the text
// of a variable used in arithmetic, and the subscript of a name given to
// read, unset, test -v, printf -v or ${!x}, as an arithmetic expression,
// and an array subscript there runs command substitutions:
//
//	x='a[$(rm -rf ~)]'; echo $((x))
//
// runs rm. So a variable may be used in arithmetic only if every value the
// script gives it is a number, and a name with a subscript may not hold $
// or a backquote. Variables the script does not set (the environment's)
// are the user's. dash does none of this.

// tainted is the set of variables whose values the policy cannot vouch
// for as numbers.
type tainted struct {
	names map[string]bool
	all   bool            // a name computed at run time was set: any may be
	assoc map[string]bool // associative arrays: their subscripts are strings
	ints  map[string]bool // integer variables (declare -i): every value set is evaluated
}

func newTainted() *tainted {
	return &tainted{names: map[string]bool{}, assoc: map[string]bool{}, ints: map[string]bool{}}
}

func (t *tainted) clone() *tainted {
	n := newTainted()
	n.all = t.all
	for k := range t.names {
		n.names[k] = true
	}
	for k := range t.assoc {
		n.assoc[k] = true
	}
	for k := range t.ints {
		n.ints[k] = true
	}
	return n
}

// positional marks $1, $2... as values the policy cannot vouch for (the
// arguments after sh -c TEXT).
func (t *tainted) positional() { t.names["@"] = true }

func (t *tainted) has(name string) bool {
	if t.all || t.names[name] {
		return true
	}
	switch name {
	case "#", "?", "$", "!":
		return false
	}
	return isNumber(name) || name == "@" || name == "*" || name == "-" || name == "_"
}

// number matches the values bash reads as a plain number.
var number = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\s*[-+]?(0[xX][0-9a-fA-F]+|[0-9]+(#[0-9a-zA-Z@_]+)?)?\s*$`)
})

// collect records the variables the script sets to a value that is not
// a plain number.
func (t *tainted) collect(c *checker, f *syntax.File) {
	numeric := func(w *syntax.Word) bool {
		a := c.arg(w)
		return w == nil || a.static && number().MatchString(a.val)
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.Assign:
			if x.Name != nil && (x.Array != nil || !numeric(x.Value)) {
				t.names[x.Name.Value] = true
			}
			if x.Name == nil && x.Value != nil && !c.arg(x.Value).static {
				t.all = true
			}
		case *syntax.DeclClause:
			for _, a := range x.Args {
				if a.Name == nil && a.Value != nil {
					v := c.arg(a.Value)
					if v.static && strings.HasPrefix(v.val, "-") {
						if strings.Contains(v.val, "n") && x.Variant.Value != "export" {
							t.all = true // a name reference: any name may change
						}
						for _, b := range x.Args {
							if b.Name != nil && strings.Contains(v.val, "A") {
								t.assoc[b.Name.Value] = true
							}
							if b.Name != nil && strings.Contains(v.val, "i") {
								t.ints[b.Name.Value] = true
							}
						}
					}
				}
			}
		case *syntax.WordIter:
			for _, w := range x.Items {
				if !numeric(w) {
					t.names[x.Name.Value] = true
				}
			}
			if len(x.Items) == 0 {
				t.names[x.Name.Value] = true // in "$@"
			}
		case *syntax.ParamExp:
			if x.Exp != nil && (x.Exp.Op == syntax.AssignUnset || x.Exp.Op == syntax.AssignUnsetOrNull) && x.Param != nil && !numeric(x.Exp.Word) {
				t.names[x.Param.Value] = true
			}
		case *syntax.CallExpr:
			if len(x.Args) > 0 {
				names, err := setNames(c.args(x.Args))
				if err != nil {
					t.all = true
				}
				for _, name := range names {
					if name.static {
						t.names[name.val] = true
					} else {
						t.all = true
					}
				}
			}
		}
		return true
	})
}

// setNames returns the operands of a builtin that name variables it sets
// (read, mapfile, getopts, printf -v, wait -p, unset, export...) or tests
// (test -v). An option it does not know is an error: it may name one.
func setNames(argv []arg) ([]arg, error) {
	if !argv[0].static {
		return nil, nil
	}
	rest := argv[1:]
	switch argv[0].val {
	case "read":
		ops, p, err := scan(rest, opts{flags: "ers", valued: "adinNptu"})
		for _, v := range p.all("a") {
			ops = append(ops, arg{val: v, static: true})
		}
		return ops, err
	case "mapfile", "readarray":
		ops, _, err := scan(rest, opts{flags: "t", valued: "dnOsuCc"})
		return ops, err
	case "getopts":
		if len(rest) >= 2 {
			return rest[1:2], nil
		}
	case "printf", "wait":
		for i, a := range rest {
			if !a.static || !strings.HasPrefix(a.val, "-") || a.val == "--" {
				break
			}
			if (a.val == "-v" || a.val == "-p") && i+1 < len(rest) {
				return rest[i+1 : i+2], nil
			}
		}
	case "unset":
		ops, _, err := scan(rest, opts{flags: "fvn"})
		return ops, err
	case "test", "[":
		var out []arg
		for i, a := range rest {
			if a.static && (a.val == "-v" || a.val == "-R") && i+1 < len(rest) {
				out = append(out, rest[i+1])
			}
		}
		return out, nil
	case "export", "readonly", "local", "declare", "typeset":
		ops, _, err := scan(rest, opts{flags: "aAfFgiIlnprtux"})
		out := make([]arg, 0, len(ops))
		for _, a := range ops {
			name, _, _ := strings.Cut(a.val, "=")
			out = append(out, arg{val: name, static: a.static, word: a.word})
		}
		return out, err
	}
	return nil, nil
}

// names checks the variable names a builtin sets, unsets or tests.
func (c *checker) names(builtin string, rest []arg) error {
	argv := append([]arg{{val: builtin, static: true}}, rest...)
	if builtin == "mapfile" || builtin == "readarray" {
		if _, p, err := scan(rest, opts{flags: "t", valued: "dnOsuCc"}); err != nil {
			return err
		} else if p.has("C") {
			return unchecked("%s -C runs a command the policy cannot see", builtin)
		}
	}
	names, err := setNames(argv)
	if err != nil {
		return err
	}
	for _, n := range names {
		if !n.static {
			return unchecked("%s is given a variable name known only when the command runs (%s)", builtin, n.source())
		}
		name, sub, hasSub := strings.Cut(n.val, "[")
		if builtin != "test" && builtin != "[" {
			if err := setVar(name); err != nil {
				return err
			}
			if c.dialect == bashLike && c.vars.ints[name] {
				return unchecked("%s is an integer variable: bash evaluates what %s gives it as arithmetic, which can run commands", name, builtin)
			}
		}
		if hasSub && c.dialect == bashLike && strings.ContainsAny(sub, "$`") {
			return unchecked("bash evaluates the subscript of %s, which can run commands", n.val)
		}
	}
	return nil
}

// decl checks declare, local, export, readonly and typeset in bash.
func (c *checker) decl(d *syntax.DeclClause) error {
	integer := false
	for _, a := range d.Args {
		if a.Name != nil || a.Value == nil {
			continue
		}
		v := c.arg(a.Value)
		switch {
		case !v.static:
			return unchecked("%s is given a name or option known only when the command runs (%s)", d.Variant.Value, v.source())
		case strings.HasPrefix(v.val, "-"):
			if strings.Contains(v.val, "n") && d.Variant.Value != "export" {
				return unchecked("%s -n makes a name reference, which hides which variable a later assignment sets", d.Variant.Value)
			}
			integer = integer || strings.Contains(v.val, "i")
		default:
			name, _, _ := strings.Cut(v.val, "=")
			if err := setVar(name); err != nil {
				return err
			}
		}
	}
	if !integer {
		return nil
	}
	for _, a := range d.Args {
		if a.Name != nil && a.Value != nil {
			if v := c.arg(a.Value); !v.static || !number().MatchString(v.val) {
				return unchecked("%s -i evaluates the value of %s as arithmetic, which can run commands; give a number", d.Variant.Value, a.Name.Value)
			}
		}
	}
	return nil
}

// evaluated checks the nodes where the shell evaluates text: arithmetic
// (which may assign a variable, and in bash may run commands), parameter
// expansions that assign, and in bash prompts and tests.
func (c *checker) evaluated(n syntax.Node) error {
	switch x := n.(type) {
	case *syntax.ArithmExp:
		return c.arith(x.X)
	case *syntax.ArithmCmd:
		return c.arith(x.X)
	case *syntax.LetClause:
		for _, e := range x.Exprs {
			if err := c.arith(e); err != nil {
				return err
			}
		}
	case *syntax.CStyleLoop:
		for _, e := range []syntax.ArithmExpr{x.Init, x.Cond, x.Post} {
			if e != nil {
				if err := c.arith(e); err != nil {
					return err
				}
			}
		}
	case *syntax.ArrayElem:
		if x.Index != nil {
			return c.arith(x.Index)
		}
	case *syntax.ParamExp:
		return c.param(x)
	case *syntax.TestClause:
		return c.test(x.X)
	}
	return nil
}

// param checks a parameter expansion outside arithmetic.
func (c *checker) param(p *syntax.ParamExp) error {
	name := ""
	if p.Param != nil {
		name = p.Param.Value
	}
	if p.Exp != nil && (p.Exp.Op == syntax.AssignUnset || p.Exp.Op == syntax.AssignUnsetOrNull) {
		if err := setVar(name); err != nil {
			return err
		}
	}
	if c.dialect != bashLike {
		return nil
	}
	switch {
	case p.Excl && p.Names == 0 && p.Index == nil && c.vars.has(name):
		return unchecked("${!%s} looks up the variable %s names, whose value the policy cannot vouch for", name, name)
	case p.Exp != nil && p.Exp.Op == syntax.OtherParamOps && p.Exp.Word != nil && p.Exp.Word.Lit() == "P":
		return unchecked("${%s@P} expands the value as a prompt, which can run commands", name)
	case p.Index != nil && !c.vars.assoc[name]:
		return c.arith(p.Index)
	case p.Slice != nil:
		for _, e := range []syntax.ArithmExpr{p.Slice.Offset, p.Slice.Length} {
			if e != nil {
				if err := c.arith(e); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// test checks [[ ]]: -v and -R take names, and -eq and its kin compare
// arithmetic.
func (c *checker) test(e syntax.TestExpr) error {
	switch x := e.(type) {
	case *syntax.UnaryTest:
		if x.Op == syntax.TsVarSet || x.Op == syntax.TsRefVar {
			if w, ok := x.X.(*syntax.Word); ok {
				return c.names("test", []arg{{val: "-v", static: true}, c.arg(w)})
			}
		}
		return c.test(x.X)
	case *syntax.BinaryTest:
		switch x.Op {
		case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
			for _, side := range []syntax.TestExpr{x.X, x.Y} {
				if w, ok := side.(*syntax.Word); ok {
					if err := c.arithWord(w); err != nil {
						return err
					}
				}
			}
			return nil
		}
		if err := c.test(x.X); err != nil {
			return err
		}
		return c.test(x.Y)
	case *syntax.ParenTest:
		return c.test(x.X)
	}
	return nil
}

// arith checks an arithmetic expression: every variable in it must hold
// numbers only, and no command's output may be evaluated.
func (c *checker) arith(e syntax.ArithmExpr) error {
	switch x := e.(type) {
	case *syntax.BinaryArithm:
		if assignOps[x.Op] {
			if w, ok := x.X.(*syntax.Word); ok {
				if err := setVar(w.Lit()); err != nil {
					return err
				}
			}
		}
		if err := c.arith(x.X); err != nil {
			return err
		}
		return c.arith(x.Y)
	case *syntax.UnaryArithm:
		if w, ok := x.X.(*syntax.Word); ok && (x.Op == syntax.Inc || x.Op == syntax.Dec) {
			if err := setVar(w.Lit()); err != nil {
				return err
			}
		}
		return c.arith(x.X)
	case *syntax.ParenArithm:
		return c.arith(x.X)
	case *syntax.Word:
		if c.dialect != bashLike {
			return nil // dash evaluates no text in arithmetic
		}
		return c.arithWord(x)
	}
	return nil
}

// assignOps are the arithmetic operators that assign to a variable.
var assignOps = map[syntax.BinAritOperator]bool{
	syntax.Assgn: true, syntax.AddAssgn: true, syntax.SubAssgn: true, syntax.MulAssgn: true,
	syntax.QuoAssgn: true, syntax.RemAssgn: true, syntax.AndAssgn: true, syntax.OrAssgn: true,
	syntax.XorAssgn: true, syntax.ShlAssgn: true, syntax.ShrAssgn: true, syntax.PowAssgn: true,
}

var identifier = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`) })

// arithWord checks a word bash evaluates as arithmetic.
func (c *checker) arithWord(w *syntax.Word) error {
	var check func(parts []syntax.WordPart) error
	check = func(parts []syntax.WordPart) error {
		for _, part := range parts {
			switch p := part.(type) {
			case *syntax.Lit, *syntax.SglQuoted:
				text := ""
				if l, ok := p.(*syntax.Lit); ok {
					text = l.Value
				} else {
					text = p.(*syntax.SglQuoted).Value
				}
				if strings.ContainsAny(text, "[$`") {
					return unchecked("bash evaluates %q as arithmetic, which can run commands", text)
				}
				for _, id := range identifier().FindAllString(stripBases(text), -1) {
					if c.vars.has(id) {
						return tainted1(id)
					}
				}
			case *syntax.DblQuoted:
				if err := check(p.Parts); err != nil {
					return err
				}
			case *syntax.ParamExp:
				name := ""
				if p.Param != nil {
					name = p.Param.Value
				}
				switch {
				case p.Length:
				case p.Excl || p.Repl != nil || p.Slice != nil || p.Names != 0:
					return unchecked("bash evaluates the text of %s as arithmetic, which can run commands", source(w))
				case c.vars.has(name):
					return tainted1(name)
				case p.Exp != nil && p.Exp.Word != nil:
					if v := c.arg(p.Exp.Word); !v.static || !number().MatchString(v.val) {
						return unchecked("bash evaluates the text of %s as arithmetic, which can run commands", source(w))
					}
				}
				if p.Index != nil && !c.vars.assoc[name] {
					if err := c.arith(p.Index); err != nil {
						return err
					}
				}
			case *syntax.ArithmExp:
				if err := c.arith(p.X); err != nil {
					return err
				}
			default:
				return unchecked("bash evaluates the output of %s as arithmetic, which can run commands", source(w))
			}
		}
		return nil
	}
	return check(w.Parts)
}

// baseNumber is the base#digits form (16#ff), whose digits look like names.
var baseNumber = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[0-9]+#[0-9a-zA-Z@_]+`) })

func stripBases(s string) string { return baseNumber().ReplaceAllString(s, "0") }

func tainted1(name string) error {
	return unchecked("bash evaluates the value of %s as arithmetic, and the command gives it a value that is not a plain number, which can run commands; compute it with expr or awk, or use sh", name)
}
