package orchestrator

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/unfold-dev/unfold/envs"
)

// DefaultMaxLineBytes is the longest protocol line [Orchestrator.Serve]
// accepts by default, in bytes, not counting the newline.
const DefaultMaxLineBytes = 16 << 20

// ErrShutdown marks the error [Orchestrator.Serve] returns when the input
// ended normally but some environment failed to shut down. The protocol still
// ended cleanly; `unfold serve` reports the failures on stderr and exits 0.
var ErrShutdown = errors.New("orchestrator: shutdown")

// maxPendingBytes bounds the bytes of command lines read ahead and not run
// yet; past it Serve reads no more until commands run. One line is always
// let through, however long.
const maxPendingBytes = 64 << 20

// Serve speaks the orchestrator protocol: it reads one JSON object per line
// from r and writes one per line to w, until r ends or ctx is done.
//
// A command line, {"type":"command","environment":"bash","command":"ls"}
// with the optional fields "timeout", "hard", "quiet", "budget" and "id"
// (docs/serve-protocol.md), is answered with
// {"type":"response","response":{"output":...,"success":...},"screen":{...}}:
// the command's response and every screen after it. A line the server cannot
// use (not UTF-8, not JSON, not an object, a missing or mistyped field, an
// unknown type, an empty line, a line over the size limit) is answered with
// {"type":"error","message":...}, and serving goes on. A line over the limit
// is read and discarded in pieces, never held in memory whole.
//
// Lines are read as they come, so a command's timeout counts from its
// arrival. Commands without an id run one at a time, in order, and are
// answered in order, as are the error lines. A command with an id runs as
// soon as the earlier commands to its environment are done, alongside
// commands to other environments, and its response, which carries the id,
// is written as soon as it is ready: a long command in one environment
// never holds up another's.
//
// When r ends, the commands that run are interrupted and those that wait
// are answered as not run (a client that ends its input is done with
// them), their answers written, saying that the input ended and naming
// --batch; with [WithBatch] they all run to their end instead. Then, as when ctx is done, Serve closes the orchestrator,
// shutting down every environment, and returns. At the end of input it returns nil, or an
// error wrapping [ErrShutdown] and the environments' errors when some failed
// to shut down. When ctx is done it returns ctx's error. A read or write
// failure is returned too, after the shutdown.
//
// r is read in its own goroutine so that ctx can stop Serve while a read
// blocks; if r blocks forever that goroutine outlives Serve until r returns.
func (o *Orchestrator) Serve(ctx context.Context, r io.Reader, w io.Writer, opts ...ServeOption) error {
	var so serveOptions
	for _, opt := range opts {
		opt(&so)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// work is what commands run under: the end of input cancels it, and
	// their answers, which name it, are still written.
	work, stopWork := context.WithCancelCause(ctx)
	defer stopWork(nil)
	sv := &server{o: o, ctx: ctx, work: work, results: make(chan any, 16), lanes: map[string]chan job{}}
	sv.room = sync.NewCond(&sv.mu)
	writeErr := make(chan error, 1) // gets the writer's first error, or nil at its end
	go sv.write(w, writeErr)

	lines := make(chan readLine)
	done := make(chan struct{})
	defer close(done)
	go func() {
		lr := &lineReader{br: bufio.NewReaderSize(r, 64<<10), limit: o.maxLine}
		for {
			l := lr.next()
			l.arrived = time.Now()
			if l.data != nil {
				l.data = bytes.Clone(l.data)
			}
			select {
			case lines <- l:
			case <-done:
				return
			}
			if l.err != nil {
				return
			}
		}
	}()
	sv.seq = sv.lane()

	var serveErr error
loop:
	for {
		select {
		case <-ctx.Done():
			serveErr = ctx.Err()
			break loop
		case err := <-writeErr:
			serveErr = err
			writeErr = nil
			break loop
		case l := <-lines:
			if l.err == io.EOF {
				break loop
			}
			if l.err != nil {
				serveErr = fmt.Errorf("orchestrator: serve: read: %w", l.err)
				break loop
			}
			sv.dispatch(l)
		}
	}
	var closeErr error
	if serveErr != nil {
		// Stop what runs, first: the lanes then end at once.
		cancel()
		closeErr = o.Close()
		sv.finish()
	} else {
		// The end of input: what runs is interrupted and what waits is
		// answered as not run (a batch runs to its end), then everything
		// shuts down.
		if !so.batch {
			stopWork(errInputEnded)
		}
		sv.finish()
		closeErr = o.Close()
	}
	if writeErr != nil {
		if err := <-writeErr; err != nil && serveErr == nil {
			serveErr = err
		}
	}
	switch {
	case serveErr != nil && closeErr != nil:
		return errors.Join(serveErr, closeErr)
	case serveErr != nil:
		return serveErr
	case closeErr != nil:
		return fmt.Errorf("%w: %w", ErrShutdown, closeErr)
	}
	return nil
}

// errInputEnded is the cause the commands that run or wait at the end of
// input are stopped with; their answers say so ([atEnd]).
var errInputEnded = errors.New("orchestrator: serve: the input ended")

// The answers of commands the end of input stopped: a client that pipes
// its commands in and closes its input at once learns why, and what to do.
const (
	notRunAtEnd  = "[Not run: the input ended before it started. Keep the input open until the answer comes, or run with --batch.]"
	stoppedAtEnd = "[Stopped: the input ended while it ran. Keep the input open until the answer comes, or run with --batch.]"
)

// atEnd words resp, the answer of a command that ran under ctx, after the
// end of input when that stopped it: not run, or stopped while it ran.
func atEnd(ctx context.Context, resp envs.Response) envs.Response {
	if resp.Success || ctx.Err() == nil || !errors.Is(context.Cause(ctx), errInputEnded) {
		return resp
	}
	if resp.Output == envs.NotRun(context.Canceled).Output {
		return envs.Response{Output: notRunAtEnd}
	}
	resp.Output = strings.TrimSuffix(resp.Output+"\n"+stoppedAtEnd, "\n")
	return resp
}

// ServeOption configures [Orchestrator.Serve].
type ServeOption func(*serveOptions)

type serveOptions struct {
	batch bool
}

// WithBatch makes the end of input wait for the commands already read to
// run, each to its end, before the shutdown: the input is a batch of
// commands, not a client that went away.
func WithBatch() ServeOption {
	return func(o *serveOptions) { o.batch = true }
}

// server is one run of Serve: the lanes commands wait in, and the results
// on their way to the writer.
type server struct {
	o       *Orchestrator
	ctx     context.Context     // the server's: writes stop when it is done
	work    context.Context     // the commands': done at the end of input too
	results chan any            // messages to write, in the order to write them
	seq     chan job            // commands without an id, and error lines: one at a time, in order
	lanes   map[string]chan job // commands with an id, by environment; used by dispatch only
	wg      sync.WaitGroup      // the lanes' goroutines

	mu      sync.Mutex // guards pending
	pending int        // bytes of lines read and not run yet
	room    *sync.Cond // signalled when pending shrinks
}

// job is a line for a lane: a command, or the error line answering a line.
type job struct {
	msg     commandMessage
	answer  any // the message to write instead of running msg, when set
	arrived time.Time
	size    int
	// claim is taken by whichever answers the command first: its lane, or,
	// for a command with an id and a timeout, the timer that sends it
	// back at its deadline when it is still waiting behind others.
	claim *atomic.Bool
	timer *time.Timer
}

// laneDepth is how many lines a lane holds before dispatch waits.
const laneDepth = 64

// lane starts a goroutine that runs the jobs sent to the channel it
// returns, one at a time.
func (sv *server) lane() chan job {
	ch := make(chan job, laneDepth)
	sv.wg.Go(func() {
		for j := range ch {
			sv.release(j.size)
			if j.claim != nil {
				won := j.claim.CompareAndSwap(false, true)
				if j.timer.Stop() {
					sv.wg.Done()
				}
				if !won {
					continue // sent back at its deadline already
				}
			}
			msg := j.answer
			if msg == nil {
				msg = sv.run(j.msg, j.arrived)
			}
			select {
			case sv.results <- msg:
			case <-sv.ctx.Done():
			}
		}
	})
	return ch
}

// run runs the command m, which arrived at arrived, and returns its
// response line.
func (sv *server) run(m commandMessage, arrived time.Time) responseMessage {
	res := sv.o.Run(sv.work, Command{
		Environment: m.Environment, Text: m.Command,
		Timeout: m.Timeout, Hard: m.Hard, Quiet: m.Quiet, Budget: m.Budget,
		Arrived: arrived,
	})
	return responseMessage{Type: "response", ID: rawID(m.ID), Response: res.Response, Screen: res.Screens}
}

// dispatch sends the line to the lane that answers it.
func (sv *server) dispatch(l readLine) {
	j := job{arrived: l.arrived, size: len(l.data)}
	var msg string
	if l.tooLong > 0 {
		msg = fmt.Sprintf("%sthe line has %d bytes, more than the limit of %d; it was discarded. Send shorter commands (write long content to a file first).", parsePrefix, l.tooLong, sv.o.maxLine)
	} else {
		j.msg, msg = decodeMessage(l.data)
	}
	switch {
	case msg != "":
		j.answer = errorMessage{Type: "error", ID: rawID(messageID(l.data)), Message: msg}
		j.size = 0
	case j.msg.ID != "":
		// A spec file added since the last command declares an environment
		// that is not known yet: load it first, so that its command gets a
		// lane and does not run here, holding up every line after it.
		sv.o.ReloadSpecs()
		if _, ok := sv.o.Env(j.msg.Environment); !ok {
			// An unknown environment gets no lane: its answer is at hand.
			select {
			case sv.results <- sv.run(j.msg, j.arrived):
			case <-sv.ctx.Done():
			}
			return
		}
		ch := sv.lanes[j.msg.Environment]
		if ch == nil {
			ch = sv.lane()
			sv.lanes[j.msg.Environment] = ch
		}
		if j.msg.Timeout > 0 {
			sv.sendBackAt(&j)
		}
		sv.enqueue(ch, j)
		return
	}
	sv.enqueue(sv.seq, j)
}

// sendBackAt arms the timer that answers j, a command with an id, when
// its deadline passes while it still waits for its turn.
func (sv *server) sendBackAt(j *job) {
	claim, m := new(atomic.Bool), j.msg
	j.claim = claim
	sv.wg.Add(1)
	j.timer = time.AfterFunc(time.Until(j.arrived.Add(m.Timeout)), func() {
		defer sv.wg.Done()
		if !claim.CompareAndSwap(false, true) {
			return
		}
		why := envs.ErrBusy
		if m.Hard {
			why = context.DeadlineExceeded
		}
		msg := responseMessage{Type: "response", ID: rawID(m.ID), Response: envs.NotRun(why), Screen: sv.o.screensBy(time.Now().Add(screenFloor))}
		select {
		case sv.results <- msg:
		case <-sv.ctx.Done():
		}
	})
}

// enqueue waits until the lines read ahead leave room for j, then sends it
// to ch.
func (sv *server) enqueue(ch chan job, j job) {
	sv.mu.Lock()
	for sv.pending > 0 && sv.pending+j.size > maxPendingBytes && sv.ctx.Err() == nil {
		sv.room.Wait()
	}
	sv.pending += j.size
	sv.mu.Unlock()
	select {
	case ch <- j:
	case <-sv.ctx.Done():
		sv.release(j.size)
	}
}

// release gives back the room a line took.
func (sv *server) release(n int) {
	if n == 0 {
		return
	}
	sv.mu.Lock()
	sv.pending -= n
	sv.mu.Unlock()
	sv.room.Broadcast()
}

// finish closes the lanes, waits for them to run what they hold (only
// until the context ends), and then for the writer to get all.
func (sv *server) finish() {
	close(sv.seq)
	for _, ch := range sv.lanes {
		close(ch)
	}
	stop := context.AfterFunc(sv.ctx, func() {
		sv.mu.Lock()
		sv.room.Broadcast()
		sv.mu.Unlock()
	})
	sv.wg.Wait()
	stop()
	close(sv.results)
}

// write encodes results to w until they end. It sends its first error to
// failed at once and drops the results after it; with none, it sends nil
// at the end.
func (sv *server) write(w io.Writer, failed chan<- error) {
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	var err error
	for msg := range sv.results {
		if err != nil {
			continue
		}
		if e := enc.Encode(msg); e != nil {
			err = fmt.Errorf("orchestrator: serve: encode: %w", e)
		} else if len(sv.results) == 0 {
			// Flushed once the queue is drained.
			if e := bw.Flush(); e != nil {
				err = fmt.Errorf("orchestrator: serve: write: %w", e)
			}
		}
		if err != nil {
			failed <- err
		}
	}
	if err == nil {
		if e := bw.Flush(); e != nil {
			err = fmt.Errorf("orchestrator: serve: write: %w", e)
		}
		failed <- err
	}
}

// readLine is one line of input.
type readLine struct {
	data    []byte    // the line without its newline; valid until the next read
	tooLong int64     // when over the limit: the line's length, and data is nil
	err     error     // io.EOF at the end of input
	arrived time.Time // when it was read
}

// lineReader reads lines of at most limit bytes, reusing one buffer. A longer
// line is consumed in bufio-sized pieces and only counted.
type lineReader struct {
	br    *bufio.Reader
	limit int
	buf   []byte
}

// shrinkAbove is the buffer capacity past which the buffer is dropped after a
// line, so one big line does not pin its memory for the rest of the session.
const shrinkAbove = 1 << 20

func (lr *lineReader) next() readLine {
	if cap(lr.buf) > shrinkAbove {
		lr.buf = nil
	}
	lr.buf = lr.buf[:0]
	var total int64
	over := false
	for {
		chunk, err := lr.br.ReadSlice('\n')
		total += int64(len(chunk))
		if !over {
			// Room for the line plus "\r\n".
			if need := len(lr.buf) + len(chunk); need > lr.limit+2 {
				over = true
				lr.buf = lr.buf[:0]
			} else {
				lr.grow(need)
				lr.buf = append(lr.buf, chunk...)
			}
		}
		switch err {
		case bufio.ErrBufferFull:
			continue
		case nil, io.EOF:
			if err == io.EOF && total == 0 {
				return readLine{err: io.EOF}
			}
			if over {
				return readLine{tooLong: total - trailingNewline(chunk)}
			}
			data := bytes.TrimSuffix(lr.buf, []byte("\n"))
			data = bytes.TrimSuffix(data, []byte("\r"))
			if len(data) > lr.limit {
				return readLine{tooLong: int64(len(data))}
			}
			return readLine{data: data}
		default:
			return readLine{err: err}
		}
	}
}

// grow makes room for need bytes, doubling but never past the limit, so a
// line near the limit allocates about twice its size in all, not the
// several times that append's gentler growth of large slices would.
func (lr *lineReader) grow(need int) {
	if need <= cap(lr.buf) {
		return
	}
	n := min(max(2*cap(lr.buf), need, 4<<10), lr.limit+2)
	nb := make([]byte, len(lr.buf), n)
	copy(nb, lr.buf)
	lr.buf = nb
}

// trailingNewline counts the newline bytes ending the last chunk of a line.
func trailingNewline(chunk []byte) int64 {
	switch {
	case bytes.HasSuffix(chunk, []byte("\r\n")):
		return 2
	case bytes.HasSuffix(chunk, []byte("\n")):
		return 1
	}
	return 0
}
