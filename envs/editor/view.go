package editor

import (
	"bytes"
	"strconv"
	"strings"
)

const (
	// maxViews is how many views the screen keeps; opening one more
	// closes the oldest.
	maxViews = 5
	// maxViewLines is the most lines a view shows: the start line and the
	// lines searched for the end pattern after it.
	maxViewLines = 1000
	// maxShownLine is how many bytes of one line a screen shows.
	maxShownLine = 1000
)

// truncatedMarker follows a view whose end pattern was not found.
const truncatedMarker = "[TRUNCATED: end pattern not found within 1000 lines]"

// view is a section of a file bounded by a start and an end pattern.
type view struct {
	id         int
	path       string // slash path relative to the project root
	start, end *pattern
	label      string
	index      int // selected start match, 0-based

	// shown is what the last resolution found (the last screen, or the
	// command that opened or moved the view): edits are checked against it.
	shown section
}

// section is one resolution of a view against a file's bytes.
type section struct {
	count     int      // start matches in the file
	index     int      // the match shown, 0-based
	first     int      // line number of lines[0], 1-based
	lines     []string // the lines shown, without endings
	truncated bool     // the end pattern was not found
}

// last returns the number of the last line shown.
func (s section) last() int { return s.first + len(s.lines) - 1 }

// contains reports whether lines from..to are all shown.
func (s section) contains(from, to int) bool {
	return len(s.lines) > 0 && from >= s.first && to <= s.last()
}

// resolve finds every line matching start and shows the one at index: from
// it to the first line after it matching end, at most maxViewLines lines.
// With wrap, index counts around (-1 is the last match); without, it is
// clamped to the matches there are. ok is false when no line matches start.
func resolve(data []byte, start, end *pattern, index int, wrap bool) (sec section, ok bool) {
	count, selOff, selLine := 0, -1, 0
	lastOff, lastLine := -1, 0
	cur, curLine := 0, 1
	for off := 0; ; {
		o := start.next(data, off, len(data))
		if o < 0 {
			break
		}
		curLine += bytes.Count(data[cur:o], []byte{'\n'})
		cur = o
		if count == index {
			selOff, selLine = o, curLine
		}
		lastOff, lastLine = o, curLine
		count++
		off = lineEnd(data, o) + 1
	}
	if count == 0 {
		return section{}, false
	}
	target := index
	if wrap {
		target = ((index % count) + count) % count
	} else {
		target = max(0, min(index, count-1))
	}
	switch {
	case target == count-1:
		selOff, selLine = lastOff, lastLine
	case target != index:
		selOff, selLine = nthMatch(data, start, target)
	}
	sec = section{count: count, index: target, first: selLine, truncated: true}
	for p := selOff; p < len(data) && len(sec.lines) < maxViewLines; {
		e := lineEnd(data, p)
		text := lineText(data, p, e)
		sec.lines = append(sec.lines, string(text))
		if p != selOff && (end.lit == nil || bytes.Contains(text, end.lit)) && end.matchLine(text) {
			sec.truncated = false
			break
		}
		p = e + 1
	}
	return sec, true
}

// nthMatch returns the offset and line number of the line matching p at
// index n, 0-based, which must exist.
func nthMatch(data []byte, p *pattern, n int) (off, line int) {
	cur, curLine := 0, 1
	for off := 0; ; n-- {
		o := p.next(data, off, len(data))
		curLine += bytes.Count(data[cur:o], []byte{'\n'})
		cur = o
		if n == 0 {
			return o, curLine
		}
		off = lineEnd(data, o) + 1
	}
}

// header writes the view's first line: id, path, patterns, match, label.
func (v *view) header(b *strings.Builder) {
	b.WriteString("  [")
	b.WriteString(strconv.Itoa(v.id))
	b.WriteString("] ")
	b.WriteString(strings.ToValidUTF8(v.path, "\uFFFD"))
}

// render writes the view as the screen shows it.
func (v *view) render(b *strings.Builder) {
	v.header(b)
	b.WriteString(" /")
	b.WriteString(strings.ToValidUTF8(v.start.src, "\uFFFD"))
	b.WriteString("/ to /")
	b.WriteString(strings.ToValidUTF8(v.end.src, "\uFFFD"))
	b.WriteString("/ (match ")
	b.WriteString(strconv.Itoa(v.shown.index + 1))
	b.WriteByte('/')
	b.WriteString(strconv.Itoa(v.shown.count))
	b.WriteByte(')')
	if v.label != "" {
		b.WriteString(` "`)
		b.WriteString(strings.ToValidUTF8(v.label, "\uFFFD"))
		b.WriteByte('"')
	}
	width := max(7, len(strconv.Itoa(v.shown.last()))+2)
	var num []byte
	for i, line := range v.shown.lines {
		b.WriteByte('\n')
		num = strconv.AppendInt(num[:0], int64(v.shown.first+i), 10)
		for range width - len(num) {
			b.WriteByte(' ')
		}
		b.Write(num)
		if line == "" {
			continue
		}
		b.WriteString("  ")
		writeLine(b, line, maxShownLine)
	}
	if v.shown.truncated {
		b.WriteString("\n    ")
		b.WriteString(truncatedMarker)
	}
}

// writeLine writes line as valid UTF-8, cut after limit bytes with a note
// saying how many were left out.
func writeLine(b *strings.Builder, line string, limit int) {
	if len(line) <= limit {
		b.WriteString(strings.ToValidUTF8(line, "\uFFFD"))
		return
	}
	cut := clip(line, limit)
	cut = cut[:len(cut)-3]
	b.WriteString(strings.ToValidUTF8(cut, "\uFFFD"))
	b.WriteString(" [... ")
	b.WriteString(strconv.Itoa(len(line) - len(cut)))
	b.WriteString(" more bytes]")
}
