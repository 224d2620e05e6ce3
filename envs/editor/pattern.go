package editor

import (
	"bytes"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// pattern is a compiled Go RE2 regular expression matched against one line
// at a time (the line without its ending).
type pattern struct {
	src string // as written
	re  *regexp.Regexp
	// lit is a string every match contains, found in the parsed
	// expression; nil when there is none. Lines without it are skipped
	// without running the expression, which is what keeps screens of
	// large files fast.
	lit []byte
}

// compilePattern compiles src, naming which pattern it is in errors.
func compilePattern(which, src string) (*pattern, error) {
	re, err := regexp.Compile(src)
	if err != nil {
		return nil, fmt.Errorf("invalid %s pattern /%s/: %v (patterns are Go RE2 regular expressions)", which, clip(src, 60), unwrapSyntax(err))
	}
	p := &pattern{src: src, re: re}
	if tree, err := syntax.Parse(src, syntax.Perl); err == nil {
		if lit := requiredLiteral(tree.Simplify()); lit != "" {
			p.lit = []byte(lit)
		}
	}
	return p, nil
}

// unwrapSyntax drops the "error parsing regexp: " prefix.
func unwrapSyntax(err error) string {
	return strings.TrimPrefix(err.Error(), "error parsing regexp: ")
}

// literalPattern returns the pattern that matches exactly the line text,
// with slashes escaped so it reads back from a view command. A byte that is
// not UTF-8 becomes \x{FFFD}, which is how the regexp package reads it.
func literalPattern(text string) string {
	var b strings.Builder
	b.WriteByte('^')
	for len(text) > 0 {
		r, size := utf8.DecodeRuneInString(text)
		switch {
		case r == utf8.RuneError && size <= 1:
			b.WriteString(`\x{FFFD}`)
		case r == '/':
			b.WriteString(`\/`)
		default:
			b.WriteString(regexp.QuoteMeta(text[:size]))
		}
		text = text[size:]
	}
	b.WriteByte('$')
	return b.String()
}

// requiredLiteral returns the longest case-sensitive literal that every
// match of re contains, or "".
func requiredLiteral(re *syntax.Regexp) string {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return ""
		}
		return string(re.Rune)
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiteral(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiteral(re.Sub[0])
		}
	case syntax.OpConcat:
		best := ""
		for _, sub := range re.Sub {
			if l := requiredLiteral(sub); len(l) > len(best) {
				best = l
			}
		}
		return best
	}
	return ""
}

// matchLine reports whether line, without its ending, matches.
func (p *pattern) matchLine(line []byte) bool {
	return p.re.Match(line)
}

// next returns the offset of the first line that starts in data[off:limit]
// and matches, or -1. off must be a line start and limit a line boundary
// (the start of a line, or len(data)).
func (p *pattern) next(data []byte, off, limit int) int {
	for off < limit {
		if p.lit != nil {
			i := bytes.Index(data[off:limit], p.lit)
			if i < 0 {
				return -1
			}
			off += bytes.LastIndexByte(data[off:off+i], '\n') + 1
		}
		end := lineEnd(data, off)
		if p.re.Match(lineText(data, off, end)) {
			return off
		}
		off = end + 1
	}
	return -1
}

// lineEnd returns the offset of the newline ending the line that starts at
// off, or len(data) for a last line without one.
func lineEnd(data []byte, off int) int {
	if i := bytes.IndexByte(data[off:], '\n'); i >= 0 {
		return off + i
	}
	return len(data)
}

// lineText returns the line from off to end (the offset lineEnd gave)
// without its ending: a newline, or a carriage return and a newline.
func lineText(data []byte, off, end int) []byte {
	if end < len(data) && end > off && data[end-1] == '\r' {
		end--
	}
	return data[off:end]
}

// lineEnding returns the ending of the line whose newline offset is end:
// "\r\n", "\n", or "" for a last line without one.
func lineEnding(data []byte, off, end int) string {
	switch {
	case end >= len(data):
		return ""
	case end > off && data[end-1] == '\r':
		return "\r\n"
	}
	return "\n"
}
