package envs

import (
	"fmt"
	"strings"
	"sync"
)

// DefaultOutputLimit is how many bytes of a command's output an environment
// keeps by default: 10 MB, half from the start and half from the end.
const DefaultOutputLimit = 10 << 20

// Output collects a command's output in bounded memory: the first half of
// its limit from the start of the output, the second half as a ring of the
// most recent bytes, and a count of what fell in between. It is safe for
// concurrent use; the zero value is not usable, create one with [NewOutput].
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

// Write keeps what fits and counts the rest. It never fails.
func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := len(p)
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

// Total returns how many bytes were written.
func (o *Output) Total() int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.total
}

// Dropped returns how many bytes were written but not kept.
func (o *Output) Dropped() int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.total - int64(len(o.head)+len(o.tail))
}

// String returns the kept output as valid UTF-8 (invalid bytes become
// U+FFFD, one per run of them), with a line saying how much was dropped between head and tail.
func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.total == 0 {
		return ""
	}
	var b strings.Builder
	b.Grow(len(o.head) + len(o.tail) + 100)
	b.Write(o.head)
	if dropped := o.total - int64(len(o.head)+len(o.tail)); dropped > 0 {
		if len(o.head) > 0 && o.head[len(o.head)-1] != '\n' {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "[... %s of output dropped; showing the first %s and the last %s ...]\n",
			formatBytes(dropped), formatBytes(int64(len(o.head))), formatBytes(int64(len(o.tail))))
	}
	if o.full {
		b.Write(o.tail[o.start:])
		b.Write(o.tail[:o.start])
	} else {
		b.Write(o.tail)
	}
	return strings.ToValidUTF8(b.String(), "\uFFFD")
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
