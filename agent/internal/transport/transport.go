// Package transport is how the model adapters speak HTTP: [Post] sends a
// request and retries it (a request that got no answer, or 408, 409, 429
// or a 5xx status, unless x-should-retry says otherwise, as the APIs' own
// SDKs do), waiting as the server's Retry-After says or with exponential
// backoff, each retry announced with the wait it makes; the last reply's
// status, content type and first bytes are kept so that a reply that
// could not be used is named, not guessed at; every body is bounded; and
// [Events] reads an event stream. An event stream that opens with an
// error the API reports in it (an overload, a server error, a rate limit)
// is retried as the status it stands for (see instream.go).
package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"mime"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/unfold-dev/unfold/agent"
	"golang.org/x/net/http/httpguts"
)

// Retry defaults.
const (
	DefaultMaxRetries = 4
	DefaultBaseDelay  = 500 * time.Millisecond
	DefaultMaxDelay   = 30 * time.Second
)

// headBytes is how much of a reply's body is kept to quote.
const headBytes = 200

// MaxToolCalls bounds the tool calls of one reply an adapter reads: past
// it, the reply is refused (agent.MaxToolCalls of them run).
const MaxToolCalls = 1024

// TooManyCalls is the error for a reply past MaxToolCalls.
var TooManyCalls = fmt.Errorf("the reply makes more than %d tool calls; stopped reading it", MaxToolCalls)

// MaxBodyBytes bounds a reply body read whole (an endpoint that answered a
// streaming request with one JSON document, a reply to a request that did
// not stream, an error page), and what the adapters keep of a streamed
// reply (its text, tool arguments, thinking and signatures).
const MaxBodyBytes = 8 << 20

// Bounds of a streamed reply (an event stream) as read from the wire. The
// text a reply carries is bounded by MaxBodyBytes in the adapters; these
// bound the bytes around it, so that an endpoint that never ends an event
// or never ends its stream cannot make the reader hold it whole.
const (
	// MaxEventBytes bounds one event: the bytes from the blank line that
	// ended the one before to the blank line that ends it. The largest an
	// API sends (a Responses API response.completed) carries the whole
	// reply, the instructions and the tools.
	MaxEventBytes = 2 * MaxBodyBytes
	// MaxStreamBytes bounds a whole stream: each small delta comes with
	// its event's framing (type, index, ids), often many times its size.
	MaxStreamBytes = 16 * MaxBodyBytes
)

// MaxTokens bounds a token count an endpoint reports (about 10^12, far
// past any context window), so that the counts of a run, their sums and
// its cost stay true numbers.
const MaxTokens = 1 << 40

// Tokens returns n, a token count an endpoint reported, within
// [0, MaxTokens]: a negative count is taken as 0, a larger one as
// MaxTokens. A count is read as a float64, so that one too big for an
// integer is still read.
func Tokens(n float64) int {
	return int(min(max(n, 0), MaxTokens))
}

// Policy is how an adapter retries.
type Policy struct {
	MaxRetries int           // retries after the first attempt
	BaseDelay  time.Duration // the first backoff, doubled each retry, with jitter
	MaxDelay   time.Duration // the ceiling of any wait, Retry-After included
}

// Call is the state of one model call across its attempts, which [Post]
// makes and fills in.
type Call struct {
	Policy  Policy
	OnRetry func(agent.Retry)
	// Stream: the request asked for a stream, so a 200 reply that is not
	// an event stream is read whole into Body.
	Stream bool

	mu       sync.Mutex // guards the fields below
	attempts int
	last     Reply
	body     []byte
	bodyErr  error // the reply's body was refused (past a bound): not retried
}

// Reply is what came back to one attempt.
type Reply struct {
	Status      int
	ContentType string
	Head        []byte // the first bytes of the body
	Err         error  // no reply: what went wrong
	// InStream: the reply was an event stream that opened with an error
	// (see peek), taken as a reply of Status; it says what the error
	// was: "overloaded", "server error", "rate limited".
	InStream string
	// Wait is the wait before a retry that would have ended past the
	// request's deadline, so the reply was not retried: the wait the
	// server asked for (Retry-After), or the backoff.
	Wait time.Duration
	// Asked: Wait is the server's.
	Asked bool
	// Left is the time the request had left then.
	Left time.Duration
}

// Last returns the reply to the last attempt.
func (c *Call) Last() Reply {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.last
	r.Head = append([]byte(nil), r.Head...)
	return r
}

// Attempts returns how many attempts were made.
func (c *Call) Attempts() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.attempts
}

// BodyErr returns why the body of a reply was refused, or nil: a body read
// whole over MaxBodyBytes, or an event stream past MaxEventBytes or
// MaxStreamBytes (the read that passed the bound failed with this error).
// Such a reply is not asked for again: it came, and may have been billed.
func (c *Call) BodyErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bodyErr
}

// ReadFailure is the error for a reply whose read failed with err: the
// bound it passed, when that was why (see BodyErr), else err, said to
// have broken the stream when some of the stream had come (streamed).
func (c *Call) ReadFailure(streamed bool, err error) error {
	if berr := c.BodyErr(); berr != nil {
		return berr // err is this one, wrapped or not
	}
	if streamed {
		return fmt.Errorf("the stream broke: %w", err)
	}
	return err
}

// Body returns the whole body of a 200 reply to a streaming request that
// was not an event stream, or nil.
func (c *Call) Body() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.body
}

// watch takes in the reply to one attempt of c (res, or err when none
// came): it is kept as c's last reply, its body is bounded, an event
// stream that opens with an error reported in it becomes a reply of that
// error's status (see instream.go), and a 200 that is not an event stream
// is read whole into c's Body when c streams. It returns the reply and
// whether to try again, after the wait given, which OnRetry was told.
func (c *Call) watch(ctx context.Context, res *http.Response, err error) (_ *http.Response, _ error, retry bool, wait time.Duration) {
	c.mu.Lock()
	c.attempts++
	attempt := c.attempts
	c.last = Reply{Err: err}
	if res != nil {
		c.last.Status, c.last.ContentType = res.StatusCode, res.Header.Get("Content-Type")
	}
	c.mu.Unlock()
	if res != nil && res.Body != nil {
		if c.Stream && res.StatusCode == http.StatusOK && !isEventStream(res.Header.Get("Content-Type")) {
			body, rerr := io.ReadAll(io.LimitReader(res.Body, MaxBodyBytes+1))
			res.Body.Close()
			tooBig := rerr == nil && len(body) > MaxBodyBytes
			c.mu.Lock()
			c.last.Head = head(body)
			switch {
			case tooBig:
				c.bodyErr = ErrOverBody
			case rerr == nil:
				c.body = body
			}
			c.mu.Unlock()
			// The caller reads Body, not the reply's body.
			res.Body = io.NopCloser(strings.NewReader(""))
			if tooBig {
				// The reply came: asking again would bill it again.
				return res, nil, false, 0
			}
			if rerr != nil {
				res, err = nil, rerr // cut off: retried as no reply
			}
		} else {
			b := &boundedReader{ReadCloser: res.Body, c: c, limit: MaxBodyBytes, over: ErrOverBody}
			res.Body = b
			// Only the reply to a streaming request, when it succeeded, is
			// read as a stream. An error status (a proxy that sent a
			// stream's headers, then failed) and a reply to a request that
			// did not stream are read whole, whatever their content type.
			if c.Stream && res.StatusCode/100 == 2 && isEventStream(res.Header.Get("Content-Type")) {
				b.limit, b.over, b.eventLimit = MaxStreamBytes, errOverStream, MaxEventBytes
				if res.StatusCode == http.StatusOK {
					res = c.opening(res)
				}
			}
		}
	}
	if ctx.Err() != nil || !willRetry(res, err) || attempt > c.Policy.MaxRetries {
		return res, err, false, 0
	}
	delay := c.delay(attempt, res)
	if dl, ok := ctx.Deadline(); ok {
		if left := time.Until(dl); left < delay {
			// The wait would end at the deadline with no reply to
			// show for it: this reply is the call's error, now.
			wait, asked := retryAfter(res)
			if !asked {
				wait = delay
			}
			c.mu.Lock()
			c.last.Wait, c.last.Asked, c.last.Left = wait, asked, left
			c.mu.Unlock()
			return res, err, false, 0
		}
	}
	if c.OnRetry != nil {
		why := reason(res, err)
		if what := c.Last().InStream; what != "" {
			why = what + " (in the stream)"
		}
		c.OnRetry(agent.Retry{Attempt: attempt, Delay: delay, Reason: why})
	}
	return res, err, true, delay
}

// willRetry says whether an attempt is tried again: one that got no
// reply, or 408, 409, 429 or a 5xx status, unless the reply's
// x-should-retry header says otherwise (the rule of the APIs' own SDKs).
func willRetry(res *http.Response, err error) bool {
	if res == nil {
		return err != nil
	}
	switch res.Header.Get("x-should-retry") {
	case "true":
		return true
	case "false":
		return false
	}
	s := res.StatusCode
	return s == http.StatusRequestTimeout || s == http.StatusConflict || s == http.StatusTooManyRequests || s >= 500
}

// delay is the wait before the retry after attempt: the server's
// Retry-After (or Retry-After-Ms), else exponential backoff with jitter;
// never more than MaxDelay.
func (c *Call) delay(attempt int, res *http.Response) time.Duration {
	p := c.Policy
	if d, ok := retryAfter(res); ok {
		return min(d, p.MaxDelay)
	}
	d := min(p.BaseDelay<<min(attempt-1, 16), p.MaxDelay)
	return d/2 + time.Duration(rand.Int64N(int64(d/2)+1))
}

func retryAfter(res *http.Response) (time.Duration, bool) {
	if res == nil {
		return 0, false
	}
	if v := res.Header.Get("Retry-After-Ms"); v != "" {
		if f, err := strconv.ParseFloat(v, 64); err == nil && f >= 0 && f < 1e9 {
			return time.Duration(f * float64(time.Millisecond)), true
		}
	}
	v := res.Header.Get("Retry-After")
	if v == "" {
		return 0, false
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil && f >= 0 && f < 1e6 {
		return time.Duration(f * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0), true
	}
	return 0, false
}

// reason says in a few words why an attempt is retried.
func reason(res *http.Response, err error) string {
	if res == nil {
		var errno syscall.Errno
		if errors.As(err, &errno) {
			return errno.Error()
		}
		return err.Error()
	}
	what := strings.ToLower(http.StatusText(res.StatusCode))
	switch res.StatusCode {
	case http.StatusTooManyRequests:
		what = "rate limited"
	case http.StatusServiceUnavailable:
		what = "unavailable"
	case 529:
		what = "overloaded"
	}
	return strings.TrimSpace(fmt.Sprintf("%d %s", res.StatusCode, what))
}

func isEventStream(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "text/event-stream"
}

// ErrOverBody is the error for a reply over MaxBodyBytes: a body read
// whole, or the text and tool arguments an adapter keeps of a stream.
var ErrOverBody = fmt.Errorf("the reply is over %d bytes; stopped reading it", MaxBodyBytes)

var (
	errOverStream = fmt.Errorf("the streamed reply is over %d bytes; stopped reading it", MaxStreamBytes)
	errOverEvent  = fmt.Errorf("the streamed reply has an event over %d bytes; stopped reading it", MaxEventBytes)
)

// boundedReader keeps the first bytes read from a body in its Call, and
// fails the read that passes limit bytes, or, in an event stream
// (eventLimit > 0), eventLimit bytes in one event. The error is kept as
// the Call's BodyErr.
type boundedReader struct {
	io.ReadCloser
	c          *Call
	limit      int64
	over       error // the error past limit
	eventLimit int64 // 0: not an event stream

	read  int64 // bytes read
	event int64 // bytes of the event being read
	line  int64 // bytes of the line being read, its ending left out
	cr    bool  // the last byte was a carriage return
	err   error // the bound passed: every later read fails with it
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.c.mu.Lock()
		if room := headBytes - len(b.c.last.Head); room > 0 {
			b.c.last.Head = append(b.c.last.Head, p[:min(n, room)]...)
		}
		b.c.mu.Unlock()
	}
	b.read += int64(n)
	switch {
	case b.read > b.limit:
		b.err = b.over
	case b.eventLimit > 0 && b.events(p[:n]) > b.eventLimit:
		b.err = errOverEvent
	}
	if b.err != nil {
		b.c.mu.Lock()
		b.c.bodyErr = b.err
		b.c.mu.Unlock()
		return 0, b.err
	}
	return n, err
}

// events follows the event stream's lines through p and returns the size
// of the event not yet ended. An event ends at a blank line; a line ends
// at "\r\n", "\n" or "\r".
func (b *boundedReader) events(p []byte) int64 {
	for len(p) > 0 {
		end := bytes.IndexByte(p, '\n')
		if end < 0 {
			end = len(p)
		}
		if cr := bytes.IndexByte(p[:end], '\r'); cr >= 0 {
			end = cr
		}
		if end > 0 {
			b.line += int64(end)
			b.event += int64(end)
			b.cr = false
		}
		if end == len(p) {
			break
		}
		switch c := p[end]; {
		case c == '\n' && b.cr:
			// The second byte of "\r\n": the line already ended.
		case b.line == 0:
			b.event = 0 // a blank line: the event ended
		default:
			b.event++
		}
		b.line, b.cr = 0, p[end] == '\r'
		p = p[end+1:]
	}
	return b.event
}

func head(b []byte) []byte {
	return append([]byte(nil), b[:min(len(b), headBytes)]...)
}

// Describe says what a reply was, for an error about a reply that could
// not be used: `200 text/html: "<!DOCTYPE html>..."`.
func (r Reply) Describe() string {
	if r.Status == 0 {
		if r.Err != nil {
			return "no reply: " + r.Err.Error()
		}
		return "no reply"
	}
	ct := r.ContentType
	if ct == "" {
		ct = "no content type"
	}
	s := fmt.Sprintf("%d %s", r.Status, ct)
	if len(r.Head) > 0 {
		q := strings.ToValidUTF8(string(r.Head), "?")
		if len(r.Head) == headBytes {
			q += "..."
		}
		s += ": " + strconv.Quote(q)
	} else {
		s += ", empty body"
	}
	return s
}

// Deadline bounds a whole model call by timeout, its retries, their waits
// and its streamed reply included; a timeout of 0 bounds nothing. An
// attempt that runs out of time is not made again: the call is over.
func Deadline(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, timeout)
}

// Failure is the error for a model call that failed, named from what
// [Post] returned and the last reply: a timeout, an endpoint that could not
// be reached, or a reply that was not what the API sends. api names the
// API in the message ("openai: chat completions").
func Failure(ctx context.Context, api, baseURL string, timeout time.Duration, c *Call, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		if errors.Is(err, ctxErr) {
			return fmt.Errorf("%s: %w", api, err)
		}
		return fmt.Errorf("%s: %w (%v)", api, ctxErr, err)
	}
	last := c.Last()
	attempts := ""
	if n := c.Attempts(); n > 1 {
		attempts = fmt.Sprintf(" (after %d attempts)", n)
	}
	if errors.Is(err, context.DeadlineExceeded) && timeout > 0 {
		return fmt.Errorf("%s: no complete reply from %s within %s (the request timeout)%s: %w", api, baseURL, timeout, attempts, err)
	}
	if last.Status == 0 {
		return fmt.Errorf("%s: cannot reach %s%s%s: %w", api, baseURL, attempts, last.notRetried(), err)
	}
	return fmt.Errorf("%s: %s answered %s%s: %w", api, baseURL, last.Describe(), attempts, err)
}

// maxMessage bounds the server message an error quotes.
const maxMessage = 2 << 10

// ServerMessage is what an error status came with: the server's message
// (msg, else the raw body), or, when the reply was not JSON, what it was.
func ServerMessage(msg, raw string, c *Call) string {
	msg = strings.TrimSpace(msg)
	last := c.Last()
	if msg == "" {
		if !strings.Contains(last.ContentType, "json") {
			msg = last.Describe()
		} else {
			msg = strings.TrimSpace(raw)
		}
	}
	if len(msg) > maxMessage {
		msg = msg[:maxMessage] + "..."
	}
	return msg + last.notRetried()
}

// notRetried says why a reply that could be retried was not: the wait
// before the retry would have ended past the request's deadline.
func (r Reply) notRetried() string {
	if r.Wait == 0 {
		return ""
	}
	left := max(r.Left, 0).Round(time.Millisecond)
	if r.Asked {
		return fmt.Sprintf(" (not retried: the server asks to wait %s, longer than the request has left, %s)", r.Wait.Round(time.Millisecond), left)
	}
	return fmt.Sprintf(" (not retried: the next try would be in %s, later than the request has left, %s)", r.Wait.Round(time.Millisecond), left)
}

// CustomHeaders reads the environment variable that, as the APIs' SDKs read it,
// adds headers to every request: one "Name: value" a line (lines without
// a colon are passed over, as the SDKs pass them over), each returned as
// its name and value. A header the HTTP client would refuse is an error
// naming the variable and the line, given when a client is made instead
// of failing every request as a network error.
func CustomHeaders(variable string) ([][2]string, error) {
	var headers [][2]string
	for i, line := range strings.Split(os.Getenv(variable), "\n") {
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if !httpguts.ValidHeaderFieldName(name) || !httpguts.ValidHeaderFieldValue(value) {
			return nil, fmt.Errorf("%s, line %d: %q is not a header: write one \"Name: value\" a line", variable, i+1, strings.TrimSpace(line))
		}
		headers = append(headers, [2]string{name, value})
	}
	return headers, nil
}
