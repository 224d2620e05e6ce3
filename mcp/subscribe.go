package mcp

import (
	"context"
	"hash/maphash"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultScreenPoll is how often a session's subscribed screens are checked
// for changes no call of the session made, when Options.ScreenPoll is 0.
const DefaultScreenPoll = time.Second

// watch follows the screens a client subscribed to (resources/subscribe):
// after every call, and every poll interval for changes no call made (an
// interactive program that exits; bash's background jobs show only at its
// next command), a screen whose content changed is announced with
// notifications/resources/updated.
type watch struct {
	poll time.Duration // <= 0: after calls only
	seed maphash.Seed
	done chan struct{} // closed when the session's conn closes

	start sync.Once // starts the poller at the first subscription
	// mu guards seen.
	mu   sync.Mutex
	seen map[string]uint64 // subscribed screen URI -> hash of its content last announced
}

func newWatch(poll time.Duration) *watch {
	if poll == 0 {
		poll = DefaultScreenPoll
	}
	return &watch{poll: poll, seed: maphash.MakeSeed(), done: make(chan struct{}), seen: map[string]uint64{}}
}

// screenText returns the content of the screen at uri: an environment's,
// or the orchestrator's own when spec files failed to load.
func (s *conn) screenText(uri string) (string, bool) {
	name, ok := strings.CutPrefix(uri, ScreenURIPrefix)
	if !ok {
		return "", false
	}
	// A preview: a screen announced as changed is not one the model saw.
	scr, ok := s.o.Preview(name)
	return scr.Content, ok
}

// subscribeScreen starts following a screen. Other resources do not change on
// their own (a context file, an upstream server's) or change with every
// opening (the prompt): subscribing to them is refused, saying so.
func (s *conn) subscribeScreen(_ context.Context, req *sdk.SubscribeRequest) error {
	uri := req.Params.URI
	text, ok := s.screenText(uri)
	if !ok {
		if strings.HasPrefix(uri, ScreenURIPrefix) {
			return sdk.ResourceNotFoundError(uri)
		}
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "resources/subscribe: " + uri + " does not notify changes; screens do (" + ScreenURIPrefix + "<name>)"}
	}
	w := s.watch
	w.mu.Lock()
	w.seen[uri] = maphash.String(w.seed, text)
	w.mu.Unlock()
	if w.poll > 0 {
		w.start.Do(func() { go s.pollScreens() })
	}
	return nil
}

// unsubscribeScreen stops following a screen.
func (s *conn) unsubscribeScreen(_ context.Context, req *sdk.UnsubscribeRequest) error {
	s.watch.mu.Lock()
	delete(s.watch.seen, req.Params.URI)
	s.watch.mu.Unlock()
	return nil
}

// checkScreens announces the subscribed screens whose content changed since
// they were last announced (or subscribed to).
func (s *conn) checkScreens() {
	w := s.watch
	w.mu.Lock()
	var changed []string
	for uri, last := range w.seen {
		text, _ := s.screenText(uri)
		if h := maphash.String(w.seed, text); h != last {
			w.seen[uri] = h
			changed = append(changed, uri)
		}
	}
	w.mu.Unlock()
	slices.Sort(changed)
	for _, uri := range changed {
		// The SDK sends it to the sessions subscribed (this one, or none
		// once it unsubscribed meanwhile).
		if err := s.srv.ResourceUpdated(context.Background(), &sdk.ResourceUpdatedNotificationParams{URI: uri}); err != nil {
			s.log.Warn("mcp: announcing a screen's change", "uri", uri, "err", err)
		}
	}
}

// pollScreens checks the subscribed screens every poll interval until the
// session ends.
func (s *conn) pollScreens() {
	t := time.NewTicker(s.watch.poll)
	defer t.Stop()
	for {
		select {
		case <-s.watch.done:
			return
		case <-t.C:
			s.checkScreens()
		}
	}
}
