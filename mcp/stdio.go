package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Defaults of [StdioTransport].
const (
	// DefaultMaxFrameBytes bounds one JSON-RPC line read when
	// MaxFrameBytes is 0.
	DefaultMaxFrameBytes = 16 << 20
	// DefaultMaxInFlight bounds the requests read and not yet answered
	// when MaxInFlight is 0.
	DefaultMaxInFlight = 256
)

// StdioTransport serves one session over newline-delimited JSON-RPC on a
// reader and a writer (a process's stdin and stdout), like the SDK's
// IOTransport, except that a line it cannot use does not end the session:
// a line that is not JSON is answered with a JSON-RPC parse error, one that
// is not a JSON-RPC message with an invalid-request error (carrying its id
// when it has one), and a line longer than MaxFrameBytes is skipped to its
// end and answered with an invalid-request error. The session, its
// environments and its state go on.
//
// Reading applies back-pressure: once MaxInFlight requests were read whose
// answers are not written yet, no further line is read until one is. A
// client that sends requests and stops reading the answers thus fills the
// pipe and waits, instead of making the server queue without bound. A line
// behind the bound (a notification such as a cancellation too) waits as
// well.
type StdioTransport struct {
	Reader io.ReadCloser
	Writer io.WriteCloser
	// MaxFrameBytes bounds the bytes of one line; 0 means
	// DefaultMaxFrameBytes. Past it, the line is read to its end in
	// pieces and dropped: memory stays bounded.
	MaxFrameBytes int
	// MaxInFlight bounds the requests read and not answered yet; 0 means
	// DefaultMaxInFlight.
	MaxInFlight int
}

var _ sdk.Transport = (*StdioTransport)(nil)

// Connect implements sdk.Transport.
func (t *StdioTransport) Connect(context.Context) (sdk.Connection, error) {
	limit := t.MaxFrameBytes
	if limit <= 0 {
		limit = DefaultMaxFrameBytes
	}
	maxInFlight := t.MaxInFlight
	if maxInFlight <= 0 {
		maxInFlight = DefaultMaxInFlight
	}
	c := &stdioConn{
		r:           t.Reader,
		w:           t.Writer,
		limit:       limit,
		maxInFlight: maxInFlight,
		frames:      make(chan frame),
		room:        make(chan struct{}, 1),
		done:        make(chan struct{}),
	}
	go c.readLoop()
	return c, nil
}

// frame is one line read, or why reading stopped.
type frame struct {
	line     []byte
	tooLarge int // the line's length when it was over the limit (and dropped)
	err      error
}

// stdioConn is the connection of a StdioTransport.
type stdioConn struct {
	r           io.ReadCloser
	w           io.WriteCloser
	limit       int
	maxInFlight int

	frames chan frame // from readLoop, the one goroutine that reads r
	wmu    sync.Mutex // serializes writes to w

	// fmu guards inFlight, the requests Read returned whose responses
	// Write has not written yet.
	fmu      sync.Mutex
	inFlight int
	// room receives a token when a response was written, waking a Read
	// that waits for inFlight to go below maxInFlight.
	room chan struct{}

	closeOnce sync.Once
	closeErr  error
	done      chan struct{} // closed by Close
}

// readLoop reads lines until the reader fails or the connection closes.
func (c *stdioConn) readLoop() {
	br := bufio.NewReaderSize(c.r, 64<<10)
	for {
		f := c.readFrame(br)
		select {
		case c.frames <- f:
		case <-c.done:
			return
		}
		if f.err != nil {
			return
		}
	}
}

// readFrame reads one line, without its end, keeping at most limit bytes.
func (c *stdioConn) readFrame(br *bufio.Reader) frame {
	var buf []byte
	n := 0
	for {
		chunk, err := br.ReadSlice('\n')
		n += len(chunk)
		if n <= c.limit+1 { // the newline does not count
			buf = append(buf, chunk...)
		} else {
			buf = nil
		}
		switch {
		case err == nil:
			if n > c.limit+1 {
				return frame{tooLarge: n - 1}
			}
			return frame{line: bytes.TrimRight(buf, "\r\n")}
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case len(buf) > 0 && errors.Is(err, io.EOF):
			// A last line without a newline is still a line.
			return frame{line: buf}
		default:
			return frame{err: err}
		}
	}
}

// Read returns the next message, answering the lines that are not one.
// While maxInFlight requests wait for their responses, it reads nothing.
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		if err := c.waitRoom(ctx); err != nil {
			return nil, err
		}
		var f frame
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.done:
			return nil, io.EOF
		case f = <-c.frames:
		}
		switch {
		case f.err != nil:
			return nil, f.err
		case f.tooLarge > 0:
			c.reject(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("the message is %d bytes, more than the limit of %d; it was dropped", f.tooLarge, c.limit))
			continue
		case len(bytes.TrimSpace(f.line)) == 0:
			continue
		}
		msg, err := jsonrpc.DecodeMessage(f.line)
		if err == nil {
			if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
				c.fmu.Lock()
				c.inFlight++
				c.fmu.Unlock()
			}
			return msg, nil
		}
		c.rejectLine(f.line, err)
	}
}

// waitRoom waits until fewer than maxInFlight requests wait for their
// responses.
func (c *stdioConn) waitRoom(ctx context.Context) error {
	for {
		c.fmu.Lock()
		full := c.inFlight >= c.maxInFlight
		c.fmu.Unlock()
		if !full {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-c.done:
			return io.EOF
		case <-c.room:
		}
	}
}

// answered counts a response written (or that failed to be), making room
// for the next request.
func (c *stdioConn) answered() {
	c.fmu.Lock()
	if c.inFlight > 0 {
		c.inFlight--
	}
	c.fmu.Unlock()
	select {
	case c.room <- struct{}{}:
	default:
	}
}

// rejectLine answers a line that is not a JSON-RPC message.
func (c *stdioConn) rejectLine(line []byte, err error) {
	if !json.Valid(line) {
		c.reject(nil, jsonrpc.CodeParseError, "parse error: the line is not JSON; send one JSON-RPC message per line")
		return
	}
	var probe struct {
		ID json.RawMessage `json:"id"`
	}
	if line[0] == '[' {
		c.reject(nil, jsonrpc.CodeInvalidRequest, "invalid request: batches are not supported; send one message per line")
		return
	}
	_ = json.Unmarshal(line, &probe)
	id := probe.ID
	if !validID(id) {
		id = nil
	}
	c.reject(id, jsonrpc.CodeInvalidRequest, "invalid request: "+err.Error())
}

// validID reports whether raw is an id a response may echo: a string or a
// number.
func validID(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return false
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	switch v.(type) {
	case string, float64:
		return true
	}
	return false
}

// reject writes an error response with id (null when nil).
func (c *stdioConn) reject(id json.RawMessage, code int, message string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	resp := struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id}
	resp.Error.Code, resp.Error.Message = code, message
	data, err := json.Marshal(resp)
	if err != nil {
		return
	}
	_ = c.write(append(data, '\n'))
}

// Write implements sdk.Connection. A response makes room for the next
// request once written (see Read).
func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if _, ok := msg.(*jsonrpc.Response); ok {
		defer c.answered()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("mcp: stdio: encode: %w", err)
	}
	return c.write(append(data, '\n'))
}

func (c *stdioConn) write(data []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	select {
	case <-c.done:
		return sdk.ErrConnectionClosed
	default:
	}
	_, err := c.w.Write(data)
	return err
}

// Close implements sdk.Connection; it closes the reader and the writer once.
func (c *stdioConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.done)
		c.closeErr = errors.Join(c.r.Close(), c.w.Close())
	})
	return c.closeErr
}

// SessionID implements sdk.Connection: stdio has no session id.
func (c *stdioConn) SessionID() string { return "" }
