package transport

import (
	"errors"
	"io"
)

// Events reads an event stream (text/event-stream), one event at a time.
type Events struct {
	r   io.Reader
	buf []byte // read, not yet scanned past
	sc  eventScanner
	err error // what the last read returned
	// empty counts the reads in a row that returned nothing and no error.
	empty int
}

// maxEmptyReads is how many reads in a row may return nothing and no
// error before the stream is taken as broken (io.ErrNoProgress), as
// bufio takes it.
const maxEmptyReads = 100

// NewEvents returns a reader of the event stream r.
func NewEvents(r io.Reader) *Events { return &Events{r: r} }

// Next returns the next event: its name ("" when it has no event field)
// and its data, its data lines joined by "\n"; io.EOF after the last. A
// stream that ends inside an event gives that event, as far as its
// lines are whole, before io.EOF. A byte order mark the stream begins
// with is dropped. An error reading the stream is returned as it came;
// an event over MaxEventBytes is an error.
func (e *Events) Next() (name string, data []byte, err error) {
	for {
		if name, data, ok := e.sc.next(e.buf); ok {
			return name, data, nil
		}
		if e.err != nil {
			if errors.Is(e.err, io.EOF) {
				if name, data, ok := e.sc.flush(); ok {
					return name, data, nil
				}
			}
			return "", nil, e.err
		}
		// Drop what was scanned, then read on.
		if e.sc.pos > 0 {
			n := copy(e.buf, e.buf[e.sc.pos:])
			e.buf, e.sc.pos = e.buf[:n], 0
		}
		if len(e.buf)+len(e.sc.data) > MaxEventBytes {
			e.err = errOverEvent
			continue
		}
		if cap(e.buf)-len(e.buf) < 4<<10 {
			e.buf = append(e.buf, make([]byte, 32<<10)...)[:len(e.buf)]
		}
		var read int
		read, e.err = e.r.Read(e.buf[len(e.buf):cap(e.buf)])
		e.buf = e.buf[:len(e.buf)+read]
		if read == 0 && e.err == nil {
			if e.empty++; e.empty == maxEmptyReads {
				e.err = io.ErrNoProgress
			}
		} else {
			e.empty = 0
		}
	}
}
