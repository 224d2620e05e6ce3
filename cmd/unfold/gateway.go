package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/unfold-dev/unfold/gateway"
	"github.com/unfold-dev/unfold/prompt"
)

// upstreamEnv is set in the environment of every upstream server unfold
// starts, to how deep it is nested: 1 below the first unfold, 2 below an
// unfold that was itself started as an upstream server, and so on. An
// unfold started that way does not read the project's .mcp.json, and one
// nested deeper than maxNesting starts no MCP server at all: a
// configuration that reaches unfold again, through a wrapper script or
// another install, cannot start it again and again.
const upstreamEnv = "UNFOLD_MCP_UPSTREAM"

// maxNesting is how deep an unfold that still starts MCP servers (those of
// its --mcp-config files) may be nested.
const maxNesting = 1

// nesting returns how deep this unfold is nested as an upstream server of
// another: 0 when it was not started that way.
func nesting() int {
	v := strings.TrimSpace(os.Getenv(upstreamEnv))
	if v == "" {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 1 // set by an older unfold, or by hand
	}
	return n
}

// mcpConfigs is the repeatable --mcp-config flag.
type mcpConfigs []string

func (m *mcpConfigs) String() string { return strings.Join(*m, ",") }

func (m *mcpConfigs) Set(v string) error {
	*m = append(*m, v)
	return nil
}

const mcpConfigUsage = "an MCP configuration `FILE` ({\"mcpServers\": ...}, as Claude Code, Claude Desktop and Cursor write it) whose servers to put behind unfold, besides DIR/.mcp.json; repeatable"

// startGateway reads the project's .mcp.json and the files given, and
// starts a gateway for their servers; nil when none is configured.
// Manifests are cached in DIR/.unfold/mcp; with cachedOnly, no server
// starts to list what it offers. Tool results are cut to budget tokens.
// A server the files declare but unfold cannot start (an "sse" server, a
// variable not set) is left out with a warning on stderr.
func startGateway(ctx context.Context, project string, files []string, cachedOnly bool, budget int, stderr io.Writer) (*gateway.Gateway, error) {
	root, depth := project, nesting()
	if depth > 0 {
		root = "" // started by another unfold as an upstream server
	}
	cfgs, skipped, err := gateway.LoadConfigs(root, files, nil)
	if err != nil {
		return nil, err
	}
	for _, err := range skipped {
		fmt.Fprintf(stderr, "unfold: %v\n", err)
	}
	if len(cfgs) == 0 {
		return nil, nil
	}
	if depth > maxNesting {
		fmt.Fprintf(stderr, "unfold: the MCP servers of %s are left out: this unfold is an upstream server of an unfold that is itself one (%s=%d), and unfold nests no deeper, so that a configuration that reaches unfold again cannot start it without end\n",
			strings.Join(files, ", "), upstreamEnv, depth)
		return nil, nil
	}
	if cfgs = withoutSelf(cfgs, stderr); len(cfgs) == 0 {
		return nil, nil // find_tools and call_tool would have nothing to offer
	}
	for i := range cfgs {
		if cfgs[i].Command != "" {
			if cfgs[i].Env == nil {
				cfgs[i].Env = map[string]string{}
			}
			cfgs[i].Env[upstreamEnv] = strconv.Itoa(depth + 1)
		}
	}
	return gateway.New(ctx, cfgs, gateway.Options{
		CacheDir:     filepath.Join(project, gateway.CacheDir),
		CachedOnly:   cachedOnly,
		OutputBudget: budget,
		Logger:       slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
}

// waitGateway waits for the MCP servers g starts to list their tools,
// saying which ones it waits for; ctx's error when ctx ends first.
func waitGateway(ctx context.Context, g *gateway.Gateway, stderr io.Writer) error {
	names := g.Starting()
	if len(names) == 0 {
		return g.Wait(ctx)
	}
	fmt.Fprintf(stderr, "unfold: waiting for MCP servers to start: %s (Ctrl-C stops)\n", strings.Join(names, ", "))
	if err := g.Wait(ctx); err != nil {
		return err
	}
	fmt.Fprintln(stderr, "unfold: done waiting for MCP servers (a failure is reported above)")
	return nil
}

// withGateway adds the gateway's section to t; t itself without a gateway.
func withGateway(t *prompt.Template, g *gateway.Gateway) (*prompt.Template, error) {
	if g == nil {
		return t, nil
	}
	sec, err := g.Section()
	if err != nil {
		return nil, err
	}
	return t.With(sec)
}

// withoutSelf leaves out the servers that would start this very program:
// a client's .mcp.json that lists unfold is also unfold's own.
func withoutSelf(cfgs []gateway.ServerConfig, stderr io.Writer) []gateway.ServerConfig {
	self, err := os.Executable()
	if err != nil {
		return cfgs
	}
	if s, err := filepath.EvalSymlinks(self); err == nil {
		self = s
	}
	out := cfgs[:0]
	for _, c := range cfgs {
		if c.Command != "" {
			if p, err := exec.LookPath(c.Command); err == nil {
				if r, err := filepath.EvalSymlinks(p); err == nil && r == self {
					fmt.Fprintf(stderr, "unfold: %s: server %q is this unfold; left out\n", c.File, c.Name)
					continue
				}
			}
		}
		out = append(out, c)
	}
	return out
}
