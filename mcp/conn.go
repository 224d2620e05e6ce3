package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/afero"

	"github.com/unfold-dev/unfold/gateway"
	"github.com/unfold-dev/unfold/orchestrator"
	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/tools"
)

// conn is what one MCP session is served with: its own orchestrator,
// prompt session, SDK server and tool list. Two clients never share one.
type conn struct {
	o    *orchestrator.Orchestrator
	sess *session.Session
	fs   afero.Fs
	log  *slog.Logger
	srv  *sdk.Server
	help *tools.Tool
	// disc renders the prompt with the environments' sections and opens
	// its sections; nil without Options.Prompt.
	disc   *prompt.Disclosure
	tmpl   *prompt.Template // Options.Prompt
	params []any            // Options.Params
	gw     *gateway.Gateway // Options.Gateway
	// unsubscribe stops the gateway's change notices; nil without one.
	unsubscribe func()
	watch       *watch // the screens the client subscribed to

	// mu guards the fields below and serializes the updates of the SDK's
	// tool and resource lists, so that the lists match what was rendered.
	mu sync.Mutex
	// names and envTools are the orchestrator's environments as of its
	// generation gen (see followEnvs).
	names    []string               // environment names, sorted
	envTools map[string]*tools.Tool // each environment's command tool, by name
	gen      uint64
	screens  map[string]string    // screen resources registered: URI -> description
	offered  map[string]offered   // tool name -> what was registered
	contexts map[string]bool      // context files registered as resources
	tools    map[string]*sdk.Tool // the registered tools, for the help tool
	upstream map[string]*listed   // upstream resources and prompts registered, by server

	closeOnce sync.Once
	closeErr  error
}

// newConn builds what one session is served with around o, which it owns
// from then on: closing the conn closes o, and so does a failure here.
func newConn(o *orchestrator.Orchestrator, opts Options) (c *conn, err error) {
	if o == nil {
		return nil, errors.New("the factory returned a nil orchestrator")
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, o.Close())
		}
	}()
	s := &conn{
		o:        o,
		sess:     o.Session(),
		fs:       opts.FS,
		log:      opts.Logger,
		screens:  make(map[string]string),
		offered:  make(map[string]offered),
		contexts: make(map[string]bool),
		tools:    make(map[string]*sdk.Tool),
		upstream: make(map[string]*listed),
		watch:    newWatch(opts.ScreenPoll),
	}
	if s.fs == nil {
		s.fs = afero.NewMemMapFs()
	}
	if s.log == nil {
		s.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if err := s.takeEnvs(); err != nil {
		return nil, err
	}
	help, err := s.newHelpTool()
	if err != nil {
		return nil, err
	}
	s.help = help
	if opts.Prompt, err = s.skillsPrompt(opts); err != nil {
		return nil, err
	}
	var changes uint64
	if opts.Prompt != nil || opts.Gateway != nil {
		if s.sess == nil {
			return nil, errors.New("a prompt or a gateway needs the orchestrator's session; create the orchestrator with orchestrator.WithSession")
		}
		s.tmpl, s.params, s.gw = opts.Prompt, opts.Params, opts.Gateway
		if s.gw != nil {
			changes = s.gw.Changes() // see the subscription below
		}
		p, err := s.composePrompt()
		if err != nil {
			return nil, err
		}
		// A client reads the prompt when it chooses to: an opening answers
		// with the sections' content.
		s.disc, err = prompt.NewDisclosure(s.sess, s.fs, []prompt.Part{{Prompt: p}}, prompt.WithContentAnswers())
		if err != nil {
			return nil, err
		}
	}
	s.srv = sdk.NewServer(implementation(opts), &sdk.ServerOptions{
		Instructions: s.instructions() + skillsInstructions(opts.Skills),
		Capabilities: &sdk.ServerCapabilities{
			Tools:     &sdk.ToolCapabilities{ListChanged: true},
			Resources: &sdk.ResourceCapabilities{ListChanged: true, Subscribe: true},
			Prompts:   &sdk.PromptCapabilities{ListChanged: true},
		},
		SubscribeHandler:   s.subscribeScreen,
		UnsubscribeHandler: s.unsubscribeScreen,
	})
	s.srv.AddReceivingMiddleware(s.followOnList)
	if err := s.addResources(); err != nil {
		return nil, err
	}
	s.addSkills(opts.Skills)
	if err := s.sync(); err != nil {
		return nil, err
	}
	if s.gw != nil {
		s.syncUpstreams()
		s.unsubscribe = s.gw.Subscribe(s.upstreamChanged)
		if s.gw.Changes() != changes {
			s.upstreamChanged(nil) // a server changed before the subscription
		}
	}
	return s, nil
}

// implementation is how the server introduces itself: Options.Name and
// Options.Version, by default unfold and the version of this module the
// program was built with. What it offers is said by the instructions: the
// server's identity goes with every tools/list result of the protocol of
// 2026-07-28, so it stays short.
func implementation(opts Options) *sdk.Implementation {
	impl := &sdk.Implementation{Name: opts.Name, Version: opts.Version}
	if impl.Name == "" {
		impl.Name = "unfold"
	}
	if impl.Version == "" {
		impl.Version = moduleVersion()
	}
	return impl
}

// close shuts the session's environments down; it is idempotent.
func (s *conn) close() error {
	s.closeOnce.Do(func() {
		if s.unsubscribe != nil {
			s.unsubscribe()
		}
		close(s.watch.done)
		s.closeErr = s.o.Close()
	})
	return s.closeErr
}

// instructions tells clients what the server offers.
func (s *conn) instructions() string {
	var parts []string
	if len(s.names) > 0 || s.gw == nil {
		parts = append(parts, "Persistent environments ("+joinOr(s.names, "none")+"): each is a tool of the same name that runs a command and returns its output, "+
			"whether it succeeded and the environment's screen. Each tool's description is the environment's help: long for commands not used yet, short once used. "+
			"Screens are resources ("+ScreenURIPrefix+"<name>); subscribe to one to be told when it changes.")
	}
	if s.tmpl != nil {
		parts = append(parts, "The prompt is the resource "+PromptURI+"; call "+prompt.OpenSectionsName+" to open its summarized sections: "+
			"content is written to context files (resources "+ContextURIPrefix+"<key>.md) and sections with tools add them to the tool list.")
	}
	if s.gw != nil {
		parts = append(parts, gatewayInstructions(s.gw))
	}
	parts = append(parts, "Call "+tools.HelpName+" for an overview.")
	return strings.Join(parts, " ")
}

// offer is a tool to register: the unfold tool and the description to show.
type offer struct {
	t    *tools.Tool
	desc string
}

// offered is what a tool was registered with; a change registers it again.
type offered struct {
	desc  string
	hints tools.Hints
}

// annotations are a tool's hints as MCP tool annotations (a tool without
// hints has tools.AssumedHints). A hint at the value MCP assumes when it is
// absent is left out, and so is destructiveHint for a read-only tool, where
// it means nothing: the tool list is sent with every turn, and only what
// differs from the assumption informs a client. The SDK always writes
// readOnlyHint and idempotentHint.
func annotations(t *tools.Tool) *sdk.ToolAnnotations {
	h, _ := t.Hints()
	a := &sdk.ToolAnnotations{ReadOnlyHint: h.ReadOnly, IdempotentHint: h.Idempotent}
	if !h.ReadOnly && !h.Destructive {
		a.DestructiveHint = new(false)
	}
	if !h.OpenWorld {
		a.OpenWorldHint = new(false)
	}
	return a
}

// sync follows the orchestrator's environments (see followEnvs), renders
// the prompt (if any) and brings the SDK's tool list in line with what
// should be offered now, registering again the tools whose description or
// hints changed. The SDK notifies clients of the change.
func (s *conn) sync() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.followEnvs(); err != nil {
		return fmt.Errorf("follow the environments: %w", err)
	}
	var list []*tools.Tool
	if s.disc != nil {
		if err := s.disc.Render(); err != nil {
			return fmt.Errorf("render the prompt: %w", err)
		}
		list = s.disc.Tools()
	} else {
		for _, name := range s.names {
			list = append(list, s.envTools[name])
		}
	}
	list = append(list, s.help)
	want := make(map[string]offer, len(list))
	order := make([]string, 0, len(list))
	for _, t := range list {
		desc := t.Description()
		if s.envTools[t.Name()] == t {
			desc = s.envDescription(t.Name())
		}
		want[t.Name()] = offer{t, desc}
		order = append(order, t.Name())
	}
	var gone []string
	for name := range s.offered {
		if _, ok := want[name]; !ok {
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		slices.Sort(gone)
		s.srv.RemoveTools(gone...)
		for _, name := range gone {
			delete(s.offered, name)
			delete(s.tools, name)
		}
	}
	for _, name := range order {
		w := want[name]
		hints, _ := w.t.Hints()
		if was, ok := s.offered[name]; ok && was == (offered{w.desc, hints}) {
			continue
		}
		st := &sdk.Tool{Name: name, Description: w.desc, InputSchema: w.t.InputSchema(), Annotations: annotations(w.t)}
		h := s.callTool
		if s.envTools[name] == w.t {
			st.OutputSchema = w.t.OutputSchema()
			h = s.callEnv
		}
		if err := addTool(s.srv, st, h); err != nil {
			s.log.Warn("mcp: a tool left out", "tool", name, "err", err)
			continue
		}
		s.offered[name] = offered{w.desc, hints}
		s.tools[name] = st
	}
	return nil
}

// addTool adds t to srv, or returns why the SDK refused it. The SDK
// panics on a tool it cannot serve (an input schema whose type is not
// "object", say) before it changes anything; a tool that reached the
// prompt from elsewhere (an upstream server) must not bring down every
// session, so the panic becomes an error.
func addTool(srv *sdk.Server, t *sdk.Tool, h sdk.ToolHandler) error {
	return guard(func() { srv.AddTool(t, h) })
}

// refresh syncs after a call changed something, logging a failure: the
// call's result still goes back to the client, and the tool list stays as
// it was. Subscribed screens that changed are announced.
func (s *conn) refresh() {
	if err := s.sync(); err != nil {
		s.log.Error("mcp: updating the tool list", "err", err)
	}
	s.checkScreens()
}

// followOnList answers tools/list and resources/list with the lists of
// the environments there are now: spec files changed while the client was
// idle are picked up first. When none changed, the lists stand as they
// are.
func (s *conn) followOnList(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if method == "tools/list" || method == "resources/list" {
			s.o.ReloadSpecs()
			s.mu.Lock()
			stale := s.o.Generation() != s.gen
			s.mu.Unlock()
			if stale {
				if err := s.sync(); err != nil {
					s.log.Error("mcp: updating the tool list", "err", err)
				}
			}
		}
		return next(ctx, method, req)
	}
}

// current returns the tool to run for name: help, or one the prompt offers
// now.
func (s *conn) current(name string) *tools.Tool {
	if name == tools.HelpName {
		return s.help
	}
	if s.disc == nil {
		return nil
	}
	for _, t := range s.disc.Tools() {
		if t.Name() == name {
			return t
		}
	}
	return nil
}

// toolContext is what the unfold tools get when an MCP client calls them.
func (s *conn) toolContext() tools.Context {
	return tools.Context{Session: s.sess, FS: s.fs}
}

// callTool runs a tool that is not an environment's: help, open_sections,
// or a tool of the prompt's sections. A failed result is an MCP tool error
// the model reads; only infrastructure faults are protocol errors.
func (s *conn) callTool(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	name := req.Params.Name
	t := s.current(name)
	if t == nil {
		return textResult(true, fmt.Sprintf("The tool %s is not offered now; list the tools again.", name)), nil
	}
	var res tools.Result
	var err error
	ctx = s.withReadSaved(withProgress(ctx, req))
	if s.disc != nil {
		res, err = s.disc.Call(ctx, t, req.Params.Arguments)
	} else {
		res, err = t.Call(ctx, s.toolContext(), req.Params.Arguments)
	}
	if err != nil {
		return nil, err
	}
	if up, ok := res.Value.(*sdk.CallToolResult); ok {
		// An upstream server's result goes back as the gateway gave it
		// (its text cut to the output budget when longer).
		return up, nil
	}
	msg := res.Message
	if op, ok := res.Value.(*prompt.Opened); ok && res.Success && len(op.Files) > 0 {
		msg += s.addContextResources(op.Files)
	}
	if name != tools.HelpName {
		s.refresh()
	}
	return textResult(!res.Success, msg), nil
}

// textResult is a tool result of one text block.
func textResult(isError bool, text string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}, IsError: isError}
}

// joinOr joins list with commas, or returns none for an empty list.
func joinOr(list []string, none string) string {
	if len(list) == 0 {
		return none
	}
	return strings.Join(list, ", ")
}
