package tools

import (
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// isNumber reports whether s is a decimal number without a sign.
func isNumber(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// arg is one word of a command as the checker sees it.
type arg struct {
	val    string       // the word's value, when static
	static bool         // the value is known before the command runs
	word   *syntax.Word // the word as written, for messages; nil for one the checker made
	text   string       // what a word the checker made stands for
}

// source returns the word as written, for messages.
func (a arg) source() string {
	switch {
	case a.word != nil:
		return source(a.word)
	case a.text != "":
		return a.text
	}
	return a.val
}

func (c *checker) args(words []*syntax.Word) []arg {
	out := make([]arg, len(words))
	for i, w := range words {
		out[i] = c.arg(w)
	}
	return out
}

// arg evaluates a word that is fixed text: quotes and backslashes removed,
// $'...' decoded. A word with a variable, a substitution, a glob, a brace
// expansion or a leading tilde is not static.
func (c *checker) arg(w *syntax.Word) arg {
	a := arg{word: w}
	if w == nil {
		return a
	}
	for i, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			if hasGlob(p.Value) || i == 0 && strings.HasPrefix(p.Value, "~") {
				return a
			}
		case *syntax.SglQuoted:
		case *syntax.DblQuoted:
			if p.Dollar {
				return a
			}
			for _, q := range p.Parts {
				if _, ok := q.(*syntax.Lit); !ok {
					return a
				}
			}
		default:
			return a
		}
	}
	if c.dialect == bashLike {
		cp := *w
		cp.Parts = append([]syntax.WordPart(nil), w.Parts...)
		if syntax.SplitBraces(&cp) {
			return a
		}
	}
	v, err := expand.Literal(nil, w)
	if err != nil {
		return a
	}
	a.val, a.static = v, true
	return a
}

// hasGlob reports whether an unquoted literal has a pattern character
// that is not escaped: *, ?, or [ with a ] after it.
func hasGlob(lit string) bool {
	for i := 0; i < len(lit); i++ {
		switch lit[i] {
		case '\\':
			i++
		case '*', '?':
			return true
		case '[':
			if strings.Contains(lit[i+1:], "]") {
				return true
			}
		}
	}
	return false
}

// source returns a word as written.
func source(w *syntax.Word) string {
	if w == nil {
		return ""
	}
	var b strings.Builder
	if err := syntax.NewPrinter().Print(&b, w); err != nil {
		return "?"
	}
	return b.String()
}

// values returns the static values of args, and the others as written.
func values(args []arg) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a.val
		if !a.static {
			out[i] = a.source()
		}
	}
	return out
}

// joined returns the static args joined by spaces, as eval joins them.
func joined(args []arg) (string, bool) {
	parts := make([]string, len(args))
	for i, a := range args {
		if !a.static {
			return "", false
		}
		parts[i] = a.val
	}
	return strings.Join(parts, " "), true
}

func anyArg(args []arg, f func(string) bool) bool {
	for _, a := range args {
		if a.static && f(a.val) {
			return true
		}
	}
	return false
}
