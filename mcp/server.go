package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/afero"

	"github.com/unfold-dev/unfold/gateway"
	"github.com/unfold-dev/unfold/orchestrator"
	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/skills"
)

// Options configures a Server. The zero value serves the environments alone.
type Options struct {
	// Prompt, when set, is served with the environments: its sections and a
	// section per environment form one prompt, whose tools are offered and
	// whose summarized sections open with open_sections.
	Prompt *prompt.Template
	// Params are bound to Prompt: one value per params type its sections
	// use (for a prompt file, its promptfile.Params).
	Params []any
	// FS is where open_sections writes context files and where the context
	// resources are read from. Nil means a private in-memory filesystem per
	// session: the files are then readable only as resources. For a
	// directory on disk, a [github.com/unfold-dev/unfold/rootfs.FS] keeps
	// every read and write inside it, symbolic links included.
	FS afero.Fs
	// Name and Version identify the server to clients; Name defaults to
	// "unfold", Version to the version of this module the program was
	// built with (its build information), "devel" when there is none.
	Name, Version string
	// ScreenPoll is how often the screens a client subscribed to are
	// checked for changes no call made, such as an interactive program
	// that exited (bash's background jobs show at its next command, not
	// here): 0 means DefaultScreenPoll, a negative value after calls
	// only.
	ScreenPoll time.Duration
	// Logger receives what goes wrong outside any request, such as a prompt
	// that no longer renders after a command. Nil discards it.
	Logger *slog.Logger
	// Skills, when set, are served with the environments: a skills section
	// after the prompt's sections (the prompt, when there is none), each
	// skill an MCP prompt and resources (see skills.go).
	Skills *skills.Set
	// Gateway, when set, puts its upstream MCP servers in the prompt (see
	// package gateway): each a section whose tools are offered once it is
	// opened, with find_tools and call_tool; their resources and prompts
	// are listed under the server's name. Sessions share the gateway's
	// servers; each opens sections in its own session.
	Gateway *gateway.Gateway
}

// Factory builds the orchestrator one MCP session is served with: its own
// environments, and the session they dispatch to (orchestrator.WithSession,
// needed with a prompt). The server closes it when the session ends. ctx
// is the connecting request's.
type Factory func(ctx context.Context) (*orchestrator.Orchestrator, error)

// Server serves environments over MCP, each MCP session with environments
// and a prompt session of its own: a factory builds them when the session
// starts, and they are closed when it ends, so two clients never share a
// shell. Create it with New; it is safe for concurrent use.
type Server struct {
	factory Factory
	opts    Options

	// mu guards the fields below.
	mu     sync.Mutex
	spare  *conn              // built by New to check the options, for the first session
	live   map[*conn]struct{} // sessions being served
	closed bool
}

// New returns a server whose sessions are built by factory. It builds the
// first session's orchestrator at once, so that a mistake (an environment
// named like one of the server's tools, a prompt that does not render)
// fails here rather than when a client connects; with a prompt, the
// orchestrator must have a session (orchestrator.WithSession).
func New(factory Factory, opts Options) (*Server, error) {
	if factory == nil {
		return nil, errors.New("mcp: new: nil factory")
	}
	s := &Server{factory: factory, opts: opts, live: map[*conn]struct{}{}}
	c, err := s.build(context.Background())
	if err != nil {
		return nil, fmt.Errorf("mcp: new: %w", err)
	}
	s.spare = c
	return s, nil
}

// build makes a session's conn, taking the spare one when there is one.
func (s *Server) build(ctx context.Context) (*conn, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, errors.New("the server is closed")
	}
	if c := s.spare; c != nil {
		s.spare = nil
		s.live[c] = struct{}{}
		s.mu.Unlock()
		return c, nil
	}
	s.mu.Unlock()
	o, err := s.factory(ctx)
	if err != nil {
		return nil, fmt.Errorf("build the session's environments: %w", err)
	}
	c, err := newConn(o, s.opts)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errors.Join(errors.New("the server is closed"), c.close())
	}
	s.live[c] = struct{}{}
	return c, nil
}

// release closes c and forgets it.
func (s *Server) release(c *conn) {
	s.mu.Lock()
	delete(s.live, c)
	s.mu.Unlock()
	if err := c.close(); err != nil {
		c.log.Error("mcp: closing a session's environments", "err", err)
	}
}

// watch releases c once its SDK server has no session left: the session
// ended, or never started; then it calls each of then.
func (s *Server) watch(c *conn, then ...func()) {
	var sessions []*sdk.ServerSession
	for ss := range c.srv.Sessions() {
		sessions = append(sessions, ss)
	}
	go func() {
		for _, ss := range sessions {
			_ = ss.Wait()
		}
		s.release(c)
		for _, f := range then {
			f()
		}
	}()
}

// Connect starts one MCP session over t, with environments of its own, and
// returns it; they are closed when the session ends.
func (s *Server) Connect(ctx context.Context, t sdk.Transport) (*sdk.ServerSession, error) {
	c, err := s.build(ctx)
	if err != nil {
		return nil, fmt.Errorf("mcp: connect: %w", err)
	}
	ss, err := c.srv.Connect(ctx, t, nil)
	if err != nil {
		s.release(c)
		return nil, fmt.Errorf("mcp: connect: %w", err)
	}
	s.watch(c)
	return ss, nil
}

// Run serves one session over t until the client disconnects or ctx is
// done, then closes the session's environments.
func (s *Server) Run(ctx context.Context, t sdk.Transport) error {
	ss, err := s.Connect(ctx, t)
	if err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { _ = ss.Close() })
	defer stop()
	err = ss.Wait()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// Close closes every environment the server built, which ends the
// commands that run, and ends every session. Sessions that start
// afterwards fail.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	spare := s.spare
	s.spare = nil
	live := make([]*conn, 0, len(s.live))
	for c := range s.live {
		live = append(live, c)
	}
	s.mu.Unlock()
	var errs []error
	if spare != nil {
		errs = append(errs, spare.close())
	}
	for _, c := range live {
		// The environments first: the commands that run end with them,
		// and so do the calls waiting on those commands, which closing
		// a session waits for.
		errs = append(errs, c.close())
		for ss := range c.srv.Sessions() {
			_ = ss.Close()
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("mcp: close: %w", err)
	}
	return nil
}
