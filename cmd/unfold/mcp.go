package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/unfold-dev/unfold/internal/readfile"
	"github.com/unfold-dev/unfold/mcp"
	"github.com/unfold-dev/unfold/orchestrator"
	"github.com/unfold-dev/unfold/promptfile"
	"github.com/unfold-dev/unfold/rootfs"
)

const mcpHelp = `Usage: unfold mcp [--project DIR] [--prompt FILE.md] [--skills DIR] [--mcp-config FILE] [--http ADDR [--token-file FILE] [--max-sessions N]]

Serves the environments over the Model Context Protocol, on stdin and stdout
(for clients that start the server) or, with --http, over streamable HTTP at
http://ADDR/mcp. Each environment (the built-ins and DIR/env/*.json) is a tool
of the same name: give it a command and optionally a timeout in seconds; it
returns the output, whether the command succeeded and the environment's screen.
Each tool's description is the environment's help, long for commands not used
yet and short once used; clients are told when it changes. Spec files added,
changed or removed in DIR/env while the server runs are followed after the
next call (or tools/list): their tools come and go, and clients are told the
list changed. Every tool says what it does in MCP's annotations (bash and
python may change anything and reach the network, the editor only its files;
a spec file's "hints" say it for its environment). The help tool describes everything; screens are
resources (unfold://screen/<name>), and a client subscribed to one is told
when it changes.

With --prompt, the prompt file's sections and the environments' screens form
one prompt (the resource unfold://prompt): open_sections opens its summarized
sections, writing content to DIR/context/<key>.md (also the resource
unfold://context/<key>.md) and adding the tools of sections that carry them.

Skills in DIR/.claude/skills, DIR/.agents/skills and DIR/skills, and in
each --skills DIR, form a skills section that open_sections opens like the
prompt's; each skill is also an MCP prompt named after it and the resource
unfold://skill/<name>, and each of its files unfold://skill/<name>/<path>,
for clients without skills support. Skills are read when the server starts:
their names, descriptions and lists of files stay as they were then (each
skill's instructions and files are read when asked for); restart the server
after adding, renaming or removing a skill, or editing its front matter or
adding a file to it.

MCP servers configured in DIR/.mcp.json and in --mcp-config files (the
mcpServers format of Claude Code, Claude Desktop and Cursor) are put behind
this one, each a summarized section: open_sections with key "mcp.NAME" offers
its tools as NAME__TOOL (clients are told the list changed), find_tools
searches every tool and opens the best matches, and call_tool calls an open
tool for clients that keep their first tool list. Their manifests are
cached in DIR/.unfold/mcp, so a server starts only when a tool of it is
called. A server without a cached manifest starts in the background: its
section says it is starting until it has listed its tools; one that failed
to start is tried again by find_tools and call_tool. An unfold started as
an upstream server by another reads no .mcp.json, and one nested deeper
than that starts no MCP server at all.

Every MCP session has environments of its own: two HTTP clients never share
a shell. An HTTP session idle for 30 minutes ends and its environments are
shut down; a call whose client closed the connection is cancelled. At most
--max-sessions sessions are open at once (default 32); past it, a client
that starts one gets 503 until a session ends. Serving on an address other
than loopback needs a bearer token, read from
--token-file or from the ` + tokenEnv + ` environment variable; with a token,
every request must carry it (Authorization: Bearer TOKEN).

The server stops when stdin ends (stdio), shutting every environment down,
exit status 0. SIGINT or SIGTERM interrupt the commands that run and shut
down within 5 seconds, exit status 130 or 143.
`

// tokenEnv names the environment variable that may hold the HTTP bearer
// token.
const tokenEnv = "UNFOLD_MCP_TOKEN"

func runMCP(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mcp", flag.ContinueOnError)
	project := fs.String("project", ".", "the project `DIR`: environments work there, spec files come from DIR/env/*.json, context files go to DIR/context")
	names := fs.String("builtins", "all", builtinsUsage())
	promptPath := fs.String("prompt", "", "a prompt `FILE.md` to serve with the environments")
	paramsPath := fs.String("params", "", "a JSON `file` with the params the prompt file's templates see")
	outputBudget := fs.Int("output-budget", orchestrator.DefaultOutputBudget, budgetUsage)
	addr := fs.String("http", "", "serve streamable HTTP on `ADDR` (like 127.0.0.1:8080; port 0 picks one) instead of stdio")
	var mcpFiles mcpConfigs
	fs.Var(&mcpFiles, "mcp-config", mcpConfigUsage)
	maxSessions := fs.Int("max-sessions", mcp.DefaultMaxSessions, "with --http, the most sessions open at once (`N`), each with environments of its own")
	tokenFile := fs.String("token-file", "", "a `FILE` holding the bearer token HTTP clients must send (default: $"+tokenEnv+"); required off loopback")
	skillDirs := skillsFlag(fs)
	if code := parseFlags(fs, mcpHelp, args, stdout, stderr); code >= 0 {
		return code
	}
	if err := checkBudget(*outputBudget); err != nil {
		fmt.Fprintf(stderr, "unfold mcp: %v\n", err)
		return 2
	}
	if *paramsPath != "" && *promptPath == "" {
		fmt.Fprintln(stderr, "unfold mcp: --params needs --prompt")
		return 2
	}
	var token string
	if *addr != "" {
		var err error
		if token, err = readToken(*tokenFile); err != nil {
			fmt.Fprintf(stderr, "unfold mcp: %v\n", err)
			return 2
		}
		if err := checkAddr(*addr, token != ""); err != nil {
			fmt.Fprintf(stderr, "unfold mcp: --http %s: %v\n", *addr, err)
			return 2
		}
		if *maxSessions <= 0 {
			fmt.Fprintf(stderr, "unfold mcp: --max-sessions %d: give a number of sessions above 0\n", *maxSessions)
			return 2
		}
	} else if *tokenFile != "" {
		fmt.Fprintln(stderr, "unfold mcp: --token-file needs --http")
		return 2
	} else if given(fs, "max-sessions") {
		fmt.Fprintln(stderr, "unfold mcp: --max-sessions needs --http: on stdio there is one session")
		return 2
	}
	if _, err := projectDir(*project); err != nil {
		fmt.Fprintf(stderr, "unfold mcp: %v\n", err)
		return 2
	}
	// Context files stay inside the project, symbolic links included.
	cfs, err := rootfs.New(*project)
	if err != nil {
		fmt.Fprintf(stderr, "unfold mcp: --project: %v\n", err)
		return 1
	}
	defer cfs.Close()
	opts := mcp.Options{
		Version: readVersion().Version,
		FS:      cfs,
		Logger:  slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
	var file *promptfile.File // the --prompt file
	if *promptPath != "" {
		f, err := promptfile.Load(*promptPath)
		if err != nil {
			fmt.Fprintf(stderr, "unfold mcp: %v\n", err)
			return 1
		}
		var params promptfile.Params
		if *paramsPath != "" {
			data, err := readfile.Read(*paramsPath, maxParamsBytes)
			if err == nil {
				if params, err = promptfile.DecodeParams(data); err != nil {
					err = fmt.Errorf("%s: %w", *paramsPath, err)
				}
			}
			if err != nil {
				fmt.Fprintf(stderr, "unfold mcp: --params: %v\n", err)
				return 1
			}
		}
		if params == nil {
			params = promptfile.Params{}
		}
		// Every template of the file runs once now, those of summarized
		// sections too, so that a param the file misses is named before
		// the server starts, not when the model opens the section.
		if err := f.Check(params); err != nil {
			fmt.Fprintf(stderr, "unfold mcp: %v\n", paramsHint(err, *paramsPath))
			return 1
		}
		opts.Prompt, opts.Params, file = f.Template(), []any{params}, f
	}

	set, err := loadSkills(*project, *skillDirs, stderr, "mcp")
	if err != nil {
		fmt.Fprintf(stderr, "unfold mcp: %v\n", err)
		return 1
	}
	if file != nil {
		if err := skillsClash(*promptPath, file, set); err != nil {
			fmt.Fprintf(stderr, "unfold mcp: %v\n", err)
			return 1
		}
	}
	opts.Skills = set

	// Signals are handled from here on. The upstream servers start in the
	// background: the client is answered while a slow one starts, and
	// its section joins when it is ready.
	stop := stopOnSignal("mcp", stderr)
	defer stop.stop()
	survivePipe()
	g, err := startGateway(stop.ctx, *project, mcpFiles, false, *outputBudget, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "unfold mcp: %v\n", err)
		return 1
	}
	if g != nil {
		defer g.Close()
		opts.Gateway = g
	}
	factory := func(context.Context) (*orchestrator.Orchestrator, error) {
		return newOrchestrator(*project, orchestrator.DefaultMaxLineBytes, *names, stderr, orchestrator.WithOutputBudget(*outputBudget))
	}
	s, err := mcp.New(factory, opts)
	if err != nil {
		if file != nil {
			err = promptFileError(file, *paramsPath, err)
		}
		fmt.Fprintf(stderr, "unfold mcp: %v\n", err)
		return 1
	}
	ctx := stop.ctx
	// A signal closes every session's environments at once: the commands
	// that run end with them, and so do the calls waiting on those
	// commands.
	context.AfterFunc(ctx, func() { closeServer(s, stderr) })
	if *addr != "" {
		var ln net.Listener
		if ln, err = net.Listen("tcp", *addr); err == nil {
			err = serveHTTP(ctx, s.Handler(mcp.HTTPOptions{Token: token, MaxSessions: *maxSessions}), ln, defaultHTTPTimeouts, stderr)
		}
		closeServer(s, stderr)
		if err != nil && !errors.Is(err, context.Canceled) {
			fmt.Fprintf(stderr, "unfold mcp: %v\n", err)
			return 1
		}
		return stopped(stop, stderr)
	}
	rc, ok := stdin.(io.ReadCloser)
	if !ok {
		rc = io.NopCloser(stdin)
	}
	err = s.Run(ctx, &mcp.StdioTransport{Reader: rc, Writer: nopWriteCloser{stdout}})
	code := closeServer(s, stderr)
	switch {
	case stop.signal() != nil:
		return stopped(stop, stderr)
	case err != nil && !errors.Is(err, io.EOF):
		fmt.Fprintf(stderr, "unfold mcp: %v\n", err)
		return 1
	}
	return code
}

// stopped reports a signal that stopped the server and returns the exit
// status it calls for; 0 without one.
func stopped(stop *stopper, stderr io.Writer) int {
	if stop.signal() == nil {
		return 0
	}
	fmt.Fprintf(stderr, "unfold mcp: stopped by %s; the environments were shut down\n", stop.name())
	return stop.code()
}

// closeServer shuts every session's environments down. A failure is
// reported but does not fail the command: the protocol ended normally.
func closeServer(s *mcp.Server, stderr io.Writer) int {
	if err := s.Close(); err != nil {
		fmt.Fprintf(stderr, "unfold mcp: %v\n", err)
	}
	return 0
}

// readToken reads the bearer token from file, or else from the
// environment; empty when neither has one.
func readToken(file string) (string, error) {
	if file == "" {
		return strings.TrimSpace(os.Getenv(tokenEnv)), nil
	}
	data, err := readfile.Read(file, maxTokenBytes)
	if err != nil {
		return "", fmt.Errorf("--token-file %s: %w", file, err)
	}
	token := strings.TrimSpace(string(data))
	if token == "" {
		return "", fmt.Errorf("--token-file %s: the file is empty; write the token in it", file)
	}
	return token, nil
}

// maxTokenBytes bounds a token file.
const maxTokenBytes = 4 << 10

// checkAddr refuses addresses other machines could reach unless requests
// must carry a token: the environments run commands with the user's
// permissions.
func checkAddr(addr string, hasToken bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("want HOST:PORT, like 127.0.0.1:8080: %v", err)
	}
	if hasToken || host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return errors.New("serving off loopback needs a bearer token: give --token-file FILE or set " + tokenEnv + " (the environments run commands with your permissions), or serve on 127.0.0.1, [::1] or localhost")
}

// httpTimeouts bound how long a client may hold a connection without
// making progress: the headers of a request, and the wait for the next
// request. Request bodies have their own timeout (mcp.HTTPOptions);
// responses are streams that may last, so there is no write timeout.
type httpTimeouts struct {
	header, idle time.Duration
}

var defaultHTTPTimeouts = httpTimeouts{header: 10 * time.Second, idle: 2 * time.Minute}

// serveHTTP serves streamable HTTP at /mcp on ln until ctx is done. It
// prints the address it listens on, so that port 0 can be used.
func serveHTTP(ctx context.Context, h http.Handler, ln net.Listener, timeouts httpTimeouts, stderr io.Writer) error {
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: timeouts.header, IdleTimeout: timeouts.idle}
	fmt.Fprintf(stderr, "unfold mcp: serving streamable HTTP at http://%s/mcp\n", ln.Addr())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		// Streams held open by clients: cut them.
		_ = srv.Close()
	}
	<-done
	return nil
}

// nopWriteCloser lets the transport close stdout without closing it.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// given reports whether the flag name was set on the command line.
func given(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
