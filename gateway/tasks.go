package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// taskTools holds the names of the tools a server lists with
// execution.taskSupport "required": they can only be called as MCP tasks,
// which unfold does not make, so they are not offered (see
// Manifest.TaskOnly). The SDK's Tool has no field for execution, so the
// lists are read as they arrive: by watchConn for a command, by
// watchBody for a streamable HTTP server, both through a listWatch.
type taskTools struct {
	mu    sync.Mutex // guards names
	names map[string]bool
}

// observe reads one page of a tools/list result.
func (t *taskTools) observe(result []byte) {
	var page struct {
		Tools []struct {
			Name      string `json:"name"`
			Execution struct {
				TaskSupport string `json:"taskSupport"`
			} `json:"execution"`
		} `json:"tools"`
	}
	if json.Unmarshal(result, &page) != nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, tool := range page.Tools {
		switch {
		case tool.Execution.TaskSupport != "required":
			delete(t.names, tool.Name)
		case t.names == nil:
			t.names = map[string]bool{tool.Name: true}
		default:
			t.names[tool.Name] = true
		}
	}
}

// split moves the tools that need tasks out of list, returning their names.
func (t *taskTools) split(list []*sdk.Tool) (offered []*sdk.Tool, taskOnly []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.names) == 0 {
		return list, nil
	}
	offered = list[:0:0]
	for _, tool := range list {
		if t.names[tool.Name] {
			taskOnly = append(taskOnly, tool.Name)
		} else {
			offered = append(offered, tool)
		}
	}
	return offered, taskOnly
}

// listWatch holds the IDs of one connection's tools/list requests not
// answered yet, and shows the answers to tasks.
type listWatch struct {
	tasks *taskTools
	mu    sync.Mutex   // guards ids
	ids   []jsonrpc.ID // oldest first, at most maxLists
}

// maxLists bounds the tools/list requests a listWatch waits on: past it,
// the oldest is forgotten (its answer, should it come, goes unseen).
const maxLists = 64

// sent records a tools/list request.
func (w *listWatch) sent(id jsonrpc.ID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.ids) == maxLists {
		w.ids = slices.Delete(w.ids, 0, 1)
	}
	w.ids = append(w.ids, id)
}

// forget drops a request whose answer will not come: it failed, or its
// answer ended without it. It reports whether the request was waited for.
func (w *listWatch) forget(id jsonrpc.ID) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(w.ids)
	w.ids = slices.DeleteFunc(w.ids, func(x jsonrpc.ID) bool { return x == id })
	return len(w.ids) < n
}

// waiting reports whether a tools/list request is not answered yet.
func (w *listWatch) waiting() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.ids) > 0
}

// received shows r to tasks when it answers a tools/list request.
func (w *listWatch) received(r *jsonrpc.Response) {
	if w.forget(r.ID) && r.Error == nil {
		w.tasks.observe(r.Result)
	}
}

// watchTransport is a command's transport whose connection shows its
// tools/list results to tasks.
type watchTransport struct {
	sdk.Transport
	tasks *taskTools
}

func (w watchTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	c, err := w.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &watchConn{Connection: c, lists: &listWatch{tasks: w.tasks}}, nil
}

// Close closes the transport's process.
func (w watchTransport) Close() error {
	if c, ok := w.Transport.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// watchConn is a connection that shows the results of its tools/list
// requests to tasks before the SDK reads them.
type watchConn struct {
	sdk.Connection
	lists *listWatch
}

func (c *watchConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if r, ok := msg.(*jsonrpc.Request); ok && r.Method == "tools/list" && r.ID.IsValid() {
		c.lists.sent(r.ID)
	}
	return c.Connection.Write(ctx, msg)
}

func (c *watchConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if r, ok := msg.(*jsonrpc.Response); ok && err == nil {
		c.lists.received(r)
	}
	return msg, err
}

// watchRequest reports whether r posts a tools/list request, and its ID.
func watchRequest(r *http.Request) (jsonrpc.ID, bool) {
	if r.Method != http.MethodPost || r.GetBody == nil || r.ContentLength > MaxResponseBytes {
		return jsonrpc.ID{}, false
	}
	body, err := r.GetBody()
	if err != nil {
		return jsonrpc.ID{}, false
	}
	defer body.Close()
	data, err := io.ReadAll(io.LimitReader(body, MaxResponseBytes))
	if err != nil || !bytes.Contains(data, []byte("tools/list")) {
		return jsonrpc.ID{}, false // most are calls: not decoded twice
	}
	msg, err := jsonrpc.DecodeMessage(data)
	if req, ok := msg.(*jsonrpc.Request); err == nil && ok && req.Method == "tools/list" && req.ID.IsValid() {
		return req.ID, true
	}
	return jsonrpc.ID{}, false
}

// watchBody is a body that may hold the answer to a tools/list request:
// the JSON answer to one, or an event stream (the answer to a request, or
// a stream resumed with a GET, on which an answer may come too), whose
// events it reads line by line as they pass, so that the answer is seen
// before the SDK has it. An event that begins while no list waits is
// passed by, not kept; of one kept, at most MaxResponseBytes.
type watchBody struct {
	io.ReadCloser
	lists  *listWatch
	stream bool
	list   *jsonrpc.ID // the request this JSON body answers
	begun  bool        // the current event has begun
	keep   bool        // and a list waited then: its data lines are kept
	lineN  int         // bytes of the current line so far, kept or not
	cr     bool        // the current line's last byte so far is '\r'
	line   []byte      // the current line, when kept
	data   []byte      // the message read so far: the body, or the event's data
	full   bool        // data passed the bound and is dropped
}

func (b *watchBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if b.stream {
		b.scan(p[:n])
	} else {
		b.add(&b.data, p[:n])
	}
	if err == io.EOF {
		if b.stream && b.lineN > 0 {
			b.endLine() // the last line, which the stream's end ends
		}
		b.deliver() // the body, or the last event, which the end ends too
		b.unanswered()
	}
	return n, err
}

// Close forgets the request a JSON body that did not answer it was for.
func (b *watchBody) Close() error {
	b.unanswered()
	return b.ReadCloser.Close()
}

// unanswered forgets the request of a JSON body, answered or not: its
// answer comes in no other body. (A stream's request may be answered on
// a stream resumed after it.)
func (b *watchBody) unanswered() {
	if b.list != nil {
		b.lists.forget(*b.list)
		b.list = nil
	}
}

// add appends p to buf unless that passes the bound.
func (b *watchBody) add(buf *[]byte, p []byte) {
	if b.full || len(*buf)+len(p) > MaxResponseBytes {
		b.full, *buf = true, nil
		return
	}
	*buf = append(*buf, p...)
}

// scan reads the event stream's lines in p: data lines gather, a blank
// line ends the event.
func (b *watchBody) scan(p []byte) {
	for len(p) > 0 {
		if !b.begun {
			b.begun, b.keep = true, b.lists.waiting()
		}
		i := bytes.IndexByte(p, '\n')
		part := p
		if i >= 0 {
			part = p[:i]
		}
		if len(part) > 0 {
			b.lineN += len(part)
			b.cr = part[len(part)-1] == '\r'
			if b.keep {
				b.add(&b.line, part)
			}
		}
		if i < 0 {
			return
		}
		p = p[i+1:]
		b.endLine()
	}
}

// endLine reads the line that ended: a blank one ends the event, a data
// line of a kept event adds to its data.
func (b *watchBody) endLine() {
	blank := b.lineN == 0 || b.lineN == 1 && b.cr
	line := bytes.TrimSuffix(b.line, []byte("\r"))
	switch {
	case blank:
		b.deliver()
		b.begun, b.full = false, false
		b.data = release(b.data)
	case b.keep && bytes.HasPrefix(line, []byte("data:")):
		v := bytes.TrimPrefix(line[len("data:"):], []byte(" "))
		if len(b.data) > 0 {
			b.add(&b.data, []byte("\n"))
		}
		b.add(&b.data, v)
	}
	b.line, b.lineN, b.cr = release(b.line), 0, false
}

// release empties buf, dropping it when it grew large, so that a stream
// that stays open does not hold the size of its largest event.
func release(buf []byte) []byte {
	if cap(buf) > 64<<10 {
		return nil
	}
	return buf[:0]
}

// deliver shows the message in data to the watch when it may answer a
// list: a stream's notifications are not decoded while no list waits.
func (b *watchBody) deliver() {
	if b.full || len(b.data) == 0 || !b.lists.waiting() {
		return
	}
	msg, err := jsonrpc.DecodeMessage(b.data)
	if r, ok := msg.(*jsonrpc.Response); err == nil && ok {
		b.lists.received(r)
	}
}

// taskOnlyNote says which tools of a server are not offered, and why.
func taskOnlyNote(names []string) string {
	return "Not offered, as they run only as MCP tasks, which unfold does not make: " + strings.Join(names, ", ") + "."
}
