package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Backoff between restarts of a server that keeps failing: none before the
// first restart, then doubling from minBackoff up to maxBackoff.
const (
	minBackoff = time.Second
	maxBackoff = 30 * time.Second
)

// stderrTail is how much of a server's stderr is kept for its errors.
const stderrTail = 2 << 10

// relistGap is the least time between two lists of one server after it
// said its lists changed: a server that says so without end (every
// millisecond, or each time it is listed) is listed twice a second, not
// as fast as it answers.
const relistGap = 500 * time.Millisecond

// Upstream is one configured MCP server: its manifest (cached, or fetched
// when it first starts), and a connection started on first use. A server
// that fails to start, crashes, hangs past its call timeout or answers
// garbage is closed; its calls fail with an error that names it and shows
// the tail of its stderr, and it is started again on next use, with
// backoff. It is safe for concurrent use.
type Upstream struct {
	cfg  ServerConfig
	hash string
	g    *Gateway
	tail *tail // the newest bytes of the running process's stderr
	// tasks are the tools the server lists as MCP tasks only.
	tasks taskTools

	// mu guards the fields below.
	mu       sync.Mutex
	man      Manifest
	cached   bool // man came from the cache or a fetch
	cs       *sdk.ClientSession
	starting chan struct{} // closed when a start in progress ends
	failures int           // consecutive failed starts or calls
	retryAt  time.Time
	backoff  time.Duration // set by tests: every backoff, instead of the doubling one
	lastErr  error
	closed   bool // the gateway closed: nothing starts any more
	// dirty says the server's lists changed since they were last fetched;
	// relisting says the re-list loop runs (one per server, so that an
	// older answer never replaces a newer one).
	dirty, relisting bool

	progress sync.Map     // upstream progress token (string) -> func(*sdk.ProgressNotificationParams)
	next     atomic.Int64 // progress tokens
}

// Name returns the server's name.
func (u *Upstream) Name() string { return u.cfg.Name }

// Config returns the server's configuration.
func (u *Upstream) Config() ServerConfig { return u.cfg }

// Manifest returns what the server offers, as last listed.
func (u *Upstream) Manifest() Manifest {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.man
}

// Running reports whether the server's process (or connection) is up.
func (u *Upstream) Running() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.cs != nil
}

// Starting reports whether the server is being started.
func (u *Upstream) Starting() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.starting != nil
}

// unlisted reports a server whose tools are not known yet: it is being
// started, or it failed to start.
func (u *Upstream) unlisted() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return !u.cached && (u.starting != nil || u.lastErr != nil)
}

// Err returns why the server last failed, nil after a success.
func (u *Upstream) Err() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.lastErr
}

// session returns the running connection, starting the server when there
// is none and the backoff allows.
func (u *Upstream) session(ctx context.Context) (*sdk.ClientSession, error) {
	for {
		u.mu.Lock()
		if u.cs != nil {
			cs := u.cs
			u.mu.Unlock()
			return cs, nil
		}
		if wait := u.starting; wait != nil {
			u.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		if u.closed {
			u.mu.Unlock()
			return nil, fmt.Errorf("%s: the gateway is closed", u.cfg.Name)
		}
		if now := time.Now(); now.Before(u.retryAt) {
			err := fmt.Errorf("%s: it failed %d times in a row (last: %v); it is started again in %s",
				u.cfg.Name, u.failures, u.lastErr, u.retryAt.Sub(now).Round(100*time.Millisecond))
			u.mu.Unlock()
			return nil, err
		}
		u.starting = make(chan struct{})
		// Counted with the first starts, which Close waits for: it set
		// u.closed under u.mu before it waits, so no count comes after.
		u.g.starts.Add(1)
		u.mu.Unlock()
		defer u.g.starts.Done()
		// Close ends the start too, as it ends the background ones.
		ctx, stop := context.WithCancel(ctx)
		defer stop()
		defer context.AfterFunc(u.g.ctx, stop)()
		return u.run(ctx)
	}
}

// begin returns a channel closed when the server's start ends: the start
// under way, or one begun now in the background when the server is not
// running and the backoff allows; nil when there is neither.
func (u *Upstream) begin() <-chan struct{} {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.starting != nil {
		return u.starting
	}
	if u.cs != nil || u.closed || time.Now().Before(u.retryAt) {
		return nil
	}
	u.starting = make(chan struct{})
	// Not closed yet, so Close has not begun waiting for g.bg.
	u.g.bg.Go(func() { u.runReported("gateway: starting an MCP server again") })
	return u.starting
}

// runReported runs the server's start in the background, which the
// caller marked (u.starting): a failure is logged as what, and the
// subscribers are told (the server's section says why), unless the
// gateway closed meanwhile, which is no fault.
func (u *Upstream) runReported(what string) {
	if _, err := u.run(u.g.ctx); err != nil && u.g.ctx.Err() == nil {
		u.g.log.Warn(what, "server", u.cfg.Name, "err", err)
		u.g.changed(u)
	}
}

// run starts the server; the caller set u.starting, which run closes.
func (u *Upstream) run(ctx context.Context) (*sdk.ClientSession, error) {
	cs, err := u.start(ctx)
	u.mu.Lock()
	close(u.starting)
	u.starting = nil
	switch {
	case err != nil:
		u.failLocked(err)
	case u.closed:
		// Closed while it started: it must not outlive the gateway.
		err = fmt.Errorf("%s: the gateway is closed", u.cfg.Name)
		defer cs.Close()
	default:
		u.cs = cs
		u.relistLocked() // when the lists changed while it started
	}
	u.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return cs, nil
}

// failLocked records a failure and sets when the server may start again.
func (u *Upstream) failLocked(err error) {
	u.failures++
	u.lastErr = err
	if u.failures > 1 {
		d := min(minBackoff<<min(u.failures-2, 5), maxBackoff)
		if u.backoff > 0 {
			d = u.backoff // a test's
		}
		u.retryAt = time.Now().Add(d)
	}
}

// start connects to the server, lists what it offers when the manifest is
// not known yet, and watches the connection end. A manifest from the
// cache may be older than the server (it was updated since): the server
// is listed again in the background once it runs (see run), and a list
// that differs replaces the manifest, the cache and the offer.
func (u *Upstream) start(ctx context.Context) (*sdk.ClientSession, error) {
	startCtx, cancel := context.WithTimeout(ctx, u.cfg.timeout())
	defer cancel()
	t, err := u.transport(startCtx)
	if err != nil {
		return nil, u.fault("start", err)
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "unfold", Version: "gateway"}, &sdk.ClientOptions{
		ToolListChangedHandler:      func(context.Context, *sdk.ToolListChangedRequest) { u.relist() },
		ResourceListChangedHandler:  func(context.Context, *sdk.ResourceListChangedRequest) { u.relist() },
		PromptListChangedHandler:    func(context.Context, *sdk.PromptListChangedRequest) { u.relist() },
		ProgressNotificationHandler: u.onProgress,
	})
	cs, err := client.Connect(startCtx, t, nil)
	if err != nil {
		if c, ok := t.(io.Closer); ok {
			_ = c.Close() // the process, when the SDK did not close it
		}
		return nil, u.fault("start", err)
	}
	u.mu.Lock()
	fetch := !u.cached
	u.dirty = u.dirty || !fetch
	u.mu.Unlock()
	if fetch {
		if err := u.refresh(startCtx, cs, false); err != nil {
			_ = cs.Close()
			return nil, u.fault("list what it offers", err)
		}
	}
	go func() {
		err := cs.Wait()
		u.mu.Lock()
		defer u.mu.Unlock()
		if u.cs == cs {
			u.cs = nil
			if err == nil {
				err = errors.New("the connection closed")
			}
			u.lastErr = u.fault("run", err)
		}
	}()
	return cs, nil
}

// transport makes the connection's transport: the configured one, a
// command, or a streamable HTTP endpoint.
func (u *Upstream) transport(ctx context.Context) (sdk.Transport, error) {
	switch {
	case u.cfg.Connect != nil:
		return u.cfg.Connect(ctx)
	case u.cfg.Command != "":
		return u.command()
	case u.cfg.URL != "":
		client, err := httpClient(u.cfg.Name, u.cfg.URL, u.cfg.Headers, &u.tasks)
		if err != nil {
			return nil, err
		}
		// MaxEventSize is set: the SDK's 0 turns its bound off, whatever
		// its doc says.
		return &sdk.StreamableClientTransport{Endpoint: u.cfg.URL, HTTPClient: client, MaxEventSize: MaxResponseBytes}, nil
	}
	return nil, errors.New("no command or url")
}

// fault is an error naming the server and what it was doing, with the tail
// of its stderr; the values of the configuration's variables show as
// ${VAR} (a key in the URL).
func (u *Upstream) fault(doing string, err error) error {
	msg := fmt.Sprintf("MCP server %s: %s: %v", u.cfg.Name, doing, err)
	if t := strings.TrimSpace(u.tail.last(stderrTail, u.cfg.maskedValues())); t != "" {
		msg += "\nIts stderr ends with:\n" + t
	}
	return &Fault{Server: u.cfg.Name, msg: u.cfg.mask(msg), err: err}
}

// Fault is an upstream server's failure, as the model reads it.
type Fault struct {
	Server string
	msg    string
	err    error
}

func (f *Fault) Error() string { return f.msg }
func (f *Fault) Unwrap() error { return f.err }

// refresh lists what the server offers, caches it and tells the gateway,
// unless it is what the manifest holds already. With current set, the
// answer is kept only while cs is still the server's connection.
func (u *Upstream) refresh(ctx context.Context, cs *sdk.ClientSession, current bool) error {
	m, err := fetchManifest(ctx, cs, u.cfg, &u.tasks)
	if err != nil {
		return err
	}
	u.mu.Lock()
	if current && u.cs != cs {
		u.mu.Unlock()
		return nil // a newer connection lists for itself
	}
	if u.cached && m.same(u.man) {
		u.mu.Unlock()
		return nil // no write, and the subscribers rebuild nothing
	}
	u.man, u.cached = m, true
	// The cache is written under the lock, so that it holds the newest
	// answer too.
	if err := writeManifest(u.g.cacheDir, u.cfg.Name, m); err != nil {
		u.g.log.Warn("gateway: caching a manifest", "server", u.cfg.Name, "err", err)
	}
	u.mu.Unlock()
	u.g.changed(u)
	return nil
}

// relist lists again after the server said its lists changed. One loop
// per server does it: a notification that comes while a list is under
// way, or less than relistGap after it, makes the loop list once more
// relistGap after the last one, so that many notifications make few
// lists, and the manifest kept is always the answer to the newest one.
func (u *Upstream) relist() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.dirty = true
	u.relistLocked()
}

// relistLocked starts the re-list loop when a list is due and the loop
// does not run.
func (u *Upstream) relistLocked() {
	if !u.dirty || u.relisting || u.cs == nil || u.closed {
		return
	}
	u.relisting = true
	u.g.bg.Go(u.relistLoop)
}

func (u *Upstream) relistLoop() {
	var last time.Time
	for {
		if !last.IsZero() {
			select {
			case <-time.After(relistGap - time.Since(last)):
			case <-u.g.ctx.Done():
			}
		}
		u.mu.Lock()
		cs := u.cs
		if !u.dirty || cs == nil || u.closed {
			u.relisting = false
			u.mu.Unlock()
			return
		}
		u.dirty = false
		u.mu.Unlock()
		last = time.Now()
		ctx, cancel := context.WithTimeout(u.g.ctx, u.cfg.timeout())
		if err := u.refresh(ctx, cs, true); err != nil && u.g.ctx.Err() == nil {
			u.g.log.Warn("gateway: listing again", "server", u.cfg.Name, "err", u.cfg.maskErr(err))
		}
		cancel()
	}
}

// stop closes the connection, so that the next use starts the server again.
func (u *Upstream) stop(cs *sdk.ClientSession) {
	u.mu.Lock()
	if u.cs == cs {
		u.cs = nil
	}
	u.mu.Unlock()
	_ = cs.Close()
}

// close stops the server for good.
func (u *Upstream) close() error {
	u.mu.Lock()
	cs := u.cs
	u.cs, u.closed = nil, true
	u.mu.Unlock()
	if cs == nil {
		return nil
	}
	return cs.Close()
}

// progressKey carries a progress callback in a context.
type progressKey struct{}

// WithProgress returns a context whose upstream calls report their
// progress notifications to fn, with the downstream caller's token to be
// set by fn's caller.
func WithProgress(ctx context.Context, fn func(progress, total float64, message string)) context.Context {
	return context.WithValue(ctx, progressKey{}, fn)
}

func (u *Upstream) onProgress(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
	key := fmt.Sprint(req.Params.ProgressToken)
	if fn, ok := u.progress.Load(key); ok {
		fn.(func(float64, float64, string))(req.Params.Progress, req.Params.Total, req.Params.Message)
	}
}

// CallTool calls the server's tool with args (a JSON object), starting the
// server if it is not running. The call is bounded by the server's
// timeout; cancelling ctx cancels it upstream. A server that fails (hangs
// past the timeout, dies, answers garbage) is stopped, and the error is a
// [*Fault] naming it with the tail of its stderr; a result with IsError is
// the tool's own failure and is returned as it is. A call that an HTTP
// server refused, as it ended the session (it restarted, or the session
// expired), is made once more in a new session.
func (u *Upstream) CallTool(ctx context.Context, tool string, args json.RawMessage) (*sdk.CallToolResult, error) {
	if a := strings.TrimSpace(string(args)); a == "" || a == "null" {
		args = json.RawMessage("{}") // servers want an object
	}
	params := &sdk.CallToolParams{Name: tool, Arguments: args}
	if fn, ok := ctx.Value(progressKey{}).(func(float64, float64, string)); ok && fn != nil {
		token := strconv.FormatInt(u.next.Add(1), 10)
		u.progress.Store(token, fn)
		defer u.progress.Delete(token)
		params.SetProgressToken(token)
	}
	var res *sdk.CallToolResult
	var timedOut bool
	cs, refused, err := u.inSession(ctx, func(ctx context.Context, cs *sdk.ClientSession) (err error) {
		callCtx, cancel := context.WithTimeout(ctx, u.cfg.timeout())
		defer cancel()
		res, err = cs.CallTool(callCtx, params)
		timedOut = callCtx.Err() != nil
		return err
	})
	if cs == nil {
		return nil, err // no session
	}
	if err == nil {
		u.mu.Lock()
		u.failures, u.lastErr, u.retryAt = 0, nil, time.Time{}
		u.mu.Unlock()
		return res, nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err() // the caller went away; the server is fine
	}
	if timedOut {
		err = fmt.Errorf("no answer within %s (the server's call timeout)", u.cfg.timeout())
	} else if isToolError(err) {
		// A JSON-RPC error about this call (unknown tool, invalid params):
		// the server itself is fine.
		err = fmt.Errorf("MCP server %s: tool %s: %w", u.cfg.Name, tool, err)
		if invalidParams(err) {
			// The server may have changed since it was listed (the manifest
			// came from the cache, or it changed without saying so).
			u.relist()
			err = fmt.Errorf("%w (unfold lists the server's tools again: %s shows the current ones)", err, FindToolsName)
		}
		return nil, u.cfg.maskErr(err)
	}
	switch msg := err.Error(); {
	case strings.Contains(msg, frameTooLarge):
		err = fmt.Errorf("%w: its answer is over the %d MiB unfold reads in one message; ask the tool for less (a range of lines, a head or a tail, a narrower query)", err, sdk.DefaultMaxLineLength>>20)
	case refused:
		err = fmt.Errorf("%w: the server ended its session (it restarted, or the session expired), and refused the call in a new session too", err)
	case errors.Is(err, sdk.ErrSessionMissing):
		err = fmt.Errorf("%w: the server ended its session (it restarted, or the session expired) after the call reached it, so the call may have run; the next call starts a new session", err)
	case strings.Contains(msg, eventTooLarge):
		err = fmt.Errorf("%w: an event of its answer is over the %d MiB unfold reads in one event (gateway.MaxResponseBytes); ask the tool for less (a range of lines, a head or a tail, a narrower query)", err, MaxResponseBytes>>20)
	}
	f := u.fault("call "+tool, err)
	u.mu.Lock()
	u.failLocked(f)
	u.mu.Unlock()
	u.stop(cs)
	return nil, f
}

// inSession runs call on the server's session, starting the server if it
// is not running. A streamable HTTP server answers a request in a session
// it ended (it restarted, or the session expired) with 404, and does not
// run it: then the session is stopped, and call runs once more in a new
// one. A call that failed otherwise, even with the SDK's
// ErrSessionMissing (the call's stream, resumed, found the session gone
// after the request reached the server), may have run, and is not made
// again. inSession returns the session call last ran on (nil when there
// was none: the error says why), and whether the server refused call in
// the new session too.
func (u *Upstream) inSession(ctx context.Context, call func(context.Context, *sdk.ClientSession) error) (_ *sdk.ClientSession, refused bool, _ error) {
	for again := true; ; again = false {
		cs, err := u.session(ctx)
		if err != nil {
			return nil, false, err
		}
		flag := new(atomic.Bool)
		err = call(context.WithValue(ctx, refusedKey{}, flag), cs)
		refused = err != nil && flag.Load() && errors.Is(err, sdk.ErrSessionMissing)
		if !refused || !again || ctx.Err() != nil {
			return cs, refused, err
		}
		u.stop(cs)
	}
}

// frameTooLarge is how the SDK's error for a message over
// sdk.DefaultMaxLineLength ends (the error itself is not exported).
const frameTooLarge = "exceeded the configured maximum line length"

// eventTooLarge is in the SDK's error for an HTTP server's event over
// the transport's MaxEventSize (the error is not exported).
const eventTooLarge = "SSE event exceeded"

// isToolError reports a JSON-RPC error response to a call: the connection
// is healthy.
func isToolError(err error) bool {
	var we *jsonrpc.Error
	return errors.As(err, &we)
}

// invalidParams reports the JSON-RPC error MCP answers a call of an
// unknown tool with (and one with arguments the tool does not take).
func invalidParams(err error) bool {
	var we *jsonrpc.Error
	return errors.As(err, &we) && we.Code == jsonrpc.CodeInvalidParams
}

// ReadResource reads uri from the server, starting it if needed, and
// again in a new session when an HTTP server ended the one it had.
func (u *Upstream) ReadResource(ctx context.Context, uri string) (*sdk.ReadResourceResult, error) {
	var res *sdk.ReadResourceResult
	cs, _, err := u.inSession(ctx, func(ctx context.Context, cs *sdk.ClientSession) (err error) {
		ctx, cancel := context.WithTimeout(ctx, u.cfg.timeout())
		defer cancel()
		res, err = cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
		return err
	})
	if cs == nil {
		return nil, err
	}
	if err != nil {
		return nil, u.cfg.maskErr(fmt.Errorf("MCP server %s: read %s: %w", u.cfg.Name, uri, err))
	}
	return res, nil
}

// GetPrompt gets the server's prompt name, starting the server if needed,
// and again in a new session when an HTTP server ended the one it had.
func (u *Upstream) GetPrompt(ctx context.Context, name string, args map[string]string) (*sdk.GetPromptResult, error) {
	var res *sdk.GetPromptResult
	cs, _, err := u.inSession(ctx, func(ctx context.Context, cs *sdk.ClientSession) (err error) {
		ctx, cancel := context.WithTimeout(ctx, u.cfg.timeout())
		defer cancel()
		res, err = cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: name, Arguments: args})
		return err
	})
	if cs == nil {
		return nil, err
	}
	if err != nil {
		return nil, u.cfg.maskErr(fmt.Errorf("MCP server %s: prompt %s: %w", u.cfg.Name, name, err))
	}
	return res, nil
}

// tail keeps the last bytes written to it: keep of them (0: stderrTail).
// A tail shown is cut shorter (see last), so that keep leaves room for
// the longest secret a cut may run into.
type tail struct {
	keep int
	mu   sync.Mutex // guards buf
	buf  []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - max(t.keep, stderrTail); over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// last returns about the last n bytes kept, cut where no secret is: the
// cut moves back to the start of a secret it would split, so that the
// secret is shown whole (and masked whole), and the bytes before the cut
// (where a secret whose start was not kept may end) are left out. With
// keep at n plus the longest secret, no part of a secret shows.
func (t *tail) last(n int, secrets []string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := string(t.buf)
	cut := max(len(b)-n, 0)
	for moved := true; moved && cut > 0; {
		moved = false
		for _, s := range secrets {
			// An occurrence that starts before the cut and ends after it.
			from := max(cut-len(s)+1, 0)
			if i := strings.Index(b[from:min(cut+len(s)-1, len(b))], s); i >= 0 && from+i < cut {
				cut, moved = from+i, true
			}
		}
	}
	return b[cut:]
}

func (t *tail) reset() {
	t.mu.Lock()
	t.buf = t.buf[:0]
	t.mu.Unlock()
}
