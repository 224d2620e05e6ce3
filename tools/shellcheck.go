package tools

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// This file checks a shell script before it runs: it parses the text with
// a real shell parser and looks at every command the shell would run,
// wherever it is (pipelines, lists, subshells, functions, command and
// process substitution, here-documents), and inside the programs that run
// their arguments as a command (shellwrap.go). A word whose value is not
// known before the script runs (a variable, a substitution, a glob) may be
// an argument; it may not be a program name or a script to run.

// maxNesting bounds how deep eval, sh -c and wrappers may nest.
const maxNesting = 8

// dialect is the shell language a script is written in.
type dialect int

const (
	// posix is dash: no arrays, no $'...', and arithmetic never runs
	// commands.
	posix dialect = iota
	// bashLike is bash and shells that may be bash (sh on systems where it
	// is not dash, busybox ash): checked with bash's grammar and its
	// arithmetic and variable-name rules.
	bashLike
)

// dialectOf returns the dialect of the shell at path, or false for a shell
// the policy cannot check (zsh, ksh, fish, csh...).
func dialectOf(path string) (dialect, bool) {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	switch filepath.Base(path) {
	case "dash":
		return posix, true
	case "bash", "sh", "ash", "busybox", "rbash":
		return bashLike, true
	}
	return 0, false
}

func (d dialect) lang() syntax.LangVariant {
	if d == posix {
		return syntax.LangPOSIX
	}
	return syntax.LangBash
}

func (d dialect) String() string {
	if d == posix {
		return "POSIX sh"
	}
	return "bash"
}

// checker checks the scripts of one shell process.
type checker struct {
	allow    allowlist // nil: every program not blocked may run
	root     string    // the working directory commands must stay in
	dir      string    // where the script starts
	path     string    // PATH
	dialect  dialect
	depth    int
	funcs    map[string]bool // functions the script declares
	movesDir bool            // the script changes directory (cd, pushd)
	vars     *tainted        // bash: variables whose values the policy cannot vouch for
}

// newChecker returns a checker for a script run by a shell of dialect d in
// dir.
func newChecker(p ShellPolicy, root, dir string, d dialect) *checker {
	return &checker{
		allow:   newAllowlist(p.Allow, dir, pathEnv()),
		root:    root,
		dir:     dir,
		path:    pathEnv(),
		dialect: d,
		funcs:   map[string]bool{},
		vars:    newTainted(),
	}
}

// child returns a checker for a new shell process of dialect d started by
// this one: it shares no functions, and inherits what this shell exported.
func (c *checker) child(d dialect) (*checker, error) {
	if c.depth >= maxNesting {
		return nil, unchecked("commands nest more than %d levels deep (eval, sh -c, wrappers)", maxNesting)
	}
	n := *c
	n.dialect, n.depth = d, c.depth+1
	n.funcs = map[string]bool{}
	n.vars = c.vars.clone()
	return &n, nil
}

// script parses and checks text, a script for this checker's shell.
func (c *checker) script(text string) error {
	f, err := syntax.NewParser(syntax.Variant(c.dialect.lang())).Parse(strings.NewReader(text), "")
	if err != nil {
		return unchecked("the command is not valid %s: %v", c.dialect, err)
	}
	c.prepare(f)
	return c.walk(f)
}

// eval checks text run by this same shell (eval, trap): it sees and adds
// to the same functions and variables.
func (c *checker) eval(text string) error {
	if c.depth >= maxNesting {
		return unchecked("commands nest more than %d levels deep (eval, sh -c, wrappers)", maxNesting)
	}
	c.depth++
	defer func() { c.depth-- }()
	return c.script(text)
}

// prepare records what the whole script does that changes how its
// commands read, wherever it is in the script: the functions it declares,
// whether it changes directory, and in bash which variables get values the
// policy cannot vouch for. Text given to eval and trap counts as part of
// the script.
func (c *checker) prepare(f *syntax.File) {
	c.prepareDepth(f, c.depth)
}

func (c *checker) prepareDepth(f *syntax.File, depth int) {
	syntax.Walk(f, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.FuncDecl:
			if x.Name != nil {
				c.funcs[x.Name.Value] = true
			}
		case *syntax.CallExpr:
			if len(x.Args) == 0 {
				break
			}
			argv := c.args(x.Args)
			if argv[0].static && (argv[0].val == "builtin" || argv[0].val == "command") && len(argv) > 1 {
				argv = argv[1:]
			}
			switch argv[0].val {
			case "cd", "chdir", "pushd", "popd":
				c.movesDir = true
			case "eval", "trap":
				if text, ok := joined(argv[1:]); ok && depth < maxNesting {
					if inner, err := syntax.NewParser(syntax.Variant(c.dialect.lang())).Parse(strings.NewReader(text), ""); err == nil {
						c.prepareDepth(inner, depth+1)
					}
				}
			}
		}
		return true
	})
	if c.dialect == bashLike {
		c.vars.collect(c, f)
	}
}

// walk checks every node of the tree.
func (c *checker) walk(node syntax.Node) error {
	var err error
	syntax.Walk(node, func(n syntax.Node) bool {
		if err != nil {
			return false
		}
		switch x := n.(type) {
		case *syntax.CallExpr:
			if len(x.Args) > 0 {
				err = c.command(c.args(x.Args), viaShell)
			}
		case *syntax.Redirect:
			err = c.redirect(x)
		case *syntax.Assign:
			err = c.assign(x)
		case *syntax.WordIter:
			err = setVar(x.Name.Value)
		case *syntax.DeclClause:
			err = c.decl(x)
		default:
			err = c.evaluated(n)
		}
		return err == nil
	})
	return err
}

// assign checks a variable assignment, before a command or on its own.
func (c *checker) assign(a *syntax.Assign) error {
	if a.Name == nil {
		return nil // a DeclClause operand computed at run time: see decl
	}
	if err := setVar(a.Name.Value); err != nil {
		return err
	}
	if c.dialect != bashLike {
		return nil
	}
	if c.vars.ints[a.Name.Value] && (a.Value != nil || a.Array != nil) {
		if v := c.arg(a.Value); a.Array != nil || !v.static || !number().MatchString(v.val) {
			return unchecked("%s is an integer variable: bash evaluates the value given to it as arithmetic, which can run commands; give a number", a.Name.Value)
		}
	}
	if a.Index != nil && !c.vars.assoc[a.Name.Value] {
		return c.arith(a.Index)
	}
	return nil
}

// writeTargets are the files a redirection may write: none that keep data.
var writeTargets = []string{"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/fd/1", "/dev/fd/2"}

// redirect refuses a redirection that writes a file.
func (c *checker) redirect(r *syntax.Redirect) error {
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.RdrAll, syntax.AppAll, syntax.RdrInOut:
	case syntax.DplOut:
		if a := c.arg(r.Word); a.static && (a.val == "-" || isNumber(a.val)) {
			return nil
		}
	default:
		return nil
	}
	if a := c.arg(r.Word); a.static && slices.Contains(writeTargets, a.val) {
		return nil
	}
	return blocked(ruleRedirection, "the redirection "+r.Op.String()+" "+source(r.Word))
}

// via says how a command is reached, which decides what its name can be.
type via int

const (
	viaShell   via = iota // a simple command: a function, a builtin or a program
	viaCommand            // command NAME: a builtin or a program, not a function
	viaBuiltin            // builtin NAME: a builtin only
	viaProgram            // exec, env, xargs, find -exec...: a program only
	viaApplet             // busybox NAME: by name, inside one program
)

// command checks one command line, argv[0] being what it runs.
func (c *checker) command(argv []arg, how via) error {
	name := argv[0]
	if !name.static {
		return unchecked("the program to run, %s, is only known when the command runs", name.source())
	}
	if name.val == "" {
		return unchecked("the program name is empty")
	}
	bare := !strings.Contains(name.val, "/")
	if how == viaShell && bare && c.funcs[name.val] {
		return nil // the function's body is checked where it is declared
	}
	if (how == viaShell || how == viaCommand || how == viaBuiltin) && bare && isBuiltin(name.val) {
		return c.builtin(argv)
	}
	if how == viaBuiltin {
		return unchecked("%s is not a shell builtin", name.val)
	}
	if err := c.rulesFor(argv, filepath.Base(name.val)); err != nil {
		return err
	}
	var p program
	if how == viaApplet {
		p = program{name: name.val}
	} else {
		if c.movesDir && !bare && !filepath.IsAbs(name.val) {
			return unchecked("the command changes directory, so which file %s names depends on where it is then; give an absolute path", name.val)
		}
		var err error
		if p, err = resolve(name.val, c.dir, c.path); err != nil {
			return err
		}
	}
	names := p.names()
	if p.path != "" {
		if err := c.rulesFor(argv, filepath.Base(p.path)); err != nil {
			return err
		}
	}
	if c.allow != nil && (how == viaApplet && !c.allow.builtin(name.val) || how != viaApplet && !c.allow.program(p)) {
		return &BlockedError{Rule: ruleAllowlist, Reason: fmt.Sprintf("%s (%s) is not on the allowlist (%s)", name.val, p.path, c.allow)}
	}
	return c.program(names, argv)
}

// rulesFor applies the blocklist to argv, run as the program called name.
func (c *checker) rulesFor(argv []arg, name string) error {
	if r, ok := programRule(name); ok {
		return blocked(r.Name, argv[0].val)
	}
	if installs(name, argv) {
		return blocked(rulePackage, strings.Join(values(argv), " "))
	}
	return nil
}
