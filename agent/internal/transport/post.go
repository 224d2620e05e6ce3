package transport

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Endpoint is where a model API is and what every request to it carries.
type Endpoint struct {
	// BaseURL is the API's address, such as https://api.openai.com/v1; a
	// request's path is joined to it with one "/".
	BaseURL string
	// Client sends the requests; nil: http.DefaultClient.
	Client *http.Client
	// Header is sent with every attempt: the key, the API's version, the
	// user's own headers. Post sets Content-Type, Accept and User-Agent,
	// unless Header has them.
	Header http.Header
}

// Post sends body, a JSON document, to path under ep.BaseURL as c's
// attempts: one that got no reply, or 408, 409, 429 or a 5xx status, is
// made again up to c.Policy.MaxRetries times, after the wait the server
// asked for (Retry-After-Ms, Retry-After) or a backoff, never past
// MaxDelay, each retry told to c.OnRetry with the wait it makes. A
// retry whose wait would end past ctx's deadline is not made: that reply
// is the call's.
//
// It returns the last reply when its status is 2xx, its body bounded
// (MaxBodyBytes; MaxEventBytes and MaxStreamBytes for an event stream
// answering a request with c.Stream set; the read past a bound fails, and
// c.BodyErr says so). When c.Stream is set, a 200 that is not an event
// stream has been read whole into c.Body and its body is empty. An error
// status after the retries is a *[StatusError]; a redirect that was not
// followed (to another origin, or stopped by ep.Client's CheckRedirect)
// or another 3xx is an error that says which; anything else (no reply,
// ctx ended) is returned as it came. The caller closes the reply's body.
func Post(ctx context.Context, ep Endpoint, c *Call, path string, body []byte) (*http.Response, error) {
	addr := strings.TrimRight(ep.BaseURL, "/") + "/" + strings.TrimLeft(path, "/")
	client, err := sameOrigin(ep.Client, addr)
	if err != nil {
		return nil, err
	}
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, addr, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header = ep.Header.Clone()
		if req.Header == nil {
			req.Header = http.Header{}
		}
		for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json", "User-Agent": UserAgent()} {
			if req.Header.Get(k) == "" {
				req.Header.Set(k, v)
			}
		}
		res, err := client.Do(req)
		res, err, retry, wait := c.watch(ctx, res, err)
		if !retry {
			if err != nil {
				return nil, err
			}
			switch {
			case res.StatusCode >= 400:
				return nil, statusError(res)
			case res.StatusCode >= 300:
				res.Body.Close()
				return nil, redirectError(res, addr)
			}
			return res, nil
		}
		if res != nil {
			// Not drained: a body that stalls would hold the retry.
			res.Body.Close()
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// sameOrigin returns a client that sends the request as c would (nil:
// http.DefaultClient) but follows no redirect to another origin (scheme,
// host and port) than base's: such a reply comes back as it is. A
// request carries the conversation, the key and the user's headers.
func sameOrigin(c *http.Client, base string) (*http.Client, error) {
	if c == nil {
		c = http.DefaultClient
	}
	u, err := url.Parse(base)
	if err != nil {
		return nil, err
	}
	own := *c
	check := c.CheckRedirect
	own.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if req.URL.Scheme != u.Scheme || req.URL.Host != u.Host {
			return http.ErrUseLastResponse
		}
		if check != nil {
			return check(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &own, nil
}

// redirectError says why res, a 3xx reply to a request to addr, is not
// the reply: a redirect to another origin, which is not followed; one
// within the endpoint, which the client's own CheckRedirect stopped; or a
// 3xx that leads nowhere (no Location, 304).
func redirectError(res *http.Response, addr string) error {
	status := fmt.Sprintf("%d %s", res.StatusCode, http.StatusText(res.StatusCode))
	loc, err := res.Location()
	if err != nil || res.StatusCode == http.StatusNotModified {
		return fmt.Errorf("the endpoint answered %s, which leads to no other address: give the address the API is at", status)
	}
	if u, err := url.Parse(addr); err == nil && u.Scheme == loc.Scheme && u.Host == loc.Host {
		return fmt.Errorf("the endpoint answered %s, a redirect to %s that the HTTP client's CheckRedirect did not follow: give the address the API is at, or let the client follow it", status, loc)
	}
	return fmt.Errorf("the endpoint redirects the request to %s, another origin, where it was not sent (it holds the conversation and the key): give the address the API is at", loc.Scheme+"://"+loc.Host)
}

// statusError reads res, a reply with an error status, into a
// StatusError; res's body is closed.
func statusError(res *http.Response) *StatusError {
	defer res.Body.Close()
	// The body is bounded (watch): a read past MaxBodyBytes fails, and
	// what came before it is kept.
	var buf bytes.Buffer
	_, _ = io.Copy(&buf, res.Body)
	return &StatusError{StatusCode: res.StatusCode, Body: buf.Bytes()}
}

// StatusError is a reply with an error status (400 or more), after any
// retries.
type StatusError struct {
	StatusCode int
	Body       []byte // up to MaxBodyBytes of it
}

func (e *StatusError) Error() string {
	msg := e.API().Message
	if msg == "" {
		msg = strings.TrimSpace(strings.ToValidUTF8(string(e.Body[:min(len(e.Body), maxMessage)]), "?"))
	}
	if msg == "" {
		msg = "(no message)"
	}
	return fmt.Sprintf("%d %s: %s", e.StatusCode, http.StatusText(e.StatusCode), msg)
}

// APIError is the error object model APIs send with an error status.
type APIError struct {
	Message, Type, Code, Param string
}

// API reads the error object of e's body, {"error": {"message", "type",
// "code", "param"}} (OpenAI's APIs, the Messages API, and the servers that
// follow them); a code or param that is a number is read as its text.
// Without an error object, it reads the message other servers send: an
// "error" that is a string (Ollama), the object's members at the top
// level (vLLM's ErrorResponse before it moved them into "error"), or a
// "detail" that is a string or a list whose first item has a "message"
// or "msg" (FastAPI); a body that is a list is read as its first item
// (Gemini). It is the zero APIError when the body is none of these.
func (e *StatusError) API() APIError {
	body := e.Body
	var list []json.RawMessage
	if json.Unmarshal(body, &list) == nil {
		if len(list) == 0 {
			return APIError{}
		}
		body = list[0]
	}
	var b struct {
		Error json.RawMessage `json:"error"`
		errorFields
		Detail json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &b) != nil {
		return APIError{}
	}
	var api APIError
	var nested errorFields
	if bytes.HasPrefix(b.Error, []byte("{")) && json.Unmarshal(b.Error, &nested) == nil {
		api = nested.api()
	} else {
		api = b.errorFields.api()
		api.Message = cmp.Or(Text(b.Error), api.Message)
	}
	if api.Message == "" {
		api.Message = cmp.Or(Text(b.Message), detail(b.Detail))
	}
	return api
}

// errorFields are the members of an error object, each a string or a
// number.
type errorFields struct {
	Message json.RawMessage `json:"message"`
	Type    json.RawMessage `json:"type"`
	Code    json.RawMessage `json:"code"`
	Param   json.RawMessage `json:"param"`
}

func (f errorFields) api() APIError {
	return APIError{Message: Text(f.Message), Type: Text(f.Type), Code: Text(f.Code), Param: Text(f.Param)}
}

// detail is the message of a "detail" member: a string, or the "message"
// or "msg" of an object or of a list's first item.
func detail(v json.RawMessage) string {
	if s := Text(v); s != "" {
		return s
	}
	var list []json.RawMessage
	if json.Unmarshal(v, &list) == nil && len(list) > 0 {
		v = list[0]
	}
	var d struct {
		Message json.RawMessage `json:"message"`
		Msg     json.RawMessage `json:"msg"`
	}
	if json.Unmarshal(v, &d) != nil {
		return ""
	}
	return cmp.Or(Text(d.Message), Text(d.Msg))
}

// Text is a JSON string's value, or a number's text; "" for anything
// else. Model APIs' replies are read leniently with it: servers that
// follow an API send some fields as another JSON type.
func Text(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(v, &n) == nil {
		return n.String()
	}
	return ""
}

// Number is a JSON number, or a string holding one ("5", as some proxies
// send token counts); 0 for anything else, NaN included.
func Number(v json.RawMessage) float64 {
	var n float64
	if json.Unmarshal(v, &n) == nil {
		return n
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		if n, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil && !math.IsNaN(n) {
			return n
		}
	}
	return 0
}

// UserAgent is the User-Agent header of every request: unfold and its
// module version, when the program was built with one.
var UserAgent = sync.OnceValue(func() string {
	const module = "github.com/unfold-dev/unfold"
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unfold"
	}
	version := ""
	if info.Main.Path == module {
		version = info.Main.Version
	}
	for _, d := range info.Deps {
		if d.Path == module {
			version = d.Version
		}
	}
	if version == "" || version == "(devel)" {
		return "unfold"
	}
	return "unfold/" + version
})
