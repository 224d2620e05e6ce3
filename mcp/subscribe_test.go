package mcp_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/mcp"
	"github.com/unfold-dev/unfold/orchestrator"
	"github.com/unfold-dev/unfold/session"
)

// ticker is an environment whose screen the test changes without a
// command, as a background job's output would.
type ticker struct {
	mu     sync.Mutex // guards screen
	screen string
}

func (p *ticker) Execute(context.Context, string) (envs.Response, error) {
	return envs.Response{Output: "ok", Success: true}, nil
}

func (p *ticker) Screen() (envs.Screen, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return envs.Screen{Content: p.screen}, nil
}

func (p *ticker) set(screen string) {
	p.mu.Lock()
	p.screen = screen
	p.mu.Unlock()
}

// subscriber is a client that records the URIs of
// notifications/resources/updated and the acknowledgments of its
// subscriptions (the protocol of 2026-07-28 subscribes by a
// subscriptions/listen request that the call to Subscribe does not wait
// for).
type subscriber struct {
	*sdk.ClientSession
	updated chan string
	acked   chan struct{}
}

func subscribe(t *testing.T, transport sdk.Transport, version string) *subscriber {
	t.Helper()
	s := &subscriber{updated: make(chan string, 64), acked: make(chan struct{}, 8)}
	cl := sdk.NewClient(&sdk.Implementation{Name: "test"}, &sdk.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *sdk.ResourceUpdatedNotificationRequest) { s.updated <- req.Params.URI },
	})
	cl.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			if method == "notifications/subscriptions/acknowledged" {
				s.acked <- struct{}{}
			}
			return next(ctx, method, req)
		}
	})
	cs, err := cl.Connect(t.Context(), transport, &sdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		t.Fatalf("got protocol version %s, want %s", got, version)
	}
	s.ClientSession = cs
	return s
}

// next returns the next updated URI, failing the test if none comes: a
// guard against hanging, not a timing assertion.
func (s *subscriber) next(t *testing.T) string {
	t.Helper()
	select {
	case uri := <-s.updated:
		return uri
	case <-time.After(30 * time.Second):
		t.Fatal("no notifications/resources/updated")
		return ""
	}
}

// newProtocol is the protocol version whose subscriptions are
// subscriptions/listen requests.
const newProtocol = "2026-07-28"

// TestScreenSubscriptions subscribes to two screens, over the in-memory
// transport and over streamable HTTP, with the protocol of 2025-11-25
// (resources/subscribe) and that of 2026-07-28 (subscriptions/listen): a
// command that changes a screen is announced once, one that leaves it as
// it was is not, and a change no command made is found by polling. With
// resources/subscribe, which answers once done, after unsubscribing
// nothing more comes, and resources that do not change on their own refuse
// a subscription.
func TestScreenSubscriptions(t *testing.T) {
	inMemory := func(t *testing.T, s *mcp.Server) sdk.Transport {
		st, ct := sdk.NewInMemoryTransports()
		ss, err := s.Connect(t.Context(), st)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ss.Close() })
		return ct
	}
	overHTTP := func(t *testing.T, s *mcp.Server) sdk.Transport {
		hs := httptest.NewServer(s.Handler(mcp.HTTPOptions{}))
		t.Cleanup(hs.Close)
		return &sdk.StreamableClientTransport{Endpoint: hs.URL}
	}
	// The SDK's streamable HTTP handler, which keeps sessions, speaks
	// 2025-11-25 at most.
	for _, tt := range []struct {
		name, version string
		connect       func(*testing.T, *mcp.Server) sdk.Transport
	}{
		{"in memory 2025-11-25", "2025-11-25", inMemory},
		{"in memory " + newProtocol, newProtocol, inMemory},
		{"http 2025-11-25", "2025-11-25", overHTTP},
	} {
		t.Run(tt.name, func(t *testing.T) { testScreenSubscriptions(t, tt.connect, tt.version) })
	}
}

// TestScreenAnnouncedAfterCall turns polling off: a command that changes a
// subscribed screen is announced by the call itself.
func TestScreenAnnouncedAfterCall(t *testing.T) {
	s, err := mcp.New(counters(t), mcp.Options{ScreenPoll: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	st, ct := sdk.NewInMemoryTransports()
	ss, err := s.Connect(t.Context(), st)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	c := subscribe(t, ct, "2025-11-25")
	uri := mcp.ScreenURIPrefix + "counter"
	if err := c.Subscribe(t.Context(), &sdk.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CallTool(t.Context(), &sdk.CallToolParams{Name: "counter", Arguments: map[string]any{"command": "add 1"}}); err != nil {
		t.Fatal(err)
	}
	if got := c.next(t); got != uri {
		t.Errorf("got an update of %s, want %s", got, uri)
	}
}

func testScreenSubscriptions(t *testing.T, connect func(*testing.T, *mcp.Server) sdk.Transport, version string) {
	var mu sync.Mutex // guards tick
	var tick *ticker
	s, err := mcp.New(func(context.Context) (*orchestrator.Orchestrator, error) {
		sess := session.New()
		o, err := orchestrator.New(orchestrator.WithSession(sess))
		if err != nil {
			return nil, err
		}
		withCounter(t)(o, sess)
		p := &ticker{screen: "quiet"}
		mu.Lock()
		tick = p
		mu.Unlock()
		return o, o.Register("ticker", p)
	}, mcp.Options{ScreenPoll: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	c := subscribe(t, connect(t, s), version)
	if caps := c.InitializeResult().Capabilities; caps.Resources == nil || !caps.Resources.Subscribe {
		t.Fatalf("got capabilities %+v, want resources with subscribe", caps.Resources)
	}
	mu.Lock()
	p := tick
	mu.Unlock()
	const counterURI, tickerURI = mcp.ScreenURIPrefix + "counter", mcp.ScreenURIPrefix + "ticker"
	for _, uri := range []string{counterURI, tickerURI} {
		if err := c.Subscribe(t.Context(), &sdk.SubscribeParams{URI: uri}); err != nil {
			t.Fatalf("subscribe %s: %v", uri, err)
		}
		if version == newProtocol {
			select {
			case <-c.acked:
			case <-time.After(30 * time.Second):
				t.Fatalf("subscribe %s: never acknowledged", uri)
			}
		}
	}
	run := func(command string) {
		t.Helper()
		if _, err := c.CallTool(t.Context(), &sdk.CallToolParams{Name: "counter", Arguments: map[string]any{"command": command}}); err != nil {
			t.Fatal(err)
		}
	}

	run("add 2")
	if uri := c.next(t); uri != counterURI {
		t.Errorf("after add 2: got an update of %s, want %s", uri, counterURI)
	}
	// The screen stays as it was (Total: 2, add used): nothing is
	// announced before the ticker's own change, which comes later on the
	// same stream.
	run("add 0")
	p.set("a job ended")
	if uri := c.next(t); uri != tickerURI {
		t.Errorf("after add 0 and a change of the ticker: got an update of %s, want %s alone", uri, tickerURI)
	}
	if version == newProtocol {
		return
	}

	if err := c.Unsubscribe(t.Context(), &sdk.UnsubscribeParams{URI: counterURI}); err != nil {
		t.Fatal(err)
	}
	run("add 5")
	p.set("another job ended")
	if uri := c.next(t); uri != tickerURI {
		t.Errorf("after unsubscribing from the counter: got an update of %s, want %s", uri, tickerURI)
	}
	select {
	case uri := <-c.updated:
		t.Errorf("got a further update of %s, want none: each change is announced once", uri)
	default:
	}

	for _, tt := range []struct{ uri, want string }{
		{mcp.ScreenURIPrefix + "nope", "not found"},
		{mcp.ContextURIPrefix + "notes.md", "does not notify changes; screens do (unfold://screen/<name>)"},
	} {
		err := c.Subscribe(t.Context(), &sdk.SubscribeParams{URI: tt.uri})
		var we *jsonrpc.Error
		if !errors.As(err, &we) || !strings.Contains(strings.ToLower(we.Message), strings.ToLower(tt.want)) {
			t.Errorf("subscribe %s: got %v, want an error saying %q", tt.uri, err, tt.want)
		}
	}
}
