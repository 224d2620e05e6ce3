package anthropic

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/unfold-dev/unfold/agent"
	"github.com/unfold-dev/unfold/agent/internal/transport"
)

// accumulator puts a message together from the events of its stream:
// message_start gives the message, content_block_start each block (in
// index order, with no gaps), content_block_delta adds to a block (text,
// tool input, thinking, a signature, a citation), content_block_stop
// ends one, message_delta gives the stop reason and the final usage, and
// message_stop ends the message. Blocks are kept as the API sent them,
// fields of types it does not know included, with what their deltas
// brought written over: a reply goes back to the API as it came. Events
// without a name, ping events and events with no data are passed over,
// as are events and deltas of types it does not know; an error event
// ends the stream as a *StatusError.
type accumulator struct {
	call    *transport.Call
	onDelta func(agent.Delta)

	started  bool                       // message_start came
	msg      map[string]json.RawMessage // the message, but its content and usage
	usage    map[string]json.RawMessage
	blocks   []*streamBlock
	streamed bool // an event was read
	stopped  bool // message_stop came
	size     int  // bytes kept, bounded by transport.MaxBodyBytes
	tool     map[int64]int
}

// streamBlock is a content block as its events brought it.
type streamBlock struct {
	raw       map[string]json.RawMessage // as content_block_start gave it
	text      strings.Builder
	thinking  strings.Builder
	signature strings.Builder
	input     []byte            // a tool call's input
	citations []json.RawMessage // the start's, then the deltas'
}

// streamEvent is an event's data, with what the accumulator reads.
type streamEvent struct {
	Type         string          `json:"type"`
	Index        int64           `json:"index"`
	Message      json.RawMessage `json:"message"`
	ContentBlock json.RawMessage `json:"content_block"`
	Delta        json.RawMessage `json:"delta"`
	Usage        json.RawMessage `json:"usage"`
}

// blockDelta is the delta of a content_block_delta event.
type blockDelta struct {
	Type        string          `json:"type"`
	Text        string          `json:"text"`
	PartialJSON string          `json:"partial_json"`
	Thinking    string          `json:"thinking"`
	Signature   string          `json:"signature"`
	Citation    json.RawMessage `json:"citation"`
}

// misfit wraps the error for an event that does not fit the message so
// far (a block out of order, a delta for no block, a second message).
const misfit = "the stream sent an event that does not fit the reply so far: %w"

// event takes the event name with data.
func (a *accumulator) event(name string, data []byte) error {
	data = bytes.TrimSuffix(data, []byte("\n"))
	switch {
	case name == "" || name == "ping":
		return nil
	case name == "error":
		return a.streamError(data)
	case len(data) == 0:
		return nil
	}
	var ev streamEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		if a.streamed {
			return fmt.Errorf("the stream broke: %w", err)
		}
		return err
	}
	a.streamed = true
	switch ev.Type {
	case "message_start":
		return a.start(ev.Message)
	case "message_delta":
		return a.messageDelta(ev.Delta, ev.Usage)
	case "content_block_start":
		return a.blockStart(ev.Index, ev.ContentBlock)
	case "content_block_delta":
		return a.blockDelta(ev.Index, ev.Delta, len(data))
	case "content_block_stop":
		if ev.Index < 0 || ev.Index >= int64(len(a.blocks)) {
			return fmt.Errorf(misfit, fmt.Errorf("content_block_stop for block %d of %d", ev.Index, len(a.blocks)))
		}
	case "message_stop":
		a.stopped = true
	}
	return nil
}

// streamError is the error event's error: the API's error object, a
// *StatusError with the stream's status, 200.
func (a *accumulator) streamError(data []byte) error {
	var body struct {
		Error *struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(data, &body) != nil {
		// Quoted as a server's message is, cut at 2 KiB: an event may
		// hold 16 MiB.
		err := fmt.Errorf("the stream reported an error, with data that is not the API's JSON error object: %s", transport.ServerMessage(string(data), "", a.call))
		if a.streamed {
			return fmt.Errorf("the stream broke: %w", err)
		}
		return err
	}
	e := &StatusError{StatusCode: http.StatusOK}
	var msg string
	if body.Error != nil {
		e.Type, msg = body.Error.Type, body.Error.Message
	}
	e.Message = transport.ServerMessage(msg, string(data), a.call)
	return e
}

// keep counts n more bytes kept of the reply.
func (a *accumulator) keep(n int) error {
	a.size += n
	if a.size > transport.MaxBodyBytes {
		return transport.ErrOverBody
	}
	return nil
}

// start takes the message of message_start. A second one is refused: a
// stream holds one message, and taking it would either mix two replies'
// blocks or drop the first's.
func (a *accumulator) start(raw json.RawMessage) error {
	if a.started {
		return fmt.Errorf(misfit, errors.New("a second message_start"))
	}
	if err := a.keep(len(raw)); err != nil {
		return err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return fmt.Errorf(misfit, fmt.Errorf("message_start: not a message: %.100s", raw))
	}
	// Usage that is not an object counts nothing (see parseMessage).
	var usage map[string]json.RawMessage
	_ = json.Unmarshal(m["usage"], &usage)
	var content []json.RawMessage
	if c, ok := m["content"]; ok && string(c) != "null" {
		if err := json.Unmarshal(c, &content); err != nil {
			return fmt.Errorf(misfit, fmt.Errorf("message_start content: %w", err))
		}
	}
	delete(m, "usage")
	delete(m, "content")
	if usage == nil {
		usage = map[string]json.RawMessage{}
	}
	a.started, a.msg, a.usage, a.blocks = true, m, usage, nil
	for i, c := range content {
		b, err := newBlock(c)
		if err != nil {
			return fmt.Errorf(misfit, fmt.Errorf("message_start content block %d: %w", i, err))
		}
		a.blocks = append(a.blocks, b)
	}
	return nil
}

// messageDelta merges the delta's fields and its usage counts, each a
// total for the whole message, into the message; a null leaves the value
// before it. What it stores counts against the bound.
func (a *accumulator) messageDelta(delta, usage json.RawMessage) error {
	if !a.started {
		return fmt.Errorf(misfit, errors.New("message_delta before message_start"))
	}
	n, err := merge(a.msg, delta)
	if err != nil {
		return fmt.Errorf(misfit, fmt.Errorf("message_delta: %w", err))
	}
	if err := a.keep(n); err != nil {
		return err
	}
	// Usage that is not an object counts nothing (see parseMessage).
	n, _ = merge(a.usage, usage)
	return a.keep(n)
}

// merge stores src's fields that are not null in dst and says how many
// bytes it stored.
func merge(dst map[string]json.RawMessage, src json.RawMessage) (int, error) {
	if len(src) == 0 || string(src) == "null" {
		return 0, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(src, &m); err != nil {
		return 0, err
	}
	n := 0
	for k, v := range m {
		if string(v) != "null" {
			dst[k] = v
			n += len(k) + len(v)
		}
	}
	return n, nil
}

func newBlock(raw json.RawMessage) (*streamBlock, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, errors.New("no content block")
	}
	// Each field is read on its own: one of another shape (in a block
	// of a type not known, which may use the name otherwise) is left as
	// it came, not a reason to lose the reply.
	var text, thinking, signature string
	var citations []json.RawMessage
	_ = json.Unmarshal(m["text"], &text)
	_ = json.Unmarshal(m["thinking"], &thinking)
	_ = json.Unmarshal(m["signature"], &signature)
	_ = json.Unmarshal(m["citations"], &citations)
	b := &streamBlock{raw: m, citations: citations}
	if !emptyInput(m["input"]) {
		b.input = m["input"]
	}
	b.text.WriteString(text)
	b.thinking.WriteString(thinking)
	b.signature.WriteString(signature)
	return b, nil
}

// emptyInput reports whether a block started with no tool input: none,
// null, or an empty object however it is written ({}, { }). The API
// starts a tool call's block with {} and sends its input in deltas; a
// proxy that builds the events from another API may start it with null.
func emptyInput(input json.RawMessage) bool {
	if len(input) == 0 || string(input) == "null" || string(input) == "{}" {
		return true
	}
	var buf bytes.Buffer
	return json.Compact(&buf, input) == nil && buf.String() == "{}"
}

func (a *accumulator) blockStart(index int64, raw json.RawMessage) error {
	if !a.started {
		return fmt.Errorf(misfit, errors.New("content_block_start before message_start"))
	}
	if index != int64(len(a.blocks)) {
		return fmt.Errorf(misfit, fmt.Errorf("content_block_start for block %d, want block %d", index, len(a.blocks)))
	}
	if err := a.keep(len(raw)); err != nil {
		return err
	}
	b, err := newBlock(raw)
	if err != nil {
		return fmt.Errorf(misfit, fmt.Errorf("content_block_start: %w", err))
	}
	a.blocks = append(a.blocks, b)
	var head struct{ Type, Name string }
	_ = json.Unmarshal(raw, &head)
	if head.Type == "tool_use" {
		if len(a.tool) == transport.MaxToolCalls {
			return transport.TooManyCalls
		}
		a.tool[index] = len(a.tool)
		if a.onDelta != nil {
			a.onDelta(agent.Delta{ToolIndex: a.tool[index], ToolName: head.Name})
		}
	}
	return nil
}

// blockDelta adds a delta to its block: text, thinking and signatures
// joined, a tool's input joined (after the input its block started
// with, unless that was empty: see emptyInput), citations appended. A delta of a type it does not
// know counts against the bound, whole (size is its event's), and is
// passed over.
func (a *accumulator) blockDelta(index int64, raw json.RawMessage, size int) error {
	if index < 0 || index >= int64(len(a.blocks)) {
		return fmt.Errorf(misfit, fmt.Errorf("content_block_delta for block %d of %d", index, len(a.blocks)))
	}
	var d blockDelta
	if err := json.Unmarshal(raw, &d); err != nil {
		return fmt.Errorf(misfit, fmt.Errorf("content_block_delta: %w", err))
	}
	b := a.blocks[index]
	switch d.Type {
	case "text_delta":
		size = len(d.Text)
		b.text.WriteString(d.Text)
	case "input_json_delta":
		size = len(d.PartialJSON)
		b.input = append(b.input, d.PartialJSON...)
	case "thinking_delta":
		size = len(d.Thinking)
		b.thinking.WriteString(d.Thinking)
	case "signature_delta":
		size = len(d.Signature)
		b.signature.WriteString(d.Signature)
	case "citations_delta":
		size = len(d.Citation)
		var c map[string]json.RawMessage
		if err := json.Unmarshal(d.Citation, &c); err != nil || c == nil {
			return fmt.Errorf(misfit, fmt.Errorf("citations_delta: not a citation: %s", d.Citation))
		}
		b.citations = append(b.citations, d.Citation)
	}
	if err := a.keep(size); err != nil {
		return err
	}
	if a.onDelta == nil {
		return nil
	}
	switch d.Type {
	case "text_delta":
		a.onDelta(agent.Delta{Content: d.Text})
	case "input_json_delta":
		if i, ok := a.tool[index]; ok {
			a.onDelta(agent.Delta{ToolIndex: i, ToolArgs: d.PartialJSON})
		}
	}
	return nil
}

// block is b as it ended: its start with what the deltas brought written
// over. A block that takes input (its type ends in tool_use, or it
// started with an input) ends with input that is JSON, {} when it got
// none: the API refuses such a block without it. Input that is not JSON
// is refused, unless cut (the reply ended while the model was writing
// it): the block then goes back with {}, which the API takes back, and
// the call keeps what the model wrote (see response).
func (b *streamBlock) block(cut bool) (json.RawMessage, error) {
	set := func(k, v string) {
		if v != "" {
			b.raw[k], _ = json.Marshal(v)
		}
	}
	set("text", b.text.String())
	set("thinking", b.thinking.String())
	set("signature", b.signature.String())
	var typ string
	_ = json.Unmarshal(b.raw["type"], &typ)
	_, started := b.raw["input"]
	switch {
	case len(b.input) > 0 && json.Valid(b.input):
		b.raw["input"] = b.input
	case len(b.input) > 0 && !cut:
		return nil, fmt.Errorf("the %s block's input is not JSON, and the reply did not end while the model wrote it: %.200s", typ, b.input)
	case started || strings.HasSuffix(typ, "tool_use"):
		b.raw["input"] = json.RawMessage("{}")
	}
	if len(b.citations) > 0 {
		b.raw["citations"] = array(b.citations)
	}
	return object(b.raw), nil
}

// object is the JSON object of m, its keys sorted and its values as they
// are: json.Marshal would compact them, and a tool call's arguments are
// kept as the model wrote them.
func object(m map[string]json.RawMessage) json.RawMessage {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			buf.WriteByte(',')
		}
		key, _ := json.Marshal(k)
		buf.Write(key)
		buf.WriteByte(':')
		buf.Write(m[k])
	}
	buf.WriteByte('}')
	return buf.Bytes()
}

// array is the JSON array of items, each as it is.
func array(items []json.RawMessage) json.RawMessage {
	var buf bytes.Buffer
	buf.WriteByte('[')
	for i, item := range items {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(item)
	}
	buf.WriteByte(']')
	return buf.Bytes()
}

// response is the message the stream brought.
func (a *accumulator) response() (agent.Response, error) {
	if !a.started {
		return agent.Response{}, errUnusable
	}
	var reason string
	_ = json.Unmarshal(a.msg["stop_reason"], &reason)
	finish := finishOf(reason)
	content := make([]json.RawMessage, len(a.blocks))
	for i, b := range a.blocks {
		cut := i == len(a.blocks)-1 && (finish == agent.FinishTruncated || finish == agent.FinishRefused)
		raw, err := b.block(cut)
		if err != nil {
			return agent.Response{}, fmt.Errorf("content block %d: %w", i, err)
		}
		content[i] = raw
	}
	msg := maps.Clone(a.msg)
	msg["content"], msg["usage"] = array(content), object(a.usage)
	raw := object(msg)
	resp, err := parseMessage(raw)
	if err != nil {
		return resp, err
	}
	calls := resp.Message.ToolCalls
	if n := len(a.blocks); n > 0 {
		if i, ok := a.tool[int64(n-1)]; ok && i == len(calls)-1 && calls[i].Cut && len(a.blocks[n-1].input) > 0 {
			// The block goes back with {}: the call keeps what the
			// model wrote.
			calls[i].Arguments = string(a.blocks[n-1].input)
		}
	}
	return resp, nil
}
