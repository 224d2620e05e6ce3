package tools

import (
	"slices"
	"strings"
)

// This file knows the programs that run their arguments as a command
// (env, timeout, nice, nohup, stdbuf, setsid, ionice, time, xargs, find
// -exec, flock, watch, busybox). Each reads its options the way the
// program does; an option it does not know is refused, since it may
// change what runs.

// opts describes a program's options.
type opts struct {
	flags    string   // short options without a value
	valued   string   // short options with a value, attached or next
	optional string   // short options whose value can only be attached
	long     []string // long options; "name=" takes a value, attached or next; "name=?" only attached
	numeric  bool     // -N (a number) is an option, as in nice -5
}

// parsed is what scan read: the options given, by letter ("c") or long
// name ("command"), with their values in order.
type parsed struct {
	values map[string][]string
}

// has reports whether any of the options was given.
func (p parsed) has(names ...string) bool {
	return slices.ContainsFunc(names, func(n string) bool { return p.values[n] != nil })
}

// value returns the last value given to any of the options.
func (p parsed) value(names ...string) string {
	v := ""
	for _, n := range names {
		if vs := p.values[n]; len(vs) > 0 {
			v = vs[len(vs)-1]
		}
	}
	return v
}

// all returns every value given to any of the options.
func (p parsed) all(names ...string) []string {
	var out []string
	for _, n := range names {
		out = append(out, p.values[n]...)
	}
	return out
}

// scan reads the options at the start of args and returns the operands
// after them. Options end at "--", at "-", at the first operand, or at a
// word computed at run time (an operand to the caller, who refuses it
// where it would name what runs). A value computed at run time, or an
// option scan does not know, is refused: either may change what runs.
func scan(args []arg, o opts) ([]arg, parsed, error) {
	p := parsed{values: map[string][]string{}}
	set := func(k, v string) { p.values[k] = append(p.values[k], v) }
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.static || a.val == "-" || !strings.HasPrefix(a.val, "-") {
			return args[i:], p, nil
		}
		if a.val == "--" {
			return args[i+1:], p, nil
		}
		if name, ok := strings.CutPrefix(a.val, "--"); ok {
			n, v, hasValue := strings.Cut(name, "=")
			switch {
			case slices.Contains(o.long, n) || n == "help" || n == "version":
				if hasValue {
					return nil, p, unchecked("the option --%s takes no value", n)
				}
			case slices.Contains(o.long, n+"=?"):
			case slices.Contains(o.long, n+"="):
				if !hasValue {
					if i+1 >= len(args) || !args[i+1].static {
						return nil, p, unchecked("the value of --%s is missing or only known when the command runs", n)
					}
					i++
					v = args[i].val
				}
			default:
				return nil, p, unchecked("the option --%s is not one the policy knows, and it may change what runs", n)
			}
			set(n, v)
			continue
		}
		if o.numeric && isNumber(a.val[1:]) {
			continue
		}
		for j := 1; j < len(a.val); j++ {
			ch := a.val[j]
			k := string(ch)
			switch {
			case strings.IndexByte(o.flags, ch) >= 0:
				set(k, "")
			case strings.IndexByte(o.optional, ch) >= 0:
				set(k, a.val[j+1:])
				j = len(a.val)
			case strings.IndexByte(o.valued, ch) >= 0:
				switch {
				case j+1 < len(a.val):
					set(k, a.val[j+1:])
				case i+1 < len(args) && args[i+1].static:
					i++
					set(k, args[i].val)
				default:
					return nil, p, unchecked("the value of -%c is missing or only known when the command runs", ch)
				}
				j = len(a.val)
			default:
				return nil, p, unchecked("the option -%c is not one the policy knows, and it may change what runs", ch)
			}
		}
	}
	return nil, p, nil
}

// program checks what a program does with its arguments, once the program
// itself may run: the command a wrapper runs, the script a shell is given.
func (c *checker) program(names []string, argv []arg) error {
	if n := names[0]; n == "busybox" || n == "toybox" {
		return c.applet(argv) // only by name: busybox runs the applet its name says
	}
	for _, n := range names {
		if h, ok := wrappers[n]; ok {
			return h(c, argv)
		}
	}
	// The file's name first: sh is dash on some systems.
	for _, n := range slices.Backward(names) {
		if d, ok := shellDialect(n); ok {
			return c.shell(d, argv)
		}
		if otherShells[n] {
			return c.otherShell(argv)
		}
	}
	for _, n := range names {
		if isInterpreter(n) {
			return c.interpreter(n, argv)
		}
	}
	return nil
}

// wrappers run the command in their arguments.
var wrappers map[string]func(*checker, []arg) error

func init() {
	wrappers = map[string]func(*checker, []arg) error{
		"env":     (*checker).env,
		"nohup":   wrap(opts{}, 0),
		"nice":    wrap(opts{valued: "n", long: []string{"adjustment="}, numeric: true}, 0),
		"timeout": wrap(opts{flags: "v", valued: "sk", long: []string{"foreground", "preserve-status", "verbose", "signal=", "kill-after="}}, 1),
		"stdbuf":  wrap(opts{valued: "ioe", long: []string{"input=", "output=", "error="}}, 0),
		"setsid":  wrap(opts{flags: "cfw", long: []string{"ctty", "fork", "wait"}}, 0),
		"ionice":  wrap(opts{flags: "t", valued: "cn", long: []string{"class=", "classdata=", "ignore"}}, 0),
		"time":    (*checker).time,
		"xargs":   (*checker).xargs,
		"find":    (*checker).find,
		"flock":   (*checker).flock,
		"watch":   (*checker).watch,
	}
}

// wrap returns the check of a program that takes options o, then skip
// operands of its own (timeout's duration), then the command to run.
func wrap(o opts, skip int) func(*checker, []arg) error {
	return func(c *checker, argv []arg) error {
		rest, _, err := scan(argv[1:], o)
		if err != nil {
			return err
		}
		for range skip {
			if len(rest) == 0 {
				return nil
			}
			if !rest[0].static {
				return unchecked("the operand %s of %s is only known when the command runs, so what it runs is not known", rest[0].source(), argv[0].val)
			}
			rest = rest[1:]
		}
		if len(rest) == 0 {
			return nil
		}
		return c.command(rest, viaProgram)
	}
}

// env checks env's options, the variables it sets and the command it runs.
func (c *checker) env(argv []arg) error {
	args, p, err := scan(argv[1:], opts{flags: "i0v", valued: "uCS", long: []string{
		"ignore-environment", "null", "debug", "list-signal-handling", "unset=", "chdir=", "split-string=",
		"ignore-signal=?", "default-signal=?", "block-signal=?"}})
	if err != nil {
		return err
	}
	inner := *c
	if len(args) > 0 && args[0].static && args[0].val == "-" {
		args = args[1:]
		p.values["i"] = []string{""}
	}
	if p.has("i", "ignore-environment") {
		inner.path = "/usr/bin:/bin" // no PATH: the C library's default
	}
	if p.has("S", "split-string") {
		return unchecked("env -S splits a string into a command the policy cannot see")
	}
	for _, name := range p.all("u", "unset") {
		if err := setVar(name); err != nil {
			return err
		}
	}
	for _, dir := range p.all("C", "chdir") {
		if err := c.stayInside("env -C", arg{val: dir, static: true}); err != nil {
			return err
		}
		inner.movesDir = true
	}
	for len(args) > 0 && args[0].static && strings.Contains(args[0].val, "=") {
		name, _, _ := strings.Cut(args[0].val, "=")
		if !varName().MatchString(name) {
			return unchecked("env sets %q, which is not a variable name a shell would set", name)
		}
		if err := setVar(name); err != nil {
			return err
		}
		args = args[1:]
	}
	if len(args) == 0 {
		return nil // prints the environment
	}
	return inner.command(args, viaProgram)
}

// time checks GNU time: -o FILE writes a file.
func (c *checker) time(argv []arg) error {
	rest, p, err := scan(argv[1:], opts{flags: "pavq", valued: "fo", long: []string{"portability", "append", "verbose", "quiet", "format=", "output="}})
	if err != nil {
		return err
	}
	if p.has("o", "output") {
		return blocked(ruleRedirection, "time -o")
	}
	if len(rest) == 0 {
		return nil
	}
	return c.command(rest, viaProgram)
}

// dynamicArg stands for arguments a program adds at run time (xargs
// appends its input).
var dynamicArg = arg{text: "(its input)"}

// xargs checks the command xargs runs: its input becomes arguments, or
// replaces a string in them with -I.
func (c *checker) xargs(argv []arg) error {
	o := opts{
		flags: "0oprtx", valued: "adEILnPs", optional: "eil",
		long: []string{"null", "open-tty", "interactive", "no-run-if-empty", "verbose", "exit", "show-limits",
			"arg-file=", "delimiter=", "eof=?", "replace=?", "max-lines=?", "max-args=", "max-procs=", "max-chars=", "process-slot-var="},
	}
	rest, p, err := scan(argv[1:], o)
	if err != nil {
		return err
	}
	if len(rest) == 0 {
		return nil // echo
	}
	replace := p.value("I", "i", "replace")
	if replace == "" && p.has("I", "i", "replace") {
		replace = "{}"
	}
	cmd := slices.Clone(rest)
	if replace == "" {
		cmd = append(cmd, dynamicArg)
	} else {
		for i, a := range cmd {
			if a.static && strings.Contains(a.val, replace) {
				cmd[i] = arg{word: a.word} // filled in from the input
			}
		}
	}
	return c.command(cmd, viaProgram)
}

// find checks find's actions: -exec and its kin run commands, -delete
// removes files, -fprint and its kin write them. Every word must be
// static: a variable could add an action.
func (c *checker) find(argv []arg) error {
	args := argv[1:]
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.static {
			return unchecked("the find argument %s is only known when the command runs; it could add an action", a.source())
		}
		switch a.val {
		case "-exec", "-execdir", "-ok", "-okdir":
			end := slices.IndexFunc(args[i+1:], func(b arg) bool { return b.static && (b.val == ";" || b.val == "+") })
			if end < 0 {
				return unchecked("find %s has no ; or + to end it", a.val)
			}
			cmd := slices.Clone(args[i+1 : i+1+end])
			if len(cmd) == 0 {
				return unchecked("find %s names no command", a.val)
			}
			for j, w := range cmd {
				if strings.Contains(w.val, "{}") {
					cmd[j] = arg{word: w.word} // a file name, known when find runs
				}
			}
			if err := c.command(cmd, viaProgram); err != nil {
				return err
			}
			i += end + 1
		case "-delete":
			return blocked("rm", "find -delete")
		case "-fprint", "-fprint0", "-fls", "-fprintf":
			if i+1 >= len(args) || !slices.Contains(writeTargets, args[i+1].val) {
				return blocked(ruleRedirection, "find "+a.val)
			}
		}
	}
	return nil
}

// flock checks flock FILE COMMAND... and flock FILE -c TEXT.
func (c *checker) flock(argv []arg) error {
	o := opts{flags: "sexunoFv", valued: "wEc", long: []string{"shared", "exclusive", "unlock", "nonblock", "close", "no-fork", "verbose", "timeout=", "wait=", "conflict-exit-code=", "command="}}
	rest, p, err := scan(argv[1:], o)
	if err != nil || len(rest) == 0 {
		return err
	}
	if p.has("c", "command") {
		return c.shellText("flock", arg{val: p.value("c", "command"), static: true})
	}
	if !rest[0].static {
		return unchecked("flock is given %s, known only when the command runs; it could be an option such as -c", rest[0].source())
	}
	after := rest[1:] // the lock file is rest[0]
	if len(after) > 0 && after[0].static && (after[0].val == "-c" || after[0].val == "--command") {
		if len(after) < 2 {
			return nil
		}
		return c.shellText("flock", after[1])
	}
	if len(after) == 0 {
		return nil // flock FD
	}
	return c.command(after, viaProgram)
}

// watch checks the command watch runs again and again: its words joined
// and run with sh -c, or run as they are with -x.
func (c *checker) watch(argv []arg) error {
	o := opts{flags: "bcegprtwxC", valued: "nq", optional: "d",
		long: []string{"beep", "color", "no-color", "errexit", "chgexit", "precise", "no-rerun", "no-title", "no-wrap", "exec", "differences=?", "interval=", "equexit="}}
	rest, p, err := scan(argv[1:], o)
	if err != nil || len(rest) == 0 {
		return err
	}
	if p.has("x", "exec") {
		return c.command(rest, viaProgram)
	}
	text, ok := joined(rest)
	if !ok {
		return blocked(ruleEval, "watch "+strings.Join(values(rest), " "))
	}
	return c.shellText("watch", arg{val: text, static: true})
}

// applet checks busybox APPLET ...: the applet is the program.
func (c *checker) applet(argv []arg) error {
	if len(argv) < 2 || argv[1].static && strings.HasPrefix(argv[1].val, "-") {
		return nil // lists the applets
	}
	return c.command(argv[1:], viaApplet)
}
