package python

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/internal/term"
	"github.com/unfold-dev/unfold/internal/utf8cut"
)

// smallOutput is how much output a sink keeps in a plain slice before it
// moves to an [envs.Output], whose buffers are allocated up front: most
// commands print little, and allocating the full limit for each would cost
// more than running them.
const smallOutput = 64 << 10

// backgroundLimit bounds what a response shows of the output written
// between commands (background threads, processes a cell started), head
// and tail, as bash's environment does; past it the whole of that output
// goes to a spool file like a command's. A thread that prints on cannot
// push the next command's own output out of the response.
const backgroundLimit = 8 << 10

// sink collects the output of one command as a terminal would show it:
// escape sequences dropped, carriage returns and backspaces applied (see
// [term.Filter]), so a progress bar comes back as its final state, and the
// spool file holds the same text as the response. Its fields are guarded
// by the stream's mutex while the stream owns it, and owned by the command
// after the hand-off.
type sink struct {
	f    *term.Filter // what is written goes through it to text
	text sinkText
}

// sinkText holds what the filter passes on.
type sinkText struct {
	limit int
	spool *envs.Spool
	small []byte
	big   *envs.Output
}

func newSink(limit int, spool *envs.Spool) *sink {
	s := &sink{text: sinkText{limit: limit, spool: spool}}
	s.f = term.NewFilter(&s.text)
	return s
}

func (s *sink) write(p []byte) { _, _ = s.f.Write(p) }

// end passes on the unfinished line: the output is complete.
func (s *sink) end() { _ = s.f.Flush() }

// Write keeps p. It never fails.
func (t *sinkText) Write(p []byte) (int, error) {
	if t.big == nil {
		if len(t.small)+len(p) <= min(smallOutput, t.limit) {
			t.small = append(t.small, p...)
			return len(p), nil
		}
		t.big = t.spool.Output(t.limit)
		_, _ = t.big.Write(t.small)
		t.small = nil
	}
	return t.big.Write(p)
}

// empty reports whether nothing was written to s that a terminal would
// show.
func (s *sink) empty() bool {
	return s.text.big == nil && len(s.text.small) == 0 && len(s.f.Line()) == 0
}

// String returns the output as valid UTF-8, with the notice of
// [envs.Output] when some was dropped. Call it after end.
func (s *sink) String() string {
	if s.text.big != nil {
		return s.text.big.String()
	}
	return strings.ToValidUTF8(string(s.text.small), "\uFFFD")
}

// stream drains the pipe the interpreter's fds 1 and 2 write to, into the
// current sink. The Go side keeps its own copy of the pipe's write end: to
// find where a command's output ends, it writes a random marker after the
// driver has replied. Everything the interpreter wrote before replying is
// in the pipe ahead of the marker, and code cannot forge a marker it never
// sees. Output written between commands (background threads, subprocesses)
// is kept for the next command, within [backgroundLimit].
type stream struct {
	r, w  *os.File
	limit int
	spool *envs.Spool // where sinks keep the whole output past the limit

	mu     sync.Mutex // guards cur, marker, next and on
	cur    *sink
	marker []byte // the marker being waited for; nil when none
	next   int    // the limit of the sink that follows the marker
	on     bool   // the command runs on past the marker

	handoff chan *sink    // the sink that ended at the marker
	done    chan struct{} // closed when the reader goroutine returns
	changed chan struct{} // capacity 1: output arrived since it was last taken
}

func newStream(r, w *os.File, limit int, spool *envs.Spool) *stream {
	s := &stream{r: r, w: w, limit: limit, spool: spool, cur: newSink(backgroundLimit, spool),
		handoff: make(chan *sink, 1), done: make(chan struct{}), changed: make(chan struct{}, 1)}
	go s.read()
	return s
}

func (s *stream) read() {
	defer close(s.done)
	buf := make([]byte, 64<<10)
	carry := 0 // bytes at the start of buf that may begin a marker
	for {
		n, err := s.r.Read(buf[carry:])
		if n > 0 {
			data := buf[:carry+n]
			s.mu.Lock()
			data = s.consume(data)
			s.mu.Unlock()
			carry = copy(buf, data)
			select {
			case s.changed <- struct{}{}:
			default:
			}
		}
		if err != nil {
			return
		}
	}
}

// consume writes data to the current sink up to the marker, if any, and
// returns the bytes it kept back because they may be the marker's start, or
// begin a UTF-8 sequence whose other bytes are still to come. A sequence
// cut by a marker while the command runs on goes to the next sink whole
// (the marker lands between the bytes of a character written in two
// pieces), so neither response shows it as U+FFFD.
func (s *stream) consume(data []byte) []byte {
	if len(s.marker) > 0 {
		i := bytes.Index(data, s.marker)
		if i < 0 {
			k := max(partialSuffix(data, s.marker), utf8cut.Partial(data))
			s.cur.write(data[:len(data)-k])
			return data[len(data)-k:]
		}
		k := 0
		if s.on {
			k = utf8cut.Partial(data[:i])
		}
		s.cur.write(data[:i-k])
		s.cur.end()
		s.handoff <- s.cur // capacity 1, and one marker at a time
		held := data[i-k : i]
		data = data[i+len(s.marker):]
		s.cur, s.marker = newSink(s.next, s.spool), nil
		s.cur.write(held)
	}
	k := utf8cut.Partial(data)
	s.cur.write(data[:len(data)-k])
	return data[len(data)-k:]
}

// partialSuffix returns the length of the longest proper prefix of marker
// that data ends with.
func partialSuffix(data, marker []byte) int {
	for k := min(len(marker)-1, len(data)); k > 0; k-- {
		if bytes.HasSuffix(data, marker[:k]) {
			return k
		}
	}
	return 0
}

// between returns what was written since the last sync, as far as the
// reader has read, or nil when that is nothing a terminal would show.
// Output from then on goes to a sink for a command, of the full limit.
func (s *stream) between() *sink {
	s.mu.Lock()
	if s.cur.empty() {
		s.cur.text.limit = s.limit
		s.mu.Unlock()
		return nil
	}
	s.mu.Unlock()
	out, _ := s.sync(s.limit, false)
	return out
}

// errStreamClosed is returned by sync when the stream was closed first.
var errStreamClosed = errors.New("output stream closed")

// sync returns everything written to the pipe so far, ending the current
// sink; the next one keeps at most next bytes in memory. on says the
// command runs on, so a character cut at the end goes to the next sink.
// Only one sync may run at a time.
func (s *stream) sync(next int, on bool) (*sink, error) {
	var raw [12]byte
	_, _ = rand.Read(raw[:])
	marker := fmt.Appendf(nil, "\x00\x1bunfold-sync-%s\x00", hex.EncodeToString(raw[:]))
	s.mu.Lock()
	s.marker, s.next, s.on = marker, next, on
	s.mu.Unlock()
	if _, err := s.w.Write(marker); err != nil {
		return s.abandon(), fmt.Errorf("python: output marker: %w", err)
	}
	select {
	case out := <-s.handoff:
		return out, nil
	case <-s.done:
		return s.abandon(), errStreamClosed
	}
}

// abandon takes the current sink without waiting for a marker.
func (s *stream) abandon() *sink {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case out := <-s.handoff:
		return out
	default:
	}
	out := s.cur
	out.end()
	s.cur, s.marker = newSink(s.next, s.spool), nil
	return out
}

// close closes both ends of the pipe and waits for the reader goroutine.
func (s *stream) close() {
	_ = s.r.Close()
	_ = s.w.Close()
	<-s.done
}
