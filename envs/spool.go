package envs

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/unfold-dev/unfold/internal/utf8cut"
	"github.com/unfold-dev/unfold/tokens"
)

// DefaultSpoolLimit is how many bytes the spool files of one environment
// take on disk at most, by default: 1 GB.
const DefaultSpoolLimit = 1 << 30

// Spool keeps the whole output of an environment's commands that pass
// their memory limit: each [Output] it makes writes everything to a file
// of its own once more than its limit was written, in a directory the
// spool makes when the first file is needed. A quick command makes no
// file.
//
// [Spool.Fit] fits a response whose output shows such an Output: the
// bytes its note stands for go back in their place in the file the
// response names, and the spool file is removed. Close removes the
// directory and every file still in it: those of outputs no response
// showed.
//
// The files take at most the spool's limit on disk together; output past
// it is not kept, and the file a response names says where and how much
// is missing. A Spool is safe for concurrent use; a nil *Spool keeps
// nothing, and its Outputs are those of [NewOutput].
type Spool struct {
	parent string // where the directory is made; "": the system's temporary directory
	limit  int64

	// mu guards the fields below.
	mu     sync.Mutex
	dir    string    // "" until the first file
	used   int64     // bytes in the files of live
	live   []*Output // the outputs whose file is still here
	closed bool
}

// NewSpool returns a spool whose directory goes in parent ("": the
// system's temporary directory, as [os.TempDir] says when the first file
// is made) and whose files take at most limit bytes (<= 0:
// [DefaultSpoolLimit]).
func NewSpool(parent string, limit int64) *Spool {
	if limit <= 0 {
		limit = DefaultSpoolLimit
	}
	return &Spool{parent: parent, limit: limit}
}

// Output returns an Output that keeps limit bytes in memory as
// [NewOutput] does and, past them, writes the whole output to a file of s.
func (s *Spool) Output(limit int) *Output {
	o := NewOutput(limit)
	o.spool = s
	return o
}

// create makes the spool file of o.
func (s *Spool) create(o *Output) (*os.File, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	if s.dir == "" {
		dir, err := os.MkdirTemp(s.parent, "unfold-spool-*")
		if err != nil {
			return nil, err
		}
		s.dir = dir
	}
	f, err := os.CreateTemp(s.dir, "output-*.txt")
	if err != nil {
		return nil, err
	}
	s.live = append(s.live, o)
	return f, nil
}

// reserve returns how many of n more bytes may go to disk, and counts
// them.
func (s *Spool) reserve(n int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := int(min(int64(n), max(s.limit-s.used, 0)))
	s.used += int64(k)
	return k
}

// unreserve gives back n bytes reserve counted.
func (s *Spool) unreserve(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.used -= int64(n)
}

// forget drops o, whose file of size bytes is gone.
func (s *Spool) forget(o *Output, size int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := slices.Index(s.live, o); i >= 0 {
		s.live = slices.Delete(s.live, i, i+1)
		s.used -= size
	}
}

// Close removes the spool's directory with every file in it; outputs
// still written to keep their memory part only. It is idempotent.
func (s *Spool) Close() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	live, dir := s.live, s.dir
	s.mu.Unlock()
	for _, o := range live {
		o.release()
	}
	if dir == "" {
		return nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("envs: close spool: %w", err)
	}
	return nil
}

// release closes and removes o's spool file; from then on o keeps its
// memory part only.
func (o *Output) release() {
	o.mu.Lock()
	d := o.disk
	if d == nil || d.file == nil {
		o.mu.Unlock()
		return
	}
	f, size := d.file, d.written
	d.file, d.lost = nil, "its file was removed"
	o.mu.Unlock()
	_ = f.Close()
	_ = os.Remove(f.Name())
	o.spool.forget(o, size)
}

// Fit is [Limits.Fit] for a response whose output may show Outputs of s
// that passed their memory limit. Such an output is cut already: in its
// place, the file saved (with l.Save) holds the whole output, the note
// between its head and tail names that file and says how much is left
// out, and the response names it in OutputFile, whether or not the
// budget cuts more. The spool files it used are removed. When saving
// with l.Save fails, the whole output goes to a file in the system's
// temporary directory ([SaveTemp]) instead, and the note says why; when
// that fails too, the response shows what memory kept and says that the
// rest is lost.
func (s *Spool) Fit(l Limits, resp Response) Response {
	if s == nil {
		return l.Fit(resp)
	}
	s.mu.Lock()
	live := slices.Clone(s.live)
	s.mu.Unlock()
	var gaps []*gap
	for _, o := range live {
		if g := o.gapIn(resp.Output); g != nil {
			gaps = append(gaps, g)
		}
	}
	if len(gaps) == 0 {
		return l.Fit(resp)
	}
	slices.SortFunc(gaps, func(a, b *gap) int { return cmp.Compare(a.at, b.at) })
	resp = l.fitGaps(resp, gaps)
	for _, g := range gaps {
		g.o.release()
	}
	return resp
}

// gap is the place in a response's output where an Output's note stands
// for bytes that are only in its spool file.
type gap struct {
	o        *Output
	at       int    // where the note starts in the response's output
	note     string // the note there
	file     *os.File
	from, to int64  // the bytes of the output the note stands for
	written  int64  // how much of the output the file holds
	lost     string // why the file stops short, when it does
	memory   int64  // the Output's limit
	disk     int64  // the spool's limit

	// Counted as the file is read.
	lines, tokens int
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
	return &gap{o: o, at: at, note: d.note, file: d.file, from: d.cut[0], to: d.cut[1], written: d.written, lost: d.lost,
		memory: int64(o.headCap + o.tailCap), disk: o.spool.limit}
}

// saved returns how many of the gap's bytes the file holds.
func (g *gap) saved() int64 { return min(max(g.written, g.from), g.to) - g.from }

// reader reads the gap's bytes from the file as valid UTF-8, as the rest
// of the response is ([validReader]), counting their lines and tokens,
// and then, when the file stops short, a line saying how much is
// missing.
func (g *gap) reader() io.Reader {
	g.lines, g.tokens = 0, 0
	valid := &validReader{r: io.NewSectionReader(g.file, g.from, g.saved())}
	r := &counter{r: valid, lines: &g.lines, tokens: &g.tokens}
	missing := g.to - g.from - g.saved()
	if missing == 0 {
		return r
	}
	return io.MultiReader(r, strings.NewReader(fmt.Sprintf("\n[... %s of output missing here: %s ...]\n", formatBytes(missing), g.lost)))
}

// replyNote is the note that takes the gap's place in the response: how
// much is left out and where it is, or why it is lost.
func (g *gap) replyNote(name string, err error, extra string) string {
	size := formatBytes(g.to - g.from)
	if err != nil {
		return fmt.Sprintf("[... %s of output left out here, past the %s kept in memory; saving the whole output failed (%v), so it is lost.%s]", size, formatBytes(g.memory), err, extra)
	}
	if missing := g.to - g.from - g.saved(); missing > 0 {
		return fmt.Sprintf("[... %s of output left out here, past the %s kept in memory; the output is saved in %s, except %s of it, lost as %s (the file marks the place): view it with the editor, or search it with grep.%s]",
			size, formatBytes(g.memory), name, formatBytes(missing), g.lost, extra)
	}
	return fmt.Sprintf("[... %d lines (%d tokens, %s) left out here, past the %s of output kept in memory; the whole output is saved in %s: view it with the editor, or search it with grep.%s]",
		g.lines, g.tokens, size, formatBytes(g.memory), name, extra)
}

// fitGaps fits a response whose output has gaps: it saves the whole
// output, puts a note naming the file in each gap's place, and cuts the
// result to the budget as [Limits.Fit] does, counting what the gaps left
// out.
func (l Limits) fitGaps(resp Response, gaps []*gap) Response {
	text := resp.Output
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
	if l.Save != nil {
		if name, err = l.Save(whole()); err != nil {
			fallback = fmt.Sprintf(" (Saving it where asked failed: %v.)", err)
			name, err = SaveTemp(whole())
		}
	} else {
		name, err = SaveTemp(whole())
	}

	// The output shown: each gap's note replaced by one naming the file.
	count := tokens.Estimate.Count
	var b strings.Builder
	type span struct {
		start, end    int
		lines, tokens int // what the gap left out
	}
	spans := make([]span, len(gaps))
	pos := 0
	wholeLines, wholeTokens := 0, 0
	for i, g := range gaps {
		b.WriteString(text[pos:g.at])
		note := g.replyNote(name, err, fallback) + "\n"
		if strings.HasPrefix(g.note, "\n") {
			note = "\n" + note
		}
		spans[i] = span{b.Len(), b.Len() + len(note), g.lines, g.tokens}
		b.WriteString(note)
		pos = g.at + len(g.note)
		wholeLines += g.lines - strings.Count(note, "\n")
		wholeTokens += g.tokens - count(note)
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
	total := count(shown)
	if budget <= 0 || total <= budget {
		resp.Output = shown
		return resp
	}
	wholeLines += strings.Count(shown, "\n") + 1
	wholeTokens += total
	avail := max(budget-noteTokens, 2)
	head, tail := cut(shown, avail/2, avail-avail/2)
	from, to := len(head), len(shown)-len(tail)
	middle := shown[from:to]
	leftLines, leftTokens := strings.Count(middle, "\n"), count(middle)
	for _, s := range spans {
		if from <= s.start && s.end <= to {
			note := shown[s.start:s.end]
			leftLines += s.lines - strings.Count(note, "\n")
			leftTokens += s.tokens - count(note)
		}
	}
	for _, g := range gaps {
		if missing := g.to - g.from - g.saved(); missing > 0 {
			fallback += fmt.Sprintf(" Of it, %s are lost, as %s; the file marks the place.", formatBytes(missing), g.lost)
		}
	}
	resp.Output = head + budgetNote(head, tail, leftLines, wholeLines, leftTokens, wholeTokens, budget, name, fallback) + tail
	return resp
}

// counter passes on what it reads, counting its lines and, line by line
// (the estimate adds up at line breaks), its tokens.
type counter struct {
	r             io.Reader
	lines, tokens *int
	carry         []byte // the unfinished line
}

// maxCarry bounds the unfinished line a counter holds: a longer one is
// counted in parts, which the estimate may count a token or so apart.
const maxCarry = 64 << 10

func (c *counter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	b := p[:n]
	count := tokens.Estimate.Count
	if nl := bytes.Count(b, []byte{'\n'}); nl > 0 {
		*c.lines += nl
		first, last := bytes.IndexByte(b, '\n'), bytes.LastIndexByte(b, '\n')
		c.carry = append(c.carry, b[:first+1]...)
		*c.tokens += count(string(c.carry)) + count(string(b[first+1:last+1]))
		c.carry = append(c.carry[:0], b[last+1:]...)
	} else {
		c.carry = append(c.carry, b...)
	}
	if len(c.carry) > maxCarry || errors.Is(err, io.EOF) && len(c.carry) > 0 {
		*c.tokens += count(string(c.carry))
		c.carry = c.carry[:0]
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
