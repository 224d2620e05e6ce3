package envs

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/unfold-dev/unfold/internal/utf8cut"
)

// DefaultOutputLimit is how many bytes of a command's output an environment
// keeps in memory by default: 10 MB, half from the start and half from the
// end.
const DefaultOutputLimit = 10 << 20

// Output collects a command's output in bounded memory: the first half of
// its limit from the start of the output, the second half as a ring of the
// most recent bytes, and a count of what fell in between. An Output made
// by a [Spool] keeps the whole output besides: once more than its limit
// has been written, it writes what it holds and everything after, in
// order, to a file of the spool, so memory stays at the limit while the
// file is complete. It is safe for concurrent use; the zero value is not
// usable, create one with [NewOutput] or [Spool.Output].
type Output struct {
	// mu guards every field below.
	mu      sync.Mutex
	headCap int
	tailCap int
	head    []byte // grows as written, up to headCap
	tail    []byte // ring of the newest bytes once the head is full; grows up to tailCap
	start   int    // index in tail of the oldest byte
	full    bool   // the ring is at tailCap
	total   int64  // bytes written

	spool *Spool   // where the whole output goes past the limit; nil: nowhere
	disk  *spooled // the spool file, from when the limit was passed; nil before
}

// spooled is the file that holds an Output's whole output.
type spooled struct {
	file    *os.File // nil once released
	path    string
	written int64    // bytes of the output in the file, from the start
	lost    string   // why the file stops short of the output: the disk limit, a failed write; "" while it does not
	note    string   // the note the last String put between head and tail
	cut     [2]int64 // the bytes of the output that note stands for: from the end of the head to the start of the tail
}

// NewOutput returns an Output that keeps at most limit bytes (at least 2;
// limit <= 0 means [DefaultOutputLimit]). Its buffers grow as output
// arrives.
func NewOutput(limit int) *Output {
	if limit <= 0 {
		limit = DefaultOutputLimit
	}
	limit = max(limit, 2)
	// Nothing is allocated up front: most commands print little, and a
	// 10 MB limit must not cost 10 MB per command.
	return &Output{headCap: limit / 2, tailCap: limit - limit/2}
}

// Write keeps what fits and counts the rest; past the limit, an Output of
// a spool writes to its file too. It never fails: when the file cannot be
// made or written, what it misses is dropped, and String says why.
func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := len(p)
	if o.spool != nil {
		if o.disk == nil && o.total+int64(n) > int64(o.headCap+o.tailCap) {
			o.spill()
		}
		if o.disk != nil && o.disk.file != nil && o.disk.lost == "" {
			o.toDisk(p)
		}
	}
	o.total += int64(n)
	if room := o.headCap - len(o.head); room > 0 {
		k := min(room, len(p))
		o.head = append(o.head, p[:k]...)
		p = p[k:]
	}
	c := o.tailCap
	if len(p) >= c {
		// Only the newest c bytes can survive.
		o.tail = append(o.tail[:0], p[len(p)-c:]...)
		o.start, o.full = 0, true
		return n, nil
	}
	for len(p) > 0 {
		if !o.full {
			k := min(c-len(o.tail), len(p))
			o.tail = append(o.tail, p[:k]...)
			p = p[k:]
			if len(o.tail) == c {
				o.full = true
			}
			continue
		}
		k := copy(o.tail[o.start:], p)
		p = p[k:]
		o.start = (o.start + k) % c
	}
	return n, nil
}

// spill starts the spool file, as the output is about to pass the limit,
// with everything written so far: the head and the ring, which holds the
// rest in order, as nothing was dropped yet.
func (o *Output) spill() {
	f, err := o.spool.create(o)
	if err != nil {
		o.disk = &spooled{lost: "it could not be written to disk: " + err.Error()}
		return
	}
	o.disk = &spooled{file: f, path: f.Name()}
	o.toDisk(o.head)
	o.toDisk(o.tail)
}

// toDisk appends p to the spool file, as far as the spool's limit allows.
func (o *Output) toDisk(p []byte) {
	d := o.disk
	if d.lost != "" || len(p) == 0 {
		return
	}
	k := o.spool.reserve(len(p))
	n, err := d.file.Write(p[:k])
	d.written += int64(n)
	switch {
	case err != nil:
		o.spool.unreserve(k - n)
		d.lost = "writing it to disk failed: " + err.Error()
	case k < len(p):
		d.lost = fmt.Sprintf("the output passed the %s an environment keeps on disk", formatBytes(o.spool.limit))
	}
}

// Total returns how many bytes were written.
func (o *Output) Total() int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.total
}

// Dropped returns how many bytes were written but not kept in memory.
func (o *Output) Dropped() int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.total - int64(len(o.head)+len(o.tail))
}

// String returns the kept output as valid UTF-8 (invalid bytes become
// U+FFFD, one per run of them), with a line saying how much was dropped
// between head and tail. For an Output of a spool that passed its limit,
// that line names the spool file, which holds the whole output until the
// spool closes or [Spool.Fit] moves it to the file a response names.
func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.total == 0 {
		return ""
	}
	dropped := o.total - int64(len(o.head)+len(o.tail))
	if dropped > 0 && o.disk != nil && o.disk.file != nil {
		return o.spooledString()
	}
	var b strings.Builder
	b.Grow(len(o.head) + len(o.tail) + 100)
	b.Write(o.head)
	if dropped > 0 {
		if len(o.head) > 0 && o.head[len(o.head)-1] != '\n' {
			b.WriteByte('\n')
		}
		why := ""
		if o.disk != nil && o.disk.lost != "" {
			why = " (" + o.disk.lost + ")"
		}
		fmt.Fprintf(&b, "[... %s of output dropped%s; showing the first %s and the last %s ...]\n",
			formatBytes(dropped), why, formatBytes(int64(len(o.head))), formatBytes(int64(len(o.tail))))
	}
	o.ring(&b)
	return strings.ToValidUTF8(b.String(), "\uFFFD")
}

// ring writes the ring's bytes, oldest first.
func (o *Output) ring(b *strings.Builder) {
	if o.full {
		b.Write(o.tail[o.start:])
		b.Write(o.tail[:o.start])
	} else {
		b.Write(o.tail)
	}
}

// spooledString is String for an output whose whole is in its spool file.
// The head and the tail shown end and start at whole characters, so that
// the bytes between, which the note stands for, put back in its place
// give the output as written.
func (o *Output) spooledString() string {
	var t strings.Builder
	t.Grow(len(o.tail))
	o.ring(&t)
	tail := t.String()
	headEnd := len(o.head) - utf8cut.Partial(o.head)
	tailStart := 0
	for tailStart < min(len(tail), utf8.UTFMax-1) && !utf8.RuneStart(tail[tailStart]) {
		tailStart++
	}
	d := o.disk
	d.cut = [2]int64{int64(headEnd), o.total - int64(len(tail)-tailStart)}
	kept := "all of it is kept"
	if d.lost != "" {
		kept = fmt.Sprintf("the first %s of it are kept (%s)", formatBytes(d.written), d.lost)
	}
	d.note = fmt.Sprintf("[... %s of output left out here, past the %s kept in memory; %s in %s until the environment closes ...]\n",
		formatBytes(d.cut[1]-d.cut[0]), formatBytes(int64(o.headCap+o.tailCap)), kept, d.path)
	if headEnd > 0 && o.head[headEnd-1] != '\n' {
		d.note = "\n" + d.note
	}
	return strings.ToValidUTF8(string(o.head[:headEnd]), "\uFFFD") + d.note + strings.ToValidUTF8(tail[tailStart:], "\uFFFD")
}

// formatBytes formats n bytes for people: "512 B", "1.5 KB", "10.0 MB".
func formatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %cB", float64(n)/float64(div), "KMGTPE"[exp])
}
