package mcp

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
)

// Defaults of the bounds on what one session has in flight: requests read
// and not answered yet, over stdio ([StdioTransport]) and over HTTP
// ([HTTPOptions]).
const (
	// DefaultMaxInFlight bounds the requests read and not yet answered
	// when MaxInFlight is 0.
	DefaultMaxInFlight = 256
	// DefaultMaxInFlightBytes bounds the memory the requests in flight
	// may take, as the session estimates it (see requestCost), when
	// MaxInFlightBytes is 0: two reads of the largest context file at
	// once, with room for small requests beside them.
	DefaultMaxInFlightBytes = 256 << 20
	// maxListens bounds the subscriptions/listen requests open at once.
	// They are answered only when cancelled and hold little, so they are
	// not counted with the others, lest a client's open ones stop its
	// calls; a client needs one.
	maxListens = 16
)

// Estimates of what answering a request holds in memory, beyond the
// request itself, until the answer is written: the result, the result
// encoded, the message encoded. Measured: reading a 15 MB context file
// raised the server's RSS by about 100 MB.
const (
	// bigReplyBytes is for a resource read or a prompt: a context file
	// of up to MaxContextBytes, a skill's file, an upstream resource.
	bigReplyBytes = 6 * MaxContextBytes
	// toolReplyBytes is for a tool call: environments cut their output
	// to the output budget, and the gateway cuts upstream results to it.
	toolReplyBytes = 1 << 20
	// smallReplyBytes is for any other request: lists, ping, and a
	// screen's resource (a screen is cut to 64 KiB).
	smallReplyBytes = 64 << 10
	// requestCopies is how many times a request's bytes are held while
	// it runs: the line, the decoded message, the decoded arguments.
	requestCopies = 5
)

// requestCost estimates the bytes a request of n bytes, with params,
// holds until its answer is written. A resource read is estimated by what
// it reads: a screen is small, anything else may be a context file.
func requestCost(method string, params json.RawMessage, n int) int64 {
	reply := int64(smallReplyBytes)
	switch method {
	case "resources/read":
		if !readsScreen(params) {
			reply = bigReplyBytes
		}
	case "prompts/get":
		reply = bigReplyBytes
	case "tools/call":
		reply = toolReplyBytes
	}
	return int64(requestCopies)*int64(n) + reply
}

// readsScreen reports whether the params of a resources/read name a
// screen's resource.
func readsScreen(params json.RawMessage) bool {
	var p struct {
		URI string `json:"uri"`
	}
	return json.Unmarshal(params, &p) == nil && strings.HasPrefix(p.URI, ScreenURIPrefix)
}

// isListen reports whether method is the long-lived subscriptions/listen
// (protocol 2026-07-28), which only a cancellation answers.
func isListen(method string) bool { return method == "subscriptions/listen" }

// inFlight bounds the requests of one session that are being answered, by
// count and by estimated bytes. A request that would pass a bound waits
// (stdio) or is refused (HTTP); one alone in flight is always admitted,
// however large, so that it cannot wait forever. Its methods are safe for
// concurrent use.
type inFlight struct {
	maxCalls int
	maxBytes int64

	// mu guards the fields below.
	mu      sync.Mutex
	calls   int   // requests admitted and not released, listens apart
	bytes   int64 // their costs
	listens int   // subscriptions/listen admitted and not released
	// room receives a token when a request is released, waking one that
	// waits for room.
	room chan struct{}
}

func newInFlight(maxCalls int, maxBytes int64) *inFlight {
	if maxCalls <= 0 {
		maxCalls = DefaultMaxInFlight
	}
	if maxBytes <= 0 {
		maxBytes = DefaultMaxInFlightBytes
	}
	return &inFlight{maxCalls: maxCalls, maxBytes: maxBytes, room: make(chan struct{}, 1)}
}

// ticket is a request admitted: what to give back when it is answered.
type ticket struct {
	cost   int64
	listen bool
}

// errListens refuses a subscriptions/listen past maxListens.
var errListens = fmt.Errorf("%d subscriptions/listen requests are open, the most a session may have; cancel one first", maxListens)

// admit takes room for a request of method and cost, reporting whether
// there was room. A listen past maxListens is refused with errListens.
func (f *inFlight) admit(method string, cost int64) (ticket, bool, error) {
	taken, ok, err := f.admitAll([]call{{method, cost}})
	if !ok {
		return ticket{}, false, err
	}
	return taken[0], true, nil
}

// call is a request to admit: its method and estimated cost.
type call struct {
	method string
	cost   int64
}

// admitAll takes room for calls as one unit (an HTTP batch), all of them
// or none, reporting whether there was room. When no other request is in
// flight they are admitted whatever their count and cost, as one request
// alone is. Listens past maxListens are refused with errListens.
func (f *inFlight) admitAll(calls []call) ([]ticket, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, listens, bytes := 0, 0, int64(0)
	for _, c := range calls {
		if isListen(c.method) {
			listens++
			continue
		}
		n++
		bytes += c.cost
	}
	if listens > 0 && f.listens+listens > maxListens {
		return nil, false, errListens
	}
	if n > 0 && f.calls > 0 && (f.calls+n > f.maxCalls || f.bytes+bytes > f.maxBytes) {
		return nil, false, nil
	}
	taken := make([]ticket, 0, len(calls))
	for _, c := range calls {
		if isListen(c.method) {
			f.listens++
			taken = append(taken, ticket{listen: true})
			continue
		}
		f.calls++
		f.bytes += c.cost
		taken = append(taken, ticket{cost: c.cost})
	}
	return taken, true, nil
}

// release gives back what t took and wakes a request that waits.
func (f *inFlight) release(t ticket) {
	f.mu.Lock()
	if t.listen {
		f.listens--
	} else {
		f.calls--
		f.bytes -= t.cost
	}
	f.mu.Unlock()
	select {
	case f.room <- struct{}{}:
	default:
	}
}

// full says why a request was not admitted, for its error.
func (f *inFlight) full() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return fmt.Sprintf("%d requests are in flight, holding an estimated %d MB of the %d MB this session allows (at most %d requests)",
		f.calls, f.bytes>>20, f.maxBytes>>20, f.maxCalls)
}
