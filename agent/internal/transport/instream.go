package transport

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// An API can fail a streamed request after its 200: the Messages API with
// an error event (overloaded_error, api_error, rate_limit_error), the
// Responses API with an error event or response.failed
// (server_is_overloaded, server_error, rate_limit_exceeded). When such an
// error opens the stream, before any content, nothing was streamed and
// nothing billed, and it is the failure the status it stands for would
// be: [Post] reads the start of every event stream and turns such a
// stream into a reply of that status, with the error as its body, which
// it retries as it would the status, and names when the retries run out.

// peekBytes bounds how much of an event stream's start is read ahead to
// find an error in it. A stream whose opening events are longer is passed
// on unread (a Responses API response.created echoes the instructions and
// the tools).
const peekBytes = 1 << 20

// inStream are the errors reported in a stream that are retried, by the
// error's code or type, each with the status it stands for.
var inStream = map[string]struct {
	status int
	what   string
}{
	"overloaded_error":     {529, "overloaded"},
	"server_is_overloaded": {529, "overloaded"},
	"api_error":            {http.StatusInternalServerError, "server error"},
	"server_error":         {http.StatusInternalServerError, "server error"},
	"rate_limit_error":     {http.StatusTooManyRequests, "rate limited"},
	"rate_limit_exceeded":  {http.StatusTooManyRequests, "rate limited"},
}

// opening are the events an API opens a stream with, before any content.
var opening = map[string]bool{
	"message_start": true, "ping": true, // Messages
	"response.created": true, "response.queued": true, "response.in_progress": true, // Responses
}

// streamError is a retried error an event stream opened with.
type streamError struct {
	status int
	what   string // "overloaded", "server error", "rate limited"
	body   []byte // the error as the API sends it with the status
}

// reply returns res made a reply of e's status with e's body; res's body,
// already read from, is closed.
func (e *streamError) reply(res *http.Response) *http.Response {
	res.Body.Close()
	out := *res
	out.Status = strconv.Itoa(e.status) + " " + e.what
	out.StatusCode = e.status
	out.Header = res.Header.Clone()
	out.Header.Set("Content-Type", "application/json")
	for _, h := range []string{"Content-Length", "Content-Encoding", "X-Should-Retry"} {
		out.Header.Del(h)
	}
	out.ContentLength = int64(len(e.body))
	out.Body = io.NopCloser(bytes.NewReader(e.body))
	return &out
}

// opening returns res, a 200 event stream, as it came, or, if it opens
// with an error of inStream, as a reply of the error's status, retried
// as the status would be.
func (c *Call) opening(res *http.Response) *http.Response {
	se, body := peek(res.Body)
	res.Body = body
	if se == nil {
		return res
	}
	c.mu.Lock()
	c.last = Reply{Status: se.status, ContentType: "application/json", Head: head(se.body), InStream: se.what}
	c.mu.Unlock()
	return se.reply(res)
}

// peek reads the start of an event stream from body, up to its first
// event that is not one of those it opens with, or peekBytes. If that
// event is an error of inStream, it is returned. Otherwise the body
// returned gives the stream whole, what was read first, then the rest,
// or the error that stopped the read ahead.
func peek(body io.ReadCloser) (*streamError, io.ReadCloser) {
	var buf []byte
	var sc eventScanner
	var err error
	for len(buf) < peekBytes && err == nil {
		buf = slices.Grow(buf, 4<<10)
		var n int
		n, err = body.Read(buf[len(buf):min(cap(buf), peekBytes)])
		buf = buf[:len(buf)+n]
		done := false
		for !done {
			name, data, ok := sc.next(buf)
			if !ok {
				break
			}
			se, more := classify(name, data)
			if se != nil {
				return se, body
			}
			done = !more
		}
		if done {
			break
		}
	}
	rest := io.Reader(body)
	if err != nil {
		rest = errReader{err}
	}
	return nil, readCloser{io.MultiReader(bytes.NewReader(buf), rest), body}
}

// classify says whether an event is a retried error (se), or one a
// stream opens with (more: read on).
func classify(name string, data []byte) (se *streamError, more bool) {
	var ev struct {
		Type  string `json:"type"`
		Code  string `json:"code"`
		Error *struct {
			Type string `json:"type"`
			Code string `json:"code"`
		} `json:"error"`
		Response struct {
			Error json.RawMessage `json:"error"`
		} `json:"response"`
	}
	if json.Unmarshal(data, &ev) != nil {
		return nil, opening[name]
	}
	typ := ev.Type
	if typ == "" {
		typ = name
	}
	var codes []string
	var body []byte
	switch {
	case typ == "error" || name == "error":
		if ev.Error != nil {
			codes, body = []string{ev.Error.Code, ev.Error.Type}, data
		} else {
			codes, body = []string{ev.Code}, wrapError(data)
		}
	case typ == "response.failed":
		var e struct{ Code string }
		if json.Unmarshal(ev.Response.Error, &e) != nil {
			return nil, false
		}
		codes, body = []string{e.Code}, wrapError(ev.Response.Error)
	default:
		return nil, opening[typ]
	}
	for _, c := range codes {
		if m, ok := inStream[c]; ok && body != nil {
			return &streamError{status: m.status, what: m.what, body: body}, false
		}
	}
	return nil, false
}

// wrapError returns {"error": e}: the body of an error status.
func wrapError(e json.RawMessage) []byte {
	b, err := json.Marshal(map[string]json.RawMessage{"error": e})
	if err != nil {
		return nil
	}
	return b
}

// eventScanner reads whole events of an event stream.
type eventScanner struct {
	pos     int    // the bytes scanned
	name    string // the event's name so far
	data    []byte // its data so far
	hasData bool
	// seen is how far past pos a line end was looked for and not found,
	// so that a long line read in many pieces is searched once.
	seen int
	// cr: the last line ended with "\r" at the end of the bytes given;
	// a "\n" that comes next is the rest of that line's end.
	cr    bool
	begun bool // a line was scanned
}

// bom is the UTF-8 byte order mark, which an event stream may begin with.
const bom = "\ufeff"

// next returns the next whole event in buf, or ok false when buf holds no
// more whole events. An event ends at a blank line; a line ends at
// "\r\n", "\n" or "\r". A byte order mark the stream begins with is
// dropped, as the event stream format says. Comments and fields other
// than event and data are passed over.
func (s *eventScanner) next(buf []byte) (name string, data []byte, ok bool) {
	for {
		rest := buf[s.pos:]
		if s.cr && len(rest) > 0 {
			s.cr = false
			if rest[0] == '\n' {
				s.pos++
				continue
			}
		}
		i := lineEnd(rest[s.seen:])
		if i < 0 {
			s.seen = len(rest)
			return "", nil, false
		}
		i += s.seen
		n := i + 1
		if rest[i] == '\r' {
			switch {
			case i+1 == len(rest):
				// The line ends here; a "\n" read next belongs to it.
				s.cr = true
			case rest[i+1] == '\n':
				n++
			}
		}
		line := rest[:i]
		s.pos, s.seen = s.pos+n, 0
		if !s.begun {
			s.begun = true
			line = bytes.TrimPrefix(line, []byte(bom))
		}
		if len(line) == 0 {
			if s.name == "" && !s.hasData {
				continue
			}
			name, data = s.name, s.data
			s.name, s.data, s.hasData = "", nil, false
			return name, data, true
		}
		field, value, _ := strings.Cut(string(line), ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			s.name = value
		case "data":
			if s.hasData {
				s.data = append(s.data, '\n')
			}
			s.data, s.hasData = append(s.data, value...), true
		}
	}
}

// flush returns the event the stream ended in, if one was begun: a
// stream that ends without the blank line that would end its last event.
func (s *eventScanner) flush() (name string, data []byte, ok bool) {
	if s.name == "" && !s.hasData {
		return "", nil, false
	}
	name, data = s.name, s.data
	s.name, s.data, s.hasData = "", nil, false
	return name, data, true
}

// lineEnd returns the index of the first "\r" or "\n" in b, or -1.
func lineEnd(b []byte) int {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		i = len(b)
	}
	if j := bytes.IndexByte(b[:i], '\r'); j >= 0 {
		return j
	}
	if i == len(b) {
		return -1
	}
	return i
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// readCloser reads from one reader and closes another.
type readCloser struct {
	io.Reader
	c io.Closer
}

func (r readCloser) Close() error { return r.c.Close() }
