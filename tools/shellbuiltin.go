package tools

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// builtins are the builtins of dash and of bash. Both sets are checked
// as builtins in either shell: one the shell lacks fails to run.
var builtins = strings.Fields(". : [ alias bg break cd chdir command continue echo eval exec exit export false fc fg getopts hash jobs kill local printf pwd read readonly return set shift test times trap true type ulimit umask unalias unset wait " +
	"bind builtin caller compgen complete compopt declare dirs disown enable help history let logout mapfile popd pushd readarray shopt source suspend typeset")

func isBuiltin(name string) bool { return slices.Contains(builtins, name) }

// builtin checks a shell builtin and what it runs.
func (c *checker) builtin(argv []arg) error {
	name, rest := argv[0].val, argv[1:]
	if r, ok := programRule(name); ok {
		return blocked(r.Name, name)
	}
	if c.allow != nil && !c.allow.builtin(name) {
		return &BlockedError{Rule: ruleAllowlist, Reason: fmt.Sprintf("the builtin %s is not on the allowlist (%s)", name, c.allow)}
	}
	switch name {
	case ".", "source":
		return blocked(ruleEval, name)
	case "eval":
		text, ok := joined(rest)
		if !ok {
			return blocked(ruleEval, "eval "+strings.Join(values(rest), " "))
		}
		return c.eval(text)
	case "trap":
		return c.trap(rest)
	case "exec":
		cmd, _, err := scan(rest, opts{valued: "a", flags: "cl"})
		if err != nil || len(cmd) == 0 {
			return err
		}
		return c.command(cmd, viaProgram)
	case "command":
		cmd, p, err := scan(rest, opts{flags: "pvV"})
		switch {
		case err != nil:
			return err
		case p.has("v", "V") || len(cmd) == 0:
			return nil // prints what a name is; runs nothing
		case p.has("p"):
			return unchecked("command -p searches a PATH of its own")
		}
		return c.command(cmd, viaCommand)
	case "builtin":
		if len(rest) == 0 {
			return nil
		}
		return c.command(rest, viaBuiltin)
	case "alias":
		if len(rest) > 0 {
			return unchecked("an alias changes what a command name runs")
		}
	case "enable", "compgen", "complete", "bind", "fc":
		return unchecked("%s can load or run commands the policy cannot see", name)
	case "hash":
		if anyArg(rest, func(s string) bool { return strings.HasPrefix(s, "-") && strings.Contains(s, "p") }) {
			return unchecked("hash -p changes what a command name runs")
		}
	case "cd", "chdir", "pushd":
		return c.changeDir(name, rest)
	}
	return c.names(name, rest)
}

// trap checks the command a trap would run.
func (c *checker) trap(args []arg) error {
	ops, p, err := scan(args, opts{flags: "lpP"})
	if err != nil || p.has("l", "p", "P") || len(ops) < 2 {
		return err // prints, or resets a signal
	}
	action := ops[0]
	if !action.static {
		return blocked(ruleEval, "trap "+action.source())
	}
	if action.val == "-" || isNumber(action.val) {
		return nil
	}
	return c.eval(action.val)
}

// changeDir checks cd, chdir and pushd: the directory must be inside the
// working directory.
func (c *checker) changeDir(name string, args []arg) error {
	ops, _, err := scan(args, opts{flags: "LPen@"})
	if err != nil {
		return err
	}
	if len(ops) == 0 {
		if name == "pushd" {
			return nil // swaps the top two directories, both checked
		}
		return blocked(ruleLeaveDir, name+" with no directory goes home")
	}
	return c.stayInside(name, ops[0])
}

// stayInside refuses a directory argument outside the working directory.
func (c *checker) stayInside(what string, d arg) error {
	switch {
	case !d.static:
		return blocked(ruleLeaveDir, what+" "+d.source()+" (a directory known only when the command runs)")
	case d.val == "-" || strings.HasPrefix(d.val, "+") && what == "pushd":
		return blocked(ruleLeaveDir, what+" "+d.val)
	}
	if !filepath.IsAbs(d.val) {
		for _, seg := range strings.Split(d.val, "/") {
			if seg == ".." {
				return blocked(ruleLeaveDir, what+" "+d.val)
			}
		}
	}
	if !insideDir(c.root, c.dir, d.val) {
		return blocked(ruleLeaveDir, what+" "+d.val)
	}
	return nil
}
