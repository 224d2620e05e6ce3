package editor

import (
	"bytes"
	"fmt"
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
	// maxShownLine is how many bytes of one line a view shows, but for
	// a narrow view by lines.
	maxShownLine = 1000
	// maxWholeLines is the most lines a view by lines may have to be
	// narrow: it shows each line whole, up to maxWholeLine bytes, so that
	// a long line can be seen, and edited, whole.
	maxWholeLines = 10
	// maxWholeLine is how many bytes of one line a narrow view shows: the
	// most one line may take of the views' maxViewBytes, with room left
	// for the header and notes.
	maxWholeLine = 48 << 10
	// maxViewBytes is how many bytes the views of one screen take. The
	// orchestrator cuts a screen past 64 KiB, which would hide lines an
	// edit could still name, and the commands' help after them: the views
	// stay within this, and the help within the rest.
	maxViewBytes = 56 << 10
)

// relocateBudget bounds the lines relocate compares.
const relocateBudget = 4 << 20

// truncatedMarker follows a view whose end pattern was not found.
const truncatedMarker = "[TRUNCATED: end pattern not found within 1000 lines]"

// view is a section of a file: bounded by a start and an end pattern, by
// line numbers, or the whole file.
type view struct {
	id         int
	path       string // slash path relative to the project root
	kind       viewKind
	start, end *pattern // byPatterns
	// from and to are the lines of a view by lines, 1-based, inclusive;
	// to is 0 for "to the end of the file". Edits above them move them.
	from, to int
	label    string
	index    int // byPatterns: selected start match, 0-based

	// shown is what the last resolution found (the last screen, or the
	// command that opened or moved the view; for a view by lines or of the
	// whole file, also the editor's own edits): edits are checked against
	// it.
	shown section
}

// section is one resolution of a view against a file's text.
type section struct {
	count     int      // byPatterns: start matches in the file, up to the one shown or maxCountedMatches
	more      bool     // byPatterns: more matches follow the count (see maxCountedMatches)
	index     int      // byPatterns: the match shown, 0-based; negative past the bound, counted from the end (-1: the last)
	first     int      // line number of lines[0], 1-based
	lines     []string // the lines shown, without endings
	truncated bool     // cut at maxViewLines (byPatterns: the end pattern was not found)
	total     int      // lines in the file (byLines and wholeFile)
	encoding  string   // the file's encoding when it is not UTF-8
	limit     int      // bytes of a line rendered; 0 for maxShownLine
}

// lineLimit returns how many bytes of one line s renders.
func (s section) lineLimit() int {
	if s.limit == 0 {
		return maxShownLine
	}
	return s.limit
}

// lineLimit returns how many bytes of one line v shows: maxWholeLine for
// a narrow view by lines (at most maxWholeLines lines, both ends given),
// maxShownLine for any other.
func (v *view) lineLimit() int {
	if v.kind == byLines && v.to != 0 && v.to-v.from < maxWholeLines {
		return maxWholeLine
	}
	return maxShownLine
}

// last returns the number of the last line shown.
func (s section) last() int { return s.first + len(s.lines) - 1 }

// contains reports whether lines from..to are all shown.
func (s section) contains(from, to int) bool {
	return len(s.lines) > 0 && from >= s.first && to <= s.last()
}

// maxCountedMatches bounds the matches of a start pattern counted for
// "(match 2/N)": a pattern matching millions of lines (every line of a big
// log) would otherwise spend a screen's time counting them. Past it the
// count reads "10000+"; a match further on (next_match) is still found,
// and the last matches (prev_match from the first) are found from the end
// of the file without counting them.
const maxCountedMatches = 10_000

// lastChunk is how many bytes [matchFromEnd] searches at a time, walking
// back from the end of the file.
const lastChunk = 64 << 10

// resolve finds the lines matching start and shows the one at index: from
// it to the first line after it matching end, at most maxViewLines lines.
// It counts the matches up to the one shown or maxCountedMatches, whichever
// is further, and notes whether more follow. A negative index counts from
// the end (-1 is the last match); past maxCountedMatches the match is
// found from the end of the file, uncounted, and the section keeps the
// negative index. With wrap, index counts around; without, it is clamped
// to the matches there are. The count is what resolving the chosen match
// again without wrap gives, so a reply and the screen agree. ok is false
// when no line matches start, or when w ran out (see work.ranOut).
func resolve(w *work, data []byte, start, end *pattern, index int, wrap bool) (sec section, ok bool) {
	if len(data) == 0 {
		// An empty file has one line, empty.
		if !start.matchLine(w, nil) {
			return section{}, false
		}
		return section{count: 1, first: 1, lines: []string{""}, truncated: true}, true
	}
	count, selOff, selLine := 0, -1, 0
	lastOff, lastLine := -1, 0
	cur, curLine := 0, 1
	more := false
	for off := 0; ; {
		o := start.next(w, data, off, len(data))
		if o < 0 {
			break
		}
		if count >= maxCountedMatches && (index < 0 || count > index) {
			more = true
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
	if count == 0 || w.ranOut() {
		return section{}, false
	}
	if index < 0 && more {
		return resolveFromEnd(w, data, start, end, index, count)
	}
	target := index
	switch {
	case wrap:
		target = ((index % count) + count) % count
	case index < 0:
		target = max(0, count+index)
	default:
		target = max(0, min(index, count-1))
	}
	if target != index && !more {
		// Wrapped or clamped: count as far as the chosen match would.
		if c := max(maxCountedMatches, target+1); count > c {
			count, more = c, true
		}
	}
	switch {
	case target == count-1 && !more:
		selOff, selLine = lastOff, lastLine
	case target != index:
		selOff, selLine = nthMatch(data, start, target)
		if selOff < 0 {
			return section{}, false
		}
	}
	return showMatch(w, data, end, section{count: count, more: more, index: target, first: selLine, truncated: true}, selOff)
}

// resolveFromEnd shows the match index counts from the end of data
// (-1: the last), when start has more than counted matches: found
// walking back from the end, so a file of millions of matches is not
// counted. With fewer matches than -index it shows the first.
func resolveFromEnd(w *work, data []byte, start, end *pattern, index, counted int) (section, bool) {
	off := matchFromEnd(w, data, start, -index)
	if w.ranOut() {
		return section{}, false
	}
	if off < 0 {
		index, off = 0, start.next(w, data, 0, len(data))
		if off < 0 {
			return section{}, false
		}
	}
	line := 1 + bytes.Count(data[:off], []byte{'\n'})
	return showMatch(w, data, end, section{count: counted, more: true, index: index, first: line, truncated: true}, off)
}

// matchFromEnd returns the offset of the line that is the k-th match of p
// counted from the end of data (k >= 1), or -1. It searches lastChunk
// bytes at a time, each cut at a line start, from the end back.
func matchFromEnd(w *work, data []byte, p *pattern, k int) int {
	var offs []int
	for hi := len(data); hi > 0; {
		lo := max(0, hi-lastChunk)
		lo = bytes.LastIndexByte(data[:lo], '\n') + 1 // the start of lo's line
		offs = offs[:0]
		for off := lo; ; {
			o := p.next(w, data, off, hi)
			if o < 0 {
				break
			}
			offs = append(offs, o)
			off = lineEnd(data, o) + 1
		}
		if w.ranOut() {
			return -1
		}
		if len(offs) >= k {
			return offs[len(offs)-k]
		}
		k -= len(offs)
		hi = lo
	}
	return -1
}

// showMatch fills sec with the lines from the match at selOff to the
// first line after it matching end, at most maxViewLines of them.
func showMatch(w *work, data []byte, end *pattern, sec section, selOff int) (section, bool) {
	for p := selOff; p < len(data) && len(sec.lines) < maxViewLines; {
		e := lineEnd(data, p)
		text := lineText(data, p, e)
		sec.lines = append(sec.lines, string(text))
		if p != selOff && (end.lit == nil || bytes.Contains(text, end.lit)) && end.matchLine(w, text) {
			sec.truncated = false
			break
		}
		if w.ranOut() {
			return section{}, false
		}
		p = e + 1
	}
	return sec, true
}

// resolveLines shows lines from..to (to 0: up to the end of the file),
// at most maxViewLines of them. ok is false when the file ends before
// from.
func resolveLines(data []byte, from, to int) (sec section, ok bool) {
	total := lineCount(data)
	if from > total {
		return section{total: total}, false
	}
	last := total
	if to != 0 {
		last = min(to, total)
	}
	if last-from >= maxViewLines {
		last = from + maxViewLines - 1
		sec.truncated = true
	}
	sec.first, sec.total = from, total
	sec.lines = make([]string, 0, last-from+1)
	off := lineStart(data, from)
	if len(data) == 0 {
		off = 0
	}
	for n := from; n <= last; n++ {
		e := lineEnd(data, off)
		sec.lines = append(sec.lines, string(lineText(data, off, e)))
		off = e + 1
	}
	return sec, true
}

// lineCount returns how many lines data has; an empty file has one.
func lineCount(data []byte) int {
	n := bytes.Count(data, []byte{'\n'})
	if len(data) == 0 || data[len(data)-1] != '\n' {
		n++
	}
	return n
}

// relocate finds where lines, shown from line first before the file
// changed, are now: the place nearest first where all of them appear in
// order. ok is false when they appear nowhere.
func relocate(data []byte, lines []string, first int) (at int, ok bool) {
	if len(lines) == 0 {
		return 0, false
	}
	head := []byte(lines[0])
	best := -1
	n := 1
	// A file of many equal lines could make this quadratic: past a budget
	// of candidate places, the view stays where it is.
	budget := relocateBudget
	for off := 0; off < len(data); n++ {
		e := lineEnd(data, off)
		if bytes.Equal(lineText(data, off, e), head) {
			if budget -= len(lines); budget < 0 {
				return 0, false
			}
			if linesAt(data, e+1, lines[1:]) {
				if best < 0 || abs(n-first) < abs(best-first) {
					best = n
				}
				if n >= first {
					break
				}
			}
		}
		off = e + 1
	}
	return best, best > 0
}

// linesAt reports whether lines appear in data from offset off on.
func linesAt(data []byte, off int, lines []string) bool {
	for _, l := range lines {
		if off >= len(data) {
			return false
		}
		e := lineEnd(data, off)
		if string(lineText(data, off, e)) != l {
			return false
		}
		off = e + 1
	}
	return true
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// nthMatch returns the offset and line number of the line matching p at
// index n, 0-based, which must exist: a line resolve matched p against
// within its work, so here without a bound; off is -1 should it not.
func nthMatch(data []byte, p *pattern, n int) (off, line int) {
	cur, curLine := 0, 1
	for off := 0; ; n-- {
		o := p.next(nil, data, off, len(data))
		if o < 0 {
			return -1, 0
		}
		curLine += bytes.Count(data[cur:o], []byte{'\n'})
		cur = o
		if n == 0 {
			return o, curLine
		}
		off = lineEnd(data, o) + 1
	}
}

// matchWords names the match shown and the count: "match 2/7",
// "match 2/10000+", "the last match of 10000+" or "match 3 counting from
// the end, of 10000+" (a match found from the end, uncounted).
func (s section) matchWords() string {
	switch {
	case s.index == -1:
		return fmt.Sprintf("the last match of %d+", s.count)
	case s.index < 0:
		return fmt.Sprintf("match %d counting from the end, of %d+", -s.index, s.count)
	case s.more:
		return fmt.Sprintf("match %d/%d+", s.index+1, s.count)
	}
	return fmt.Sprintf("match %d/%d", s.index+1, s.count)
}

// header writes the view's first line: id and path.
func (v *view) header(b *strings.Builder) {
	b.WriteString("  [")
	b.WriteString(strconv.Itoa(v.id))
	b.WriteString("] ")
	b.WriteString(showPath(v.path))
}

// describe writes what bounds the view: its patterns and match, its line
// numbers, or "(whole file)".
func (v *view) describe(b *strings.Builder) {
	switch v.kind {
	case byPatterns:
		b.WriteString(" /")
		b.WriteString(strings.ToValidUTF8(v.start.src, "\uFFFD"))
		b.WriteString("/ to /")
		b.WriteString(strings.ToValidUTF8(v.end.src, "\uFFFD"))
		b.WriteString("/")
	case byLines:
		b.WriteString(" lines ")
		b.WriteString(strconv.Itoa(v.from))
		b.WriteByte('-')
		if v.to != 0 {
			b.WriteString(strconv.Itoa(v.to))
		}
	case wholeFile:
		b.WriteString(" (whole file)")
	}
}

// render writes the view as the screen shows it; with gutter, each line
// is numbered "path:N" instead of "N". It appends to ends where its
// header line ends in b, then where each line ends, and returns ends.
func (v *view) render(b *strings.Builder, gutter bool, ends []int) []int {
	v.header(b)
	v.describe(b)
	if v.kind == byPatterns {
		b.WriteString(" (")
		b.WriteString(v.shown.matchWords())
		b.WriteByte(')')
	}
	if v.label != "" {
		b.WriteString(` "`)
		b.WriteString(strings.ToValidUTF8(v.label, "\uFFFD"))
		b.WriteByte('"')
	}
	if v.shown.encoding != "" {
		b.WriteString(" [")
		b.WriteString(v.shown.encoding)
		b.WriteByte(']')
	}
	if v.kind != byPatterns && v.shown.total == 1 && len(v.shown.lines) == 1 && v.shown.lines[0] == "" {
		b.WriteString(" [empty file]")
	}
	width := max(7, len(strconv.Itoa(v.shown.last()))+2)
	prefix := ""
	if gutter {
		prefix = "  " + showPath(v.path) + ":"
		width = len(strconv.Itoa(v.shown.last()))
	}
	ends = append(ends, b.Len())
	var num []byte
	for i, line := range v.shown.lines {
		if i > 0 {
			ends = append(ends, b.Len())
		}
		b.WriteByte('\n')
		num = strconv.AppendInt(num[:0], int64(v.shown.first+i), 10)
		if gutter {
			b.WriteString(prefix)
			b.Write(num)
			if line == "" {
				continue
			}
			pad(b, width-len(num))
		} else {
			pad(b, width-len(num))
			b.Write(num)
			if line == "" {
				continue
			}
		}
		b.WriteString("  ")
		writeLine(b, line, v.shown.lineLimit())
	}
	if len(v.shown.lines) > 0 {
		ends = append(ends, b.Len())
	}
	switch {
	case !v.shown.truncated:
	case v.kind == byPatterns:
		b.WriteString("\n    ")
		b.WriteString(truncatedMarker)
	default:
		next := v.shown.last() + 1
		fmt.Fprintf(b, "\n    [TRUNCATED: the file has %d lines; a view shows at most %d: view %s %d-%d shows the next ones]",
			v.shown.total, maxViewLines, quotePath(v.path), next, min(v.shown.total, next+maxViewLines-1))
	}
	return ends
}

// pad writes n spaces.
func pad(b *strings.Builder, n int) {
	for range n {
		b.WriteByte(' ')
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
