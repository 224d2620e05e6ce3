package prompt

import (
	"bytes"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
)

// md parses bodies to find their headings, made when first needed. A
// goldmark parser is safe for concurrent use.
var md = sync.OnceValue(func() goldmark.Markdown { return goldmark.New() })

// plainBody returns raw, an executed body, as processing would leave it
// (dedented, checked for open fences, headings shifted) when that is only
// trimming its ends: its first line is not indented, it has no fence and no
// line that could be a heading. ok is false otherwise, and raw must go
// through the processing.
func plainBody(raw []byte) (body []byte, ok bool) {
	rest := raw
	for len(rest) > 0 {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		if len(bytes.TrimRight(bytes.TrimLeft(line, " \t"), "\r")) == 0 {
			continue // blank: Dedent looks past it
		}
		if line[0] == ' ' || line[0] == '\t' {
			return nil, false // Dedent may strip a common indent
		}
		break
	}
	body = bytes.TrimSpace(raw)
	if bytes.Contains(body, []byte("```")) || bytes.Contains(body, []byte("~~~")) {
		return nil, false
	}
	// The string shares body's bytes only for this call, which keeps no
	// part of it.
	if mayHaveHeadings(unsafe.String(unsafe.SliceData(body), len(body))) {
		return nil, false
	}
	return body, true
}

// mayHaveHeadings reports whether any line could be an ATX heading ("#" to
// "######" then a space or the end of the line) or a setext underline (only
// '=' or only '-'), so most bodies skip the markdown parser. It looks at
// the start of each line only: most lines start with a letter and are
// passed over at once.
func mayHaveHeadings(s string) bool {
	for len(s) > 0 {
		line := s
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			line, s = s[:i], s[i+1:]
		} else {
			s = ""
		}
		if lineMayBeHeading(line) {
			return true
		}
	}
	return false
}

// lineMayBeHeading reports whether line could be an ATX heading, a setext
// underline, or a heading inside a block quote or list item.
func lineMayBeHeading(line string) bool {
	i := 0
	for i < len(line) && i < 3 && line[i] == ' ' {
		i++
	}
	if i == len(line) {
		return false
	}
	switch c := line[i]; c {
	case '#':
		j := i
		for j < len(line) && line[j] == '#' {
			j++
		}
		return j-i <= 6 && (j == len(line) || line[j] == ' ' || line[j] == '\t' || line[j] == '\r')
	case '=', '-':
		rest := strings.TrimRight(line[i:], " \t\r")
		if strings.Trim(rest, string(c)) == "" {
			return true
		}
	}
	if c := line[i]; c == '>' || c == '-' || c == '*' || c == '+' || ('0' <= c && c <= '9') {
		inner := containerContent(line[i:])
		return inner != line[i:] && strings.HasPrefix(inner, "#")
	}
	return false
}

// containerContent strips block quote markers and list markers from the
// start of line.
func containerContent(line string) string {
	for {
		trimmed := trimIndent(line)
		switch {
		case strings.HasPrefix(trimmed, ">"):
			line = trimmed[1:]
		case len(trimmed) > 1 && strings.ContainsRune("-*+", rune(trimmed[0])) && trimmed[1] == ' ':
			line = trimmed[2:]
		case orderedMarker(trimmed) > 0:
			line = trimmed[orderedMarker(trimmed):]
		default:
			return trimmed
		}
	}
}

// trimIndent drops the spaces and tabs line starts with.
func trimIndent(line string) string {
	i := 0
	for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		i++
	}
	return line[i:]
}

// orderedMarker returns the length of an ordered list marker ("12. ",
// "3) ") at the start of s, or 0.
func orderedMarker(s string) int {
	i := 0
	for i < len(s) && i < 9 && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	if i == 0 || i+1 >= len(s) || (s[i] != '.' && s[i] != ')') || s[i+1] != ' ' {
		return 0
	}
	return i + 2
}

// shiftHeadings moves every heading in body shift levels down (a level-1
// heading becomes level 1+shift), capping at 6. Setext headings at the top
// level become ATX headings. Headings are found with goldmark, so '#' lines
// inside code blocks stay as they are.
func shiftHeadings(body string, shift int) string {
	if shift <= 0 || !mayHaveHeadings(body) {
		return body
	}
	src := []byte(body)
	doc := md().Parser().Parse(text.NewReader(src))
	type edit struct {
		start, end int
		repl       string
	}
	var edits []edit
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		h, ok := n.(*ast.Heading)
		if !entering || !ok {
			return ast.WalkContinue, nil
		}
		level := min(h.Level+shift, 6)
		pos := h.Pos()
		atx := h.Lines().Len() == 0 || h.Lines().At(0).Start > pos // setext text starts at pos, even "#tag"
		if atx && pos >= 0 && pos < len(src) && src[pos] == '#' {
			end := pos
			for end < len(src) && src[end] == '#' {
				end++
			}
			edits = append(edits, edit{pos, end, strings.Repeat("#", level)})
			return ast.WalkSkipChildren, nil
		}
		if h.Parent() != doc || h.Lines().Len() == 0 {
			return ast.WalkSkipChildren, nil // a setext heading inside a container: leave it
		}
		lines := h.Lines()
		parts := make([]string, lines.Len())
		for i := range lines.Len() {
			seg := lines.At(i)
			parts[i] = strings.TrimSpace(string(seg.Value(src)))
		}
		start := lineStart(src, lines.At(0).Start)
		end := lineEnd(src, lineEnd(src, lines.At(lines.Len()-1).Stop-1)+1) // through the underline
		edits = append(edits, edit{start, end, strings.Repeat("#", level) + " " + strings.Join(parts, " ")})
		return ast.WalkSkipChildren, nil
	})
	if len(edits) == 0 {
		return body
	}
	slices.SortFunc(edits, func(a, b edit) int { return a.start - b.start })
	var b strings.Builder
	b.Grow(len(body) + 8*len(edits))
	last := 0
	for _, e := range edits {
		b.Write(src[last:e.start])
		b.WriteString(e.repl)
		last = e.end
	}
	b.Write(src[last:])
	return b.String()
}

// lineStart returns the index where the line containing i begins.
func lineStart(src []byte, i int) int {
	for i > 0 && src[i-1] != '\n' {
		i--
	}
	return i
}

// lineEnd returns the index of the newline ending the line containing i,
// or len(src).
func lineEnd(src []byte, i int) int {
	if i < 0 {
		i = 0
	}
	for i < len(src) && src[i] != '\n' {
		i++
	}
	return i
}
