package editor

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"time"
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
	// insts is the size of the compiled program: the work of matching
	// grows with it times the bytes matched.
	insts int
}

// maxMatchWork bounds the work of matching one line: its bytes times the
// size of the pattern's program. Go's regular expressions take time in
// proportion to both and cannot be stopped during a match (a counted
// repetition of a class took seconds over one line of a minified bundle),
// so a line past the bound is not matched: the screen or command says the
// pattern is too costly there.
const maxMatchWork = 20_000_000

// matchTime bounds the time the patterns of one screen, or of one
// command, take; the clock is read between lines.
var matchTime = 2 * time.Second

// clockWork is how much work passes between two readings of the clock.
const clockWork = 1_000_000

// work bounds the matching of one screen or command (see maxMatchWork and
// matchTime) and tells when it ran out. A nil *work bounds nothing.
type work struct {
	ctx      context.Context // nil: not cancelled
	deadline time.Time       // zero: none
	// skip makes a line too costly to match count as not matching (and
	// counted in skipped) instead of running out: search goes on.
	skip    bool
	skipped int
	since   int64 // work since the clock was last read
	out     bool
}

// newWork returns a bound that ends with ctx (nil for none) or after d
// (0 for none).
func newWork(ctx context.Context, d time.Duration) *work {
	w := &work{ctx: ctx}
	if d > 0 {
		w.deadline = time.Now().Add(d)
	}
	return w
}

// allow reports whether p may be run over a line of n bytes.
func (w *work) allow(p *pattern, n int) bool {
	if w == nil {
		return true
	}
	if w.out {
		return false
	}
	cost := int64(n+1) * int64(p.insts)
	if cost > maxMatchWork {
		if w.skip {
			w.skipped++
			return false
		}
		w.out = true
		return false
	}
	if w.since += cost + 64; w.since >= clockWork {
		w.since = 0
		if w.ctx != nil && w.ctx.Err() != nil || !w.deadline.IsZero() && time.Now().After(w.deadline) {
			w.out = true
			return false
		}
	}
	return true
}

// ranOut reports whether the work stopped before it was done.
func (w *work) ranOut() bool { return w != nil && w.out }

// compilePattern compiles src, naming which pattern it is in errors.
func compilePattern(which, src string) (*pattern, error) {
	re, err := regexp.Compile(src)
	if err != nil {
		return nil, fmt.Errorf("invalid %s pattern /%s/: %v (patterns are Go RE2 regular expressions)", which, clip(src, 60), unwrapSyntax(err))
	}
	p := &pattern{src: src, re: re, insts: len(src) + 1}
	if tree, err := syntax.Parse(src, syntax.Perl); err == nil {
		tree = tree.Simplify()
		if lit := requiredLiteral(tree); lit != "" {
			p.lit = []byte(lit)
		}
		if prog, err := syntax.Compile(tree); err == nil {
			p.insts = len(prog.Inst)
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

// matchLine reports whether line, without its ending, matches, within w:
// false when w ran out (see work.ranOut).
func (p *pattern) matchLine(w *work, line []byte) bool {
	return w.allow(p, len(line)) && p.re.Match(line)
}

// next returns the offset of the first line that starts in data[off:limit]
// and matches within w, or -1 (also when w ran out). off must be a line
// start and limit a line boundary (the start of a line, or len(data)).
func (p *pattern) next(w *work, data []byte, off, limit int) int {
	for off < limit {
		if p.lit != nil {
			i := bytes.Index(data[off:limit], p.lit)
			if i < 0 {
				return -1
			}
			off += bytes.LastIndexByte(data[off:off+i], '\n') + 1
		}
		end := lineEnd(data, off)
		if p.matchLine(w, lineText(data, off, end)) {
			return off
		}
		if w.ranOut() {
			return -1
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
