package gateway

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
)

// Options configures a Gateway.
type Options struct {
	// CacheDir holds the manifests, one NAME.json per server (for a
	// project: filepath.Join(root, CacheDir)); "" caches nothing.
	CacheDir string
	// Logger receives what goes wrong outside any call. Nil discards it.
	Logger *slog.Logger
	// Key is the key of the gateway's section (default "mcp").
	Key string
	// CachedOnly starts no server in New: a server without a cached
	// manifest shows as not started until it is used (for a dry run).
	CachedOnly bool
	// OutputBudget bounds the tokens of a tool's result (0:
	// envs.DefaultBudget; negative: no bound): see Section.
	OutputBudget int
}

// Gateway holds the configured upstream servers. Create it with New; it
// is safe for concurrent use, and one Gateway may serve many prompts and
// sessions at once (each opens sections in its own session).
type Gateway struct {
	ups      []*Upstream // in configuration order
	cacheDir string
	log      *slog.Logger
	key      string
	budget   int // Options.OutputBudget

	// ctx bounds what runs in the background (the first starts, the
	// re-lists); Close cancels it.
	ctx    context.Context
	cancel context.CancelFunc
	starts sync.WaitGroup // the first starts New began, and those calls began
	bg     sync.WaitGroup // the re-list loops
	ready  chan struct{}  // closed when they ended

	changes atomic.Uint64 // how many times a manifest changed

	// mu guards subs and next.
	mu   sync.Mutex
	subs map[int]func(*Upstream)
	next int
}

// New returns a gateway for servers. A server whose manifest is cached
// for its configuration is not started; the others start in the
// background, in parallel, to list what they offer (and stay running):
// New does not wait for them, and their sections say they are starting
// until they have listed their tools, when the subscribers are told
// ([Gateway.Subscribe]); [Gateway.Wait] waits for them. A server that
// fails to start does not fail New: its section says so, and find_tools
// and call_tool try it again, with backoff. ctx bounds the starts and
// everything the gateway does in the background.
func New(ctx context.Context, servers []ServerConfig, opts Options) (*Gateway, error) {
	g := &Gateway{cacheDir: opts.CacheDir, log: opts.Logger, key: opts.Key, budget: opts.OutputBudget, subs: map[int]func(*Upstream){}, ready: make(chan struct{})}
	if g.log == nil {
		g.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if g.key == "" {
		g.key = "mcp"
	}
	seen := map[string]string{}
	for _, c := range servers {
		if !serverName().MatchString(c.Name) {
			return nil, fmt.Errorf("gateway: new: server %q: names may use letters, digits, '_' and '-' (at most 32, starting with a letter or digit)", c.Name)
		}
		key := strings.ToLower(c.Name)
		if other, dup := seen[key]; dup {
			return nil, fmt.Errorf("gateway: new: servers %q and %q differ only in case; rename one", other, c.Name)
		}
		seen[key] = c.Name
		if c.Connect == nil && strings.TrimSpace(c.Command) == "" && strings.TrimSpace(c.URL) == "" {
			at := ""
			if c.File != "" {
				at = " (" + c.File + ")"
			}
			return nil, fmt.Errorf("gateway: new: server %q%s: no command to start and no url to reach; set one (ServerConfig.Command or URL, or Connect in Go)", c.Name, at)
		}
		u := &Upstream{cfg: c, hash: c.Hash(), g: g, tail: &tail{keep: stderrTail + c.longestMasked()}}
		if m, ok := readManifest(g.cacheDir, c); ok {
			u.man, u.cached = m, true
		}
		g.ups = append(g.ups, u)
	}
	g.ctx, g.cancel = context.WithCancel(ctx)
	for _, u := range g.ups {
		if u.cached || opts.CachedOnly {
			continue
		}
		// Marked as starting now, so that a section built before the
		// goroutine runs says so.
		u.mu.Lock()
		u.starting = make(chan struct{})
		u.mu.Unlock()
		g.starts.Go(func() { u.runReported("gateway: starting an MCP server") })
	}
	go func() {
		g.starts.Wait()
		close(g.ready)
	}()
	return g, nil
}

// Wait waits until the servers New started have listed what they offer
// or failed, or until ctx is done (its error then).
func (g *Gateway) Wait(ctx context.Context) error {
	select {
	case <-g.ready:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Starting returns the names of the servers being started, in
// configuration order.
func (g *Gateway) Starting() []string {
	var names []string
	for _, u := range g.ups {
		if u.Starting() {
			names = append(names, u.cfg.Name)
		}
	}
	return names
}

// Changes counts the changes of the servers' manifests (each call of the
// subscribers): a caller that builds the section, then subscribes, builds
// it again when the count moved in between.
func (g *Gateway) Changes() uint64 { return g.changes.Load() }

// Key returns the key of the gateway's section.
func (g *Gateway) Key() string { return g.key }

// Upstreams returns the servers, in configuration order.
func (g *Gateway) Upstreams() []*Upstream { return append([]*Upstream(nil), g.ups...) }

// Upstream returns the server called name.
func (g *Gateway) Upstream(name string) (*Upstream, bool) {
	for _, u := range g.ups {
		if u.cfg.Name == name {
			return u, true
		}
	}
	return nil, false
}

// Subscribe calls fn (from another goroutine) whenever a server's manifest
// changes: it was listed again after the server said its tools, resources
// or prompts changed, or listed for the first time. Build the section again
// and replace it (prompt.Disclosure.Replace). The returned func stops the
// calls.
func (g *Gateway) Subscribe(fn func(*Upstream)) (cancel func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	id := g.next
	g.next++
	g.subs[id] = fn
	return func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		delete(g.subs, id)
	}
}

// changed tells the subscribers that u's manifest changed.
func (g *Gateway) changed(u *Upstream) {
	g.changes.Add(1)
	g.mu.Lock()
	fns := make([]func(*Upstream), 0, len(g.subs))
	for _, fn := range g.subs {
		fns = append(fns, fn)
	}
	g.mu.Unlock()
	for _, fn := range fns {
		fn(u)
	}
}

// Close stops every running server, and the starts under way, in
// parallel, within [CloseTimeout]: a stdio server gets its stdin closed,
// then SIGTERM and SIGKILL, with everything it started (see Upstream).
// The error names what was still stopping at the deadline.
func (g *Gateway) Close() error {
	g.cancel()
	return g.closeAll()
}
