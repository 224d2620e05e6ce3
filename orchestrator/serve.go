package orchestrator

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// DefaultMaxLineBytes is the longest protocol line [Orchestrator.Serve]
// accepts by default, in bytes, not counting the newline.
const DefaultMaxLineBytes = 16 << 20

// ErrShutdown marks the error [Orchestrator.Serve] returns when the input
// ended normally but some environment failed to shut down. The protocol still
// ended cleanly; `unfold serve` reports the failures on stderr and exits 0.
var ErrShutdown = errors.New("orchestrator: shutdown")

// Serve speaks the orchestrator protocol: it reads one JSON object per line
// from r and writes one per line to w, until r ends or ctx is done.
//
// A command line, {"type":"command","environment":"bash","command":"ls"} with
// an optional "timeout" in seconds, is answered with
// {"type":"response","response":{"output":...,"success":...},"screen":{...}}:
// the command's response and every screen after it. A line the server cannot
// use (not UTF-8, not JSON, not an object, a missing or mistyped field, an
// unknown type, an empty line, a line over the size limit) is answered with
// {"type":"error","message":...}, and serving goes on. A line over the limit
// is read and discarded in pieces, never held in memory whole.
//
// When r ends, or ctx is done, Serve closes the orchestrator, shutting down
// every environment, and returns. At the end of input it returns nil, or an
// error wrapping [ErrShutdown] and the environments' errors when some failed
// to shut down. When ctx is done it returns ctx's error. A read or write
// failure is returned too, after the shutdown.
//
// r is read in its own goroutine so that ctx can stop Serve while a read
// blocks; if r blocks forever that goroutine outlives Serve until r returns.
func (o *Orchestrator) Serve(ctx context.Context, r io.Reader, w io.Writer) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)

	lines := make(chan readLine)
	next := make(chan struct{})
	done := make(chan struct{})
	defer close(done)
	go func() {
		lr := &lineReader{br: bufio.NewReaderSize(r, 64<<10), limit: o.maxLine}
		for {
			l := lr.next()
			select {
			case lines <- l:
			case <-done:
				return
			}
			if l.err != nil {
				return
			}
			select {
			case <-next:
			case <-done:
				return
			}
		}
	}()

	var serveErr error
loop:
	for {
		select {
		case <-ctx.Done():
			serveErr = ctx.Err()
			break loop
		case l := <-lines:
			if l.err == io.EOF {
				break loop
			}
			if l.err != nil {
				serveErr = fmt.Errorf("orchestrator: serve: read: %w", l.err)
				break loop
			}
			msg := o.handleLine(ctx, l)
			next <- struct{}{} // l.data is no longer used
			if err := enc.Encode(msg); err != nil {
				serveErr = fmt.Errorf("orchestrator: serve: encode: %w", err)
				break loop
			}
			if err := bw.Flush(); err != nil {
				serveErr = fmt.Errorf("orchestrator: serve: write: %w", err)
				break loop
			}
		}
	}
	closeErr := o.Close()
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

// handleLine answers one line.
func (o *Orchestrator) handleLine(ctx context.Context, l readLine) any {
	if l.tooLong > 0 {
		return errorMessage{Type: "error", Message: fmt.Sprintf("%sthe line has %d bytes, more than the limit of %d; it was discarded. Send shorter commands (write long content to a file first).", parsePrefix, l.tooLong, o.maxLine)}
	}
	m, msg := decodeMessage(l.data)
	if msg != "" {
		return errorMessage{Type: "error", Message: msg}
	}
	if m.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, m.Timeout)
		defer cancel()
	}
	res := o.Execute(ctx, m.Environment, m.Command)
	return responseMessage{Type: "response", Response: res.Response, Screen: res.Screens}
}

// readLine is one line of input.
type readLine struct {
	data    []byte // the line without its newline; valid until the next read
	tooLong int64  // when over the limit: the line's length, and data is nil
	err     error  // io.EOF at the end of input
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
