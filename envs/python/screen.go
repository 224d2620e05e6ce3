package python

import (
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/unfold-dev/unfold/envs"
)

// MaxVariables is how many variables the screen lists at most (docs/design.md, Environments).
const MaxVariables = 100

// ScreenLines is the screen's MaxLines: room for the working directory,
// MaxVariables variables and the usage line.
const ScreenLines = MaxVariables + 6

// usage is the screen's last line: how to use the environment.
const usage = "Any Python code. Variables and imports persist across commands."

// variable is one line of the screen's variable list.
type variable struct {
	name, typ string
}

// variables converts the driver's [name, type] pairs, at most MaxVariables.
func variables(pairs [][2]string) []variable {
	vars := make([]variable, 0, min(len(pairs), MaxVariables))
	for _, p := range pairs[:min(len(pairs), MaxVariables)] {
		vars = append(vars, variable{name: printable(p[0]), typ: printable(p[1])})
	}
	return vars
}

// printable keeps a name on one line: control characters become '?'.
// Names come from the namespace, where globals()["a\nb"] is possible.
func printable(s string) string {
	if strings.IndexFunc(s, unicode.IsControl) < 0 {
		return s
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '?'
		}
		return r
	}, s)
}

// running describes the cell still running, for the screen; its zero
// value means none.
type running struct {
	code    string
	since   time.Duration
	waiting bool
	prompt  string
}

// screen renders the Python screen: the working directory, the cell still
// running (if any), the variables, then how to use it.
func screen(cwd string, vars []variable, run running) string {
	var b strings.Builder
	b.Grow(128 + 32*len(vars))
	b.WriteString("Working directory: ")
	b.WriteString(printable(cwd))
	b.WriteString("\n")
	if run.code != "" {
		fmt.Fprintf(&b, "Running: %s (for %v)\n", printable(envs.Abbrev(run.code)), envs.Round(run.since))
		if run.waiting {
			fmt.Fprintf(&b, "Waiting for input: %q (the next command is typed as the answer)\n", run.prompt)
		}
	}
	b.WriteString("\n")
	if len(vars) == 0 {
		b.WriteString("Variables: (none)\n")
	} else {
		b.WriteString("Variables (recent):\n")
		for _, v := range vars {
			b.WriteString("  ")
			b.WriteString(v.name)
			b.WriteString(": ")
			b.WriteString(v.typ)
			b.WriteByte('\n')
		}
	}
	b.WriteByte('\n')
	b.WriteString(usage)
	return b.String()
}
