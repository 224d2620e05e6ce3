package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMaxFrameBytes bounds one JSON-RPC line read by a
// [StdioTransport] when MaxFrameBytes is 0.
const DefaultMaxFrameBytes = 16 << 20

// StdioTransport serves one session over newline-delimited JSON-RPC on a
// reader and a writer (a process's stdin and stdout), like the SDK's
// IOTransport, except that a line it cannot use does not end the session:
// a line that is not JSON is answered with a JSON-RPC parse error, one that
// is not a JSON-RPC message with an invalid-request error (carrying its id
// when it has one), and a line longer than MaxFrameBytes is skipped to its
// end and answered with an invalid-request error. The session, its
// environments and its state go on.
//
// Reading applies back-pressure to requests: once MaxInFlight requests
// were read whose answers are not written yet, or they hold an estimated
// MaxInFlightBytes (a resource read other than a screen's counts as the
// largest context file), the next request waits until one is answered.
// Meanwhile notifications (cancellations), answers to the server's
// requests and the end of input are still read and handed on, so a client
// can always cancel and close; a request cancelled while it waits is
// answered as cancelled at once and never runs. Up to MaxInFlight
// requests, of at most MaxFrameBytes in all, wait so; one more is answered
// at once with an error saying the server is busy. A client that sends
// requests and stops reading the answers thus fills the pipe and waits,
// instead of making the server queue without bound.
// subscriptions/listen requests, answered only when cancelled, are not
// counted and never wait: at most 16 may be open, and one more is refused
// at once. A request whose id is that of a request in flight is answered
// with an invalid-request error (the SDK would drop it unanswered), and
// so is one whose id is a number other than a whole one from -2^53 to
// 2^53, which the SDK would answer under another id (7.5 as 7); the error
// carries the id as written. A cancellation naming such an id is dropped.
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
	// MaxInFlightBytes bounds the memory they hold, as estimated from
	// their methods and sizes; 0 means DefaultMaxInFlightBytes. One
	// request alone is admitted whatever its estimate.
	MaxInFlightBytes int64
}

var _ sdk.Transport = (*StdioTransport)(nil)

// Connect implements sdk.Transport.
func (t *StdioTransport) Connect(context.Context) (sdk.Connection, error) {
	limit := t.MaxFrameBytes
	if limit <= 0 {
		limit = DefaultMaxFrameBytes
	}
	c := &stdioConn{
		r:       t.Reader,
		w:       t.Writer,
		limit:   limit,
		flight:  newInFlight(t.MaxInFlight, t.MaxInFlightBytes),
		tickets: make(map[jsonrpc.ID]ticket),
		frames:  make(chan frame),
		done:    make(chan struct{}),
	}
	go c.readLoop()
	return c, nil
}

// codeServerBusy is the JSON-RPC error code of a request refused because
// the session has too much in flight: one of the codes the specification
// leaves to servers (-32000 to -32099).
const codeServerBusy = -32000

// frame is one line read, or why reading stopped.
type frame struct {
	line     []byte
	tooLarge int // the line's length when it was over the limit (and dropped)
	err      error
}

// stdioConn is the connection of a StdioTransport.
type stdioConn struct {
	r      io.ReadCloser
	w      io.WriteCloser
	limit  int
	flight *inFlight

	frames chan frame // from readLoop, the one goroutine that reads r
	wmu    sync.Mutex // serializes writes to w

	// queue holds the requests that wait for room in flight, first
	// come first; queued is the bytes of their lines. Only Read, which
	// the SDK calls from one goroutine, uses them.
	queue  []waiter
	queued int

	// tmu guards tickets, the requests Read returned whose responses
	// Write has not started to write, by id. An id leaves tickets before
	// its response goes out, since the client may use it again once it
	// has the response; its room in flight is given back after.
	tmu     sync.Mutex
	tickets map[jsonrpc.ID]ticket

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
// A request waits for room in flight (see StdioTransport); other messages
// and the end of input pass while it does.
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		var room <-chan struct{}
		if len(c.queue) > 0 {
			w := c.queue[0]
			ok, err := c.take(w.req, w.cost)
			switch {
			case ok:
				c.dequeue(0)
				return w.req, nil
			case err != nil:
				// Refused for good: it must not hold the others back.
				c.dequeue(0)
				c.rejectID(w.req.ID, codeServerBusy, "server busy: "+err.Error())
				continue
			}
			room = c.flight.room
		}
		var f frame
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.done:
			return nil, io.EOF
		case <-room:
			continue
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
		if err != nil {
			c.rejectLine(f.line, err)
			continue
		}
		if id, changed := changedID(msg, f.line); changed {
			if req, _ := msg.(*jsonrpc.Request); req.IsCall() {
				c.reject(id, jsonrpc.CodeInvalidRequest, changedIDMessage(id))
			}
			// A cancellation naming such an id names no request here.
			continue
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok {
			return msg, nil
		}
		if !req.IsCall() {
			if req.Method == "notifications/cancelled" {
				c.cancelQueued(req.Params)
			}
			return msg, nil
		}
		if c.inUse(req.ID) {
			c.rejectID(req.ID, jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: id %v is already used by a request in flight; give each request an id of its own", req.ID.Raw()))
			continue
		}
		cost := requestCost(req.Method, req.Params, len(f.line))
		// A listen is not counted with the others, so it never waits
		// behind them: it is admitted or refused at once.
		if len(c.queue) == 0 || isListen(req.Method) {
			ok, err := c.take(req, cost)
			if ok {
				return req, nil
			}
			if err != nil {
				c.rejectID(req.ID, codeServerBusy, "server busy: "+err.Error())
				continue
			}
		}
		if len(c.queue) > 0 && (len(c.queue) >= c.flight.maxCalls || c.queued+len(f.line) > c.limit) {
			c.rejectID(req.ID, codeServerBusy, fmt.Sprintf("server busy: %s, and %d more wait for room; send it again once answers came", c.flight.full(), len(c.queue)))
			continue
		}
		c.queue = append(c.queue, waiter{req, cost, len(f.line)})
		c.queued += len(f.line)
	}
}

// waiter is a request that waits for room in flight.
type waiter struct {
	req  *jsonrpc.Request
	cost int64 // its estimated cost in flight
	size int   // the bytes of its line
}

// take admits req in flight, reporting whether there was room, or why
// req is refused for good (a listen past the limit).
func (c *stdioConn) take(req *jsonrpc.Request, cost int64) (bool, error) {
	t, ok, err := c.flight.admit(req.Method, cost)
	if !ok {
		return false, err
	}
	c.tmu.Lock()
	c.tickets[req.ID] = t
	c.tmu.Unlock()
	return true, nil
}

// dequeue removes the i-th waiter.
func (c *stdioConn) dequeue(i int) {
	c.queued -= c.queue[i].size
	c.queue = slices.Delete(c.queue, i, i+1)
}

// codeCancelled is the JSON-RPC error code of a request the client
// cancelled before it ran (as LSP's RequestCancelled).
const codeCancelled = -32800

// cancelQueued answers the waiting request that the params of a
// notifications/cancelled name, and drops it: the SDK, which has not seen
// it yet, would ignore the cancellation and run it later.
func (c *stdioConn) cancelQueued(params json.RawMessage) {
	var p struct {
		RequestID any `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	id, err := jsonrpc.MakeID(p.RequestID)
	if err != nil || !id.IsValid() {
		return
	}
	i := slices.IndexFunc(c.queue, func(w waiter) bool { return w.req.ID == id })
	if i < 0 {
		return
	}
	c.dequeue(i)
	c.rejectID(id, codeCancelled, "context canceled: the client cancelled the request while it waited for room in flight; it did not run")
}

// inUse reports whether id is that of a request in flight or waiting.
func (c *stdioConn) inUse(id jsonrpc.ID) bool {
	if slices.ContainsFunc(c.queue, func(w waiter) bool { return w.req.ID == id }) {
		return true
	}
	c.tmu.Lock()
	defer c.tmu.Unlock()
	_, ok := c.tickets[id]
	return ok
}

// rejectID writes an error response to the request id.
func (c *stdioConn) rejectID(id jsonrpc.ID, code int, message string) {
	raw, err := json.Marshal(id.Raw())
	if err != nil {
		return
	}
	c.reject(raw, code, message)
}

// rejectLine answers a line that is not a JSON-RPC message.
func (c *stdioConn) rejectLine(line []byte, err error) {
	if !json.Valid(line) {
		id, ok := scanID(line)
		if !ok {
			c.reject(nil, jsonrpc.CodeParseError, "parse error: the line is not JSON; send one JSON-RPC message per line")
			return
		}
		// JSON all the same, nested past what encoding/json decodes.
		c.reject(id, jsonrpc.CodeInvalidRequest, "invalid request: the message is nested more than 10000 levels deep, past the limit of 1000")
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

// scanID reads line as a stream of JSON tokens, which no nesting limit
// stops, reporting whether it is one JSON object; id is its top-level
// "id" when that is one a response may echo, else nil.
func scanID(line []byte) (id json.RawMessage, ok bool) {
	return scanKey(line, "id")
}

// scanKey is scanID for the top-level key: its value when that is a
// string or a number (the last one, should the key be given twice).
func scanKey(line []byte, key string) (id json.RawMessage, ok bool) {
	d := json.NewDecoder(bytes.NewReader(line))
	d.UseNumber()
	if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	for d.More() {
		k, err := d.Token()
		if err != nil {
			return nil, false
		}
		first, err := skipValue(d)
		if err != nil {
			return nil, false
		}
		if k != key {
			continue
		}
		switch v := first.(type) {
		case string:
			id, _ = json.Marshal(v)
		case json.Number:
			id = json.RawMessage(v)
		default:
			id = nil
		}
	}
	if _, err := d.Token(); err != nil { // the closing brace
		return nil, false
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, false
	}
	return id, true
}

// skipValue reads the next value's tokens, returning its first.
func skipValue(d *json.Decoder) (json.Token, error) {
	first, err := d.Token()
	if err != nil {
		return nil, err
	}
	if first != json.Delim('[') && first != json.Delim('{') {
		return first, nil
	}
	for depth := 1; depth > 0; {
		tok, err := d.Token()
		if err != nil {
			return nil, err
		}
		switch tok {
		case json.Delim('['), json.Delim('{'):
			depth++
		case json.Delim(']'), json.Delim('}'):
			depth--
		}
	}
	return first, nil
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
	data, err := json.Marshal(errorResponse(id, code, message))
	if err != nil {
		return
	}
	_ = c.write(append(data, '\n'), nil)
}

// rpcError is a JSON-RPC error response whose id is written as it came.
type rpcError struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// errorResponse is the error response to id (null when nil).
func errorResponse(id json.RawMessage, code int, message string) rpcError {
	if id == nil {
		id = json.RawMessage("null")
	}
	resp := rpcError{JSONRPC: "2.0", ID: id}
	resp.Error.Code, resp.Error.Message = code, message
	return resp
}

// Write implements sdk.Connection. A response makes room for the next
// request (see Read) once it is the one being written: those waiting for
// their turn still count, and the client, once it has the answer, finds
// the room made.
func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	var release func()
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.tmu.Lock()
		t, ok := c.tickets[resp.ID]
		delete(c.tickets, resp.ID)
		c.tmu.Unlock()
		if ok {
			var once sync.Once
			release = func() { once.Do(func() { c.flight.release(t) }) }
			defer release() // when the write does not happen
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("mcp: stdio: encode: %w", err)
	}
	return c.write(append(data, '\n'), release)
}

// write writes data, calling turn (when not nil) once it is data's turn.
func (c *stdioConn) write(data []byte, turn func()) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	select {
	case <-c.done:
		return sdk.ErrConnectionClosed
	default:
	}
	if turn != nil {
		turn()
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
