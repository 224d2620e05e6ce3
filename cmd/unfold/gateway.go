package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/unfold-dev/unfold/gateway"
	"github.com/unfold-dev/unfold/prompt"
)

// upstreamEnv is set in the environment of every upstream server unfold
// starts: an `unfold mcp` started that way does not read the project's
// .mcp.json, so a configuration that lists unfold itself does not start it
// again and again.
const upstreamEnv = "UNFOLD_MCP_UPSTREAM"

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
// starts to list what it offers.
func startGateway(ctx context.Context, project string, files []string, cachedOnly bool, stderr io.Writer) (*gateway.Gateway, error) {
	root := project
	if os.Getenv(upstreamEnv) != "" {
		root = "" // started by another unfold as an upstream server
	}
	cfgs, err := gateway.LoadConfigs(root, files, nil)
	if err != nil || len(cfgs) == 0 {
		return nil, err
	}
	cfgs = withoutSelf(cfgs, stderr)
	for i := range cfgs {
		if cfgs[i].Command != "" {
			if cfgs[i].Env == nil {
				cfgs[i].Env = map[string]string{}
			}
			cfgs[i].Env[upstreamEnv] = "1"
		}
	}
	return gateway.New(ctx, cfgs, gateway.Options{
		CacheDir:   filepath.Join(project, gateway.CacheDir),
		CachedOnly: cachedOnly,
		Logger:     slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
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
