package tools

import (
	"regexp"
	"slices"
	"strings"
	"sync"
)

// This file knows the shells, whose -c text is parsed again in their
// language, and the interpreters, which may read a program from their
// input.

// shellText checks text that a program runs with /bin/sh -c.
func (c *checker) shellText(what string, text arg) error {
	if !text.static {
		return blocked(ruleEval, what+" "+text.source())
	}
	d, ok := dialectOf("/bin/sh")
	if !ok {
		d = bashLike
	}
	child, err := c.child(d)
	if err != nil {
		return err
	}
	return child.script(text.val)
}

// shellDialect returns the dialect of a shell program by name.
func shellDialect(name string) (dialect, bool) {
	switch name {
	case "dash":
		return posix, true
	case "sh", "bash", "ash", "rbash":
		return bashLike, true
	}
	return 0, false
}

// otherShells are shells whose language the policy does not check.
var otherShells = map[string]bool{"zsh": true, "ksh": true, "ksh93": true, "mksh": true, "pdksh": true, "yash": true, "posh": true, "fish": true, "csh": true, "tcsh": true, "elvish": true, "nu": true, "xonsh": true}

// shell checks sh, dash and bash: -c TEXT is parsed and checked as a
// script of that shell; a script file runs as any program does; a shell
// that would read commands from its input is refused.
func (c *checker) shell(d dialect, argv []arg) error {
	args := argv[1:]
	hasText := false
	for len(args) > 0 && args[0].static && (strings.HasPrefix(args[0].val, "-") || strings.HasPrefix(args[0].val, "+")) && args[0].val != "-" && args[0].val != "+" {
		v := args[0].val
		args = args[1:]
		if v == "--" {
			break
		}
		if long, ok := strings.CutPrefix(v, "--"); ok {
			if !slices.Contains([]string{"norc", "noprofile", "posix", "noediting", "restricted", "verbose"}, long) {
				return unchecked("%s --%s reads files or changes what runs", argv[0].val, long)
			}
			continue
		}
		for _, ch := range v[1:] {
			switch {
			case ch == 'c':
				hasText = true
			case ch == 'o' || ch == 'O':
				if len(args) == 0 || !args[0].static {
					return unchecked("the value of %s -%c is missing or only known when the command runs", argv[0].val, ch)
				}
				args = args[1:]
			case ch == 's':
				return blocked(rulePipeToShell, argv[0].val+" -s")
			case strings.ContainsRune("abefhkmnprtuvxBCEHPT", ch):
			default:
				return unchecked("%s -%c reads start-up files or changes what runs", argv[0].val, ch)
			}
		}
	}
	if len(args) > 0 && !args[0].static {
		return unchecked("%s is given %s, known only when the command runs; it could be an option such as -c", argv[0].val, args[0].source())
	}
	if !hasText {
		if len(args) == 0 || args[0].val == "-" {
			return blocked(rulePipeToShell, argv[0].val+" reading commands from its input")
		}
		return nil // a script file: a program the policy does not look into
	}
	if len(args) == 0 {
		return unchecked("%s -c is missing its command text", argv[0].val)
	}
	if !args[0].static {
		return blocked(ruleEval, argv[0].val+" -c "+args[0].source())
	}
	child, err := c.child(d)
	if err != nil {
		return err
	}
	if len(args) > 1 {
		child.vars.positional()
	}
	return child.script(args[0].val)
}

// otherShell refuses a shell whose language the policy cannot check, when
// given text to run or its input; a script file runs as a program.
func (c *checker) otherShell(argv []arg) error {
	for _, a := range argv[1:] {
		if !a.static {
			return unchecked("%s is given %s, known only when the command runs; it could be an option such as -c", argv[0].val, a.source())
		}
		if !strings.HasPrefix(a.val, "-") {
			return nil // a script file
		}
		if strings.Contains(a.val, "c") && !strings.HasPrefix(a.val, "--") {
			return unchecked("the policy cannot check %s's language", argv[0].val)
		}
	}
	return blocked(rulePipeToShell, argv[0].val+" reading commands from its input")
}

var interpreterName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(python[0-9.]*|pypy[0-9.]*|perl[0-9.]*|ruby[0-9.]*|node|nodejs|php[0-9.]*|lua[0-9.]*|luajit|tclsh[0-9.]*|Rscript|julia|guile[0-9.]*)$`)
})

func isInterpreter(name string) bool { return interpreterName().MatchString(name) }

// interpreterOpts are, per interpreter, the options that give the program
// as text (programs) and the options that take a separate value.
var interpreterOpts = []struct {
	prefix, programs, valued string
	long                     []string
}{
	{"python", "cm", "WX", nil},
	{"pypy", "cm", "WX", nil},
	{"perl", "eE", "I", nil},
	{"ruby", "e", "ICEr", nil},
	{"node", "ep", "rC", []string{"eval", "print", "require", "import", "loader", "conditions"}},
	{"php", "rfBRFE", "cdz", nil},
	{"lua", "e", "l", nil},
	{"luajit", "e", "l", nil},
	{"Rscript", "e", "", nil},
	{"julia", "eE", "", []string{"eval", "print"}},
	{"guile", "c", "lLx", nil},
}

// interpreter refuses an interpreter that would read its program from its
// input: no program option and no script file. What the program does is
// not checked.
func (c *checker) interpreter(name string, argv []arg) error {
	programs, valued := "", ""
	var long []string
	for _, io := range interpreterOpts {
		if strings.HasPrefix(name, io.prefix) {
			programs, valued, long = io.programs, io.valued, io.long
			break
		}
	}
	args := argv[1:]
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case !a.static:
			return nil // a script file named at run time: not its input
		case a.val == "-" || a.val == "--" && i+1 >= len(args):
			return blocked(rulePipeToShell, name+" reading its program from its input")
		case a.val == "--":
			return nil
		case strings.HasPrefix(a.val, "--"):
			n, _, hasValue := strings.Cut(a.val[2:], "=")
			if slices.Contains(long, n) {
				if n == "eval" || n == "print" {
					return nil
				}
				if !hasValue {
					i++
				}
			}
		case strings.HasPrefix(a.val, "-"):
			for j := 1; j < len(a.val); j++ {
				if strings.IndexByte(programs, a.val[j]) >= 0 {
					return nil
				}
				if strings.IndexByte(valued, a.val[j]) >= 0 {
					if j+1 == len(a.val) {
						i++
					}
					break
				}
			}
		default:
			return nil // a script file
		}
	}
	return blocked(rulePipeToShell, name+" reading its program from its input")
}
