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
)

// smallOutput is how much output a sink keeps in a plain slice before it
// moves to an [envs.Output], whose buffers are allocated up front: most
// commands print little, and allocating the full limit for each would cost
// more than running them.
const smallOutput = 64 << 10

// sink collects the output of one command. Its fields are guarded by the
// stream's mutex while the stream owns it, and owned by the command after
// the hand-off.
type sink struct {
	limit int
	spool *envs.Spool
	small []byte
	big   *envs.Output
}

func newSink(limit int, spool *envs.Spool) *sink { return &sink{limit: limit, spool: spool} }

func (s *sink) write(p []byte) {
	if s.big == nil {
		if len(s.small)+len(p) <= min(smallOutput, s.limit) {
			s.small = append(s.small, p...)
			return
		}
		s.big = s.spool.Output(s.limit)
		_, _ = s.big.Write(s.small)
		s.small = nil
	}
	_, _ = s.big.Write(p)
}

// empty reports whether nothing was written to s.
func (s *sink) empty() bool { return s.big == nil && len(s.small) == 0 }

// String returns the output as valid UTF-8, with the notice of
// [envs.Output] when some was dropped.
func (s *sink) String() string {
	if s.big != nil {
		return s.big.String()
	}
	return strings.ToValidUTF8(string(s.small), "\uFFFD")
}

// stream drains the pipe the interpreter's fds 1 and 2 write to, into the
// current sink. The Go side keeps its own copy of the pipe's write end: to
// find where a command's output ends, it writes a random marker after the
// driver has replied. Everything the interpreter wrote before replying is
// in the pipe ahead of the marker, and code cannot forge a marker it never
// sees. Output written between commands (background threads, subprocesses)
// is kept for the next command.
type stream struct {
	r, w  *os.File
	limit int
	spool *envs.Spool // where sinks keep the whole output past the limit

	mu     sync.Mutex // guards cur and marker
	cur    *sink
	marker []byte // the marker being waited for; nil when none

	handoff chan *sink    // the sink that ended at the marker
	done    chan struct{} // closed when the reader goroutine returns
	changed chan struct{} // capacity 1: output arrived since it was last taken
}

func newStream(r, w *os.File, limit int, spool *envs.Spool) *stream {
	s := &stream{r: r, w: w, limit: limit, spool: spool, cur: newSink(limit, spool),
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
// returns the bytes it kept back because they may be the marker's start.
func (s *stream) consume(data []byte) []byte {
	for len(s.marker) > 0 {
		if i := bytes.Index(data, s.marker); i >= 0 {
			s.cur.write(data[:i])
			s.handoff <- s.cur // capacity 1, and one marker at a time
			data = data[i+len(s.marker):]
			s.cur, s.marker = newSink(s.limit, s.spool), nil
			break
		}
		k := partialSuffix(data, s.marker)
		s.cur.write(data[:len(data)-k])
		return data[len(data)-k:]
	}
	s.cur.write(data)
	return nil
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

// idle reports whether nothing has been written since the last sync, as
// far as the reader has read.
func (s *stream) idle() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur.empty()
}

// errStreamClosed is returned by sync when the stream was closed first.
var errStreamClosed = errors.New("output stream closed")

// sync returns everything written to the pipe so far, ending the current
// sink. Only one sync may run at a time.
func (s *stream) sync() (*sink, error) {
	var raw [12]byte
	_, _ = rand.Read(raw[:])
	marker := fmt.Appendf(nil, "\x00\x1bunfold-sync-%s\x00", hex.EncodeToString(raw[:]))
	s.mu.Lock()
	s.marker = marker
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
	s.cur, s.marker = newSink(s.limit, s.spool), nil
	return out
}

// close closes both ends of the pipe and waits for the reader goroutine.
func (s *stream) close() {
	_ = s.r.Close()
	_ = s.w.Close()
	<-s.done
}
