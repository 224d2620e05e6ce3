package envs

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/unfold-dev/unfold/internal/utf8cut"
	"github.com/unfold-dev/unfold/tokens"
)

// gap is the place in a response's output where an Output's note stands
// for bytes that are only in its spool file.
type gap struct {
	o        *Output
	at       int      // where the note starts in the response's output
	note     string   // the note there
	file     *os.File // the spool file, opened for the gap alone; nil when it could not be
	from, to int64    // the bytes of the output the note stands for
	written  int64    // how much of the output the file holds
	lost     string   // why the file stops short, when it does
	memory   int64    // the Output's limit
	disk     int64    // the spool's limit

	// What the saved file holds of the bytes in the spool file (see
	// plan): from from to keep[0], then from keep[1] on; midLine: keep[0]
	// is not at the start of a line.
	keep    [2]int64
	midLine bool
	limit   int64 // the save limit that left out keep[0] to keep[1]

	lines int // counted as the saved parts are read
}

// gapIn returns o's gap in text, or nil when text does not show o.
func (o *Output) gapIn(text string) *gap {
	o.mu.Lock()
	defer o.mu.Unlock()
	d := o.disk
	if d == nil || d.file == nil || d.note == "" {
		return nil
	}
	at := strings.Index(text, d.note)
	if at < 0 {
		return nil
	}
	g := &gap{o: o, at: at, note: d.note, from: d.cut[0], to: d.cut[1], written: d.written, lost: d.lost,
		memory: int64(o.headCap + o.tailCap), disk: o.spool.limit}
	// A descriptor of the gap's own: the environment may close, and
	// remove the file, while the response is saved.
	f, err := os.Open(d.path)
	if err != nil {
		g.written, g.lost = 0, "its file could not be read: "+err.Error()
	}
	g.file = f
	return g
}

// saved returns how many of the gap's bytes the file holds.
func (g *gap) saved() int64 { return min(max(g.written, g.from), g.to) - g.from }

// missing returns how many of the gap's bytes the spool file does not
// hold.
func (g *gap) missing() int64 { return g.to - g.from - g.saved() }

// skipped returns how many of the gap's bytes the save limit leaves out.
func (g *gap) skipped() int64 { return g.keep[1] - g.keep[0] }

// spoolRead counts the bytes [Spool.Fit] reads back from spool files, so
// that a test can check that this work is bounded by what is saved.
var spoolRead atomic.Int64

// alignWindow is how far plan looks for a line break to cut at.
const alignWindow = 4 << 10

// plan sets what of the gap's bytes the saved file holds: all of them
// when they take at most room bytes (room < 0: no bound), else the first
// and the last half of room, cut at line breaks where one is near.
func (g *gap) plan(room, limit int64) {
	end := g.from + g.saved()
	g.keep = [2]int64{end, end}
	if room < 0 || g.saved() <= room {
		return
	}
	g.limit = limit
	headEnd, headLine := g.boundary(g.from+room/2, g.from, true)
	tailStart, _ := g.boundary(end-(room-room/2), headEnd, false)
	g.keep = [2]int64{headEnd, max(tailStart, headEnd)}
	g.midLine = !headLine && headEnd > g.from
}

// boundary returns the place near at, in the spool file, to cut at: just
// after the last line break before it (back) or the first after it,
// within alignWindow and not before low; otherwise the start of the
// character at it. line reports a line break.
func (g *gap) boundary(at, low int64, back bool) (pos int64, line bool) {
	from := max(at, low)
	if back {
		from = max(at-alignWindow, low)
	}
	buf := make([]byte, min(alignWindow, g.from+g.saved()-from))
	n, _ := g.file.ReadAt(buf, from)
	spoolRead.Add(int64(n))
	buf = buf[:n]
	if back {
		if i := bytes.LastIndexByte(buf[:min(n, int(at-from))], '\n'); i >= 0 {
			return from + int64(i) + 1, true
		}
		k := int(at - from)
		for k > 0 && k < n && !utf8.RuneStart(buf[k]) {
			k--
		}
		return from + int64(k), false
	}
	if i := bytes.IndexByte(buf, '\n'); i >= 0 {
		return from + int64(i) + 1, true
	}
	k := 0
	for k < min(n, utf8.UTFMax-1) && !utf8.RuneStart(buf[k]) {
		k++
	}
	return from + int64(k), false
}

// reader reads what the saved file holds of the gap's bytes as valid
// UTF-8, as the rest of the response is ([validReader]), counting their
// lines: all of them, or the head and the tail with a line between
// saying how much the save limit left out; then, when the spool file
// stops short, a line saying how much is missing.
func (g *gap) reader() io.Reader {
	g.lines = 0
	parts := []io.Reader{g.part(g.from, g.keep[0])}
	if skipped := g.skipped(); skipped > 0 {
		note := fmt.Sprintf("[... %s of output left out here, as a saved output holds at most %s ...]\n", formatBytes(skipped), formatBytes(g.limit))
		if g.midLine {
			note = "\n" + note
		}
		parts = append(parts, strings.NewReader(note), g.part(g.keep[1], g.from+g.saved()))
	}
	if missing := g.missing(); missing > 0 {
		parts = append(parts, strings.NewReader(fmt.Sprintf("\n[... %s of output missing here: %s ...]\n", formatBytes(missing), g.lost)))
	}
	return io.MultiReader(parts...)
}

// part reads the spool file's bytes from from to to as valid UTF-8,
// counting their lines.
func (g *gap) part(from, to int64) io.Reader {
	if to <= from {
		return strings.NewReader("")
	}
	return &counter{r: &validReader{r: &counter{r: io.NewSectionReader(g.file, from, to-from), bytes: &spoolRead}}, lines: &g.lines}
}

// exceptions says what of the gap the saved file does not hold, as "X of
// it, lost as why" phrases joined by "and"; "" when it holds all.
func (g *gap) exceptions() string {
	var parts []string
	if skipped := g.skipped(); skipped > 0 {
		parts = append(parts, fmt.Sprintf("%s of its middle, left out as a saved output holds at most %s", formatBytes(skipped), formatBytes(g.limit)))
	}
	if missing := g.missing(); missing > 0 {
		parts = append(parts, fmt.Sprintf("%s of it, lost as %s", formatBytes(missing), g.lost))
	}
	return strings.Join(parts, ", and ")
}

// replyNote is the note that takes the gap's place in the response: how
// much is left out and where it is, or why it is lost.
func (g *gap) replyNote(name string, err error, extra string) string {
	size := formatBytes(g.to - g.from)
	if err != nil {
		return fmt.Sprintf("[... %s of output left out here, past the %s kept in memory; saving the whole output failed (%v), so it is lost.%s]", size, formatBytes(g.memory), err, extra)
	}
	if except := g.exceptions(); except != "" {
		return fmt.Sprintf("[... %s of output left out here, past the %s kept in memory; the output is saved in %s, except %s (the file marks the place): view it with the editor, or search it with grep.%s]",
			size, formatBytes(g.memory), name, except, extra)
	}
	return fmt.Sprintf("[... %d lines (%s) left out here, past the %s of output kept in memory; the whole output is saved in %s: view it with the editor, or search it with grep.%s]",
		g.lines, size, formatBytes(g.memory), name, extra)
}

// fitGaps fits a response whose output has gaps: it saves the output
// (within l.SaveLimit), puts a note naming the file in each gap's place,
// and cuts the result to the budget as [Limits.Fit] does, saying how
// much the budget and the gaps left out.
func (l Limits) fitGaps(resp Response, gaps []*gap) Response {
	text := resp.Output
	limit := cmp.Or(l.SaveLimit, DefaultSaveLimit)
	room := int64(-1)
	if limit > 0 {
		// What memory kept is saved whole; the gaps share the rest.
		room = max(limit-int64(len(text)), 0) / int64(len(gaps))
	}
	for _, g := range gaps {
		g.plan(room, limit)
	}
	whole := func() io.Reader {
		parts := make([]io.Reader, 0, 2*len(gaps)+1)
		pos := 0
		for _, g := range gaps {
			parts = append(parts, strings.NewReader(text[pos:g.at]), g.reader())
			pos = g.at + len(g.note)
		}
		return io.MultiReader(append(parts, strings.NewReader(text[pos:]))...)
	}
	var name, fallback string
	var err error
	// l.Save is set: Spool.Fit gives its own when the caller gave none.
	// Saving fails with ErrClosed once the environment closed: the output
	// is then not kept anywhere else either.
	if name, err = l.Save(whole()); err != nil && !errors.Is(err, ErrClosed) {
		fallback = fmt.Sprintf(" (Saving it where asked failed: %v.)", err)
		name, err = SaveTemp(whole())
	}

	// The output shown: each gap's note replaced by one naming the file.
	var b strings.Builder
	type span struct {
		start, end int
		g          *gap
	}
	spans := make([]span, len(gaps))
	pos := 0
	for i, g := range gaps {
		b.WriteString(text[pos:g.at])
		note := g.replyNote(name, err, fallback) + "\n"
		if strings.HasPrefix(g.note, "\n") {
			note = "\n" + note
		}
		spans[i] = span{b.Len(), b.Len() + len(note), g}
		b.WriteString(note)
		pos = g.at + len(g.note)
	}
	b.WriteString(text[pos:])
	shown := b.String()
	if err != nil {
		// What memory kept is shown whole, as for any output that could
		// not be saved.
		resp.Output = shown
		return resp
	}
	resp.OutputFile = name
	budget := l.Budget
	if budget <= 0 || fits(shown, budget) {
		resp.Output = shown
		return resp
	}
	avail := max(budget-noteTokens, 2)
	head, tail := cut(shown, avail/2, avail-avail/2)
	from, to := len(head), len(shown)-len(tail)
	// What the budget leaves out, and the whole, in bytes and lines of
	// the output: each gap's bytes instead of its note. Its lines are
	// known when the saved file holds all of it.
	leftBytes, wholeBytes := int64(to-from), int64(len(shown))
	leftLines, wholeLines := strings.Count(shown[from:to], "\n"), strings.Count(shown, "\n")+1
	var except []string
	for _, s := range spans {
		note := shown[s.start:s.end]
		size, lines := s.g.to-s.g.from-int64(len(note)), s.g.lines-strings.Count(note, "\n")
		wholeBytes += size
		wholeLines += lines
		if from <= s.start && s.end <= to {
			leftBytes += size
			leftLines += lines
		}
		if e := s.g.exceptions(); e != "" {
			except = append(except, e)
		}
	}
	left := fmt.Sprintf("%d of %d lines (%s of %s)", leftLines, wholeLines, formatBytes(leftBytes), formatBytes(wholeBytes))
	saved := "the whole output is saved in " + name
	if len(except) > 0 {
		left = fmt.Sprintf("%s of the %s of output", formatBytes(leftBytes), formatBytes(wholeBytes))
		saved = fmt.Sprintf("the output is saved in %s, except %s (the file marks the place)", name, strings.Join(except, ", and "))
	}
	resp.Output = head + budgetNote(head, tail, left, budget, saved, l.readHow(name), fallback) + tail
	return resp
}

// fits reports whether s takes at most budget tokens, counting it line by
// line (the estimate adds up at line breaks) only until it takes more.
func fits(s string, budget int) bool {
	if len(s) <= budget {
		// Every token of the estimate takes a byte at least.
		return true
	}
	used := 0
	for s != "" {
		line := s
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			line = s[:i+1]
		}
		if used += tokens.Estimate.Count(line); used > budget {
			return false
		}
		s = s[len(line):]
	}
	return true
}

// counter passes on what it reads, counting its lines (lines != nil)
// or its bytes (bytes != nil).
type counter struct {
	r     io.Reader
	lines *int
	bytes *atomic.Int64
}

func (c *counter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if c.lines != nil {
		*c.lines += bytes.Count(p[:n], []byte{'\n'})
	}
	if c.bytes != nil {
		c.bytes.Add(int64(n))
	}
	return n, err
}

// validReader passes on what it reads as valid UTF-8, as
// [strings.ToValidUTF8] makes text: each run of invalid bytes becomes one
// U+FFFD, a run across reads too. A character cut by a read waits for the
// next.
type validReader struct {
	r       io.Reader
	buf     []byte            // what is read; out points into it
	out     []byte            // to pass on
	cut     [utf8.UTFMax]byte // the start of a character the last read cut
	ncut    int
	invalid bool // what was passed on last ended in a run of invalid bytes
	eof     bool
}

func (v *validReader) Read(p []byte) (int, error) {
	for len(v.out) == 0 {
		if v.eof {
			return 0, io.EOF
		}
		v.fill()
	}
	n := copy(p, v.out)
	v.out = v.out[n:]
	return n, nil
}

// fill reads more and sets out to what of it can be passed on.
func (v *validReader) fill() {
	if v.buf == nil {
		v.buf = make([]byte, 32<<10)
	}
	start := copy(v.buf, v.cut[:v.ncut])
	n, err := v.r.Read(v.buf[start:])
	data := v.buf[:start+n]
	v.ncut = 0
	if err != nil {
		v.eof = true
	} else if k := utf8cut.Partial(data); k > 0 {
		v.ncut = copy(v.cut[:], data[len(data)-k:])
		data = data[:len(data)-k]
	}
	if v.invalid {
		// The run of invalid bytes goes on: its U+FFFD was passed on.
		for len(data) > 0 {
			if r, size := utf8.DecodeRune(data); r != utf8.RuneError || size != 1 {
				break
			}
			data = data[1:]
		}
	}
	if len(data) > 0 {
		r, size := utf8.DecodeLastRune(data)
		v.invalid = r == utf8.RuneError && size == 1
		if !utf8.Valid(data) {
			data = []byte(strings.ToValidUTF8(string(data), "\uFFFD"))
		}
	}
	v.out = data
}
