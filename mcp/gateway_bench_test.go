package mcp_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/unfold-dev/unfold/gateway"
	"github.com/unfold-dev/unfold/internal/npmcache"
	"github.com/unfold-dev/unfold/mcp"
	"github.com/unfold-dev/unfold/orchestrator"
	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/tokens/bpe"
)

// benchServers are the three reference servers from npm, over root.
func benchServers(b *testing.B, root string) []gateway.ServerConfig {
	b.Helper()
	dir := npmcache.Install(b, filepath.Join("..", "gateway", "testdata", "npm"))
	return []gateway.ServerConfig{
		{Name: "everything", Command: npmcache.Bin(dir, "mcp-server-everything")},
		{Name: "filesystem", Command: npmcache.Bin(dir, "mcp-server-filesystem"), Args: []string{root}},
		{Name: "memory", Command: npmcache.Bin(dir, "mcp-server-memory"), Env: map[string]string{"MEMORY_FILE_PATH": filepath.Join(root, "memory.jsonl")}},
	}
}

// direct connects a client to a server as its own client would.
func direct(b *testing.B, cfg gateway.ServerConfig) *sdk.ClientSession {
	b.Helper()
	cmd := exec.Command(cfg.Command, cfg.Args...)
	cmd.Env = os.Environ()
	for k, v := range cfg.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench"}, nil).Connect(b.Context(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

// throughUnfold serves g over stdio pipes and connects a client to it.
func throughUnfold(b *testing.B, g *gateway.Gateway) *sdk.ClientSession {
	b.Helper()
	s, err := mcp.New(func(context.Context) (*orchestrator.Orchestrator, error) {
		return orchestrator.New(orchestrator.WithSession(session.New()))
	}, mcp.Options{Gateway: g})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	inR, inW, _ := os.Pipe()
	outR, outW, _ := os.Pipe()
	go s.Run(b.Context(), &mcp.StdioTransport{Reader: inR, Writer: outW})
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench"}, nil).Connect(b.Context(), &sdk.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

// listJSON is a tools/list result as the client receives it.
func listJSON(b *testing.B, cs *sdk.ClientSession) string {
	b.Helper()
	res, err := cs.ListTools(b.Context(), nil)
	if err != nil {
		b.Fatal(err)
	}
	data, err := json.Marshal(res)
	if err != nil {
		b.Fatal(err)
	}
	return string(data)
}

// BenchmarkToolsListTokens compares what tools/list costs at start with the
// three reference servers: each server's own list, added up (what a client
// loading them eagerly sends the model), against unfold's list with the
// servers behind it, and unfold's instructions (which name every tool).
// Tokens are o200k's; the loop times unfold's tools/list.
func BenchmarkToolsListTokens(b *testing.B) {
	root := b.TempDir()
	cfgs := benchServers(b, root)
	count := bpe.O200kBase()
	eager := 0
	for _, cfg := range cfgs {
		eager += count.Count(listJSON(b, direct(b, cfg)))
	}
	g, err := gateway.New(b.Context(), cfgs, gateway.Options{CacheDir: filepath.Join(root, "cache")})
	if err != nil {
		b.Fatal(err)
	}
	if err := g.Wait(b.Context()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { g.Close() })
	cs := throughUnfold(b, g)
	lazy := count.Count(listJSON(b, cs))
	ins := count.Count(cs.InitializeResult().Instructions)
	for b.Loop() {
		if _, err := cs.ListTools(b.Context(), nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(eager), "eager-tokens")
	b.ReportMetric(float64(lazy), "unfold-tokens")
	b.ReportMetric(float64(ins), "unfold-instructions-tokens")
	b.ReportMetric(float64(eager)/float64(lazy), "x-fewer")
	b.ReportMetric(float64(eager)/float64(lazy+ins), "x-fewer-with-instructions")
}

// BenchmarkProxiedCall measures the latency unfold adds to a call of a warm
// upstream (the everything server's echo): each iteration calls it
// directly (a client on the server's stdio) and through unfold (a client on
// unfold's stdio, unfold on the server's), side by side, with the same
// arguments and the same answer checked. It reports the p50 and p99 of both
// and of the difference.
func BenchmarkProxiedCall(b *testing.B) {
	root := b.TempDir()
	cfgs := benchServers(b, root)[:1]
	d := direct(b, cfgs[0])
	g, err := gateway.New(b.Context(), cfgs, gateway.Options{})
	if err != nil {
		b.Fatal(err)
	}
	if err := g.Wait(b.Context()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { g.Close() })
	p := throughUnfold(b, g)
	open := &sdk.CallToolParams{Name: "open_sections", Arguments: map[string]any{"section_keys": []string{"mcp.everything.tools.echo"}, "reason": "bench"}}
	if res, err := p.CallTool(b.Context(), open); err != nil || res.IsError {
		b.Fatalf("open: %v %v", res, err)
	}
	args := map[string]any{"message": "ping"}
	callOnce := func(cs *sdk.ClientSession, name string) time.Duration {
		start := time.Now()
		res, err := cs.CallTool(b.Context(), &sdk.CallToolParams{Name: name, Arguments: args})
		el := time.Since(start)
		if err != nil || res.IsError || res.Content[0].(*sdk.TextContent).Text != "Echo: ping" {
			b.Fatalf("%s: %v %v", name, res, err)
		}
		return el
	}
	for range 50 { // warm both paths
		callOnce(d, "echo")
		callOnce(p, "everything__echo")
	}
	var ds, ps []time.Duration
	for b.Loop() {
		ds = append(ds, callOnce(d, "echo"))
		ps = append(ps, callOnce(p, "everything__echo"))
	}
	report(b, "direct", ds)
	report(b, "proxied", ps)
	added := make([]time.Duration, len(ds))
	for i := range ds {
		added[i] = ps[i] - ds[i]
	}
	report(b, "added", added)
}

// report adds the p50 and p99 of ds, in microseconds.
func report(b *testing.B, name string, ds []time.Duration) {
	s := slices.Clone(ds)
	slices.Sort(s)
	at := func(q float64) float64 { return float64(s[int(q*float64(len(s)-1))].Microseconds()) }
	b.ReportMetric(at(0.5), name+"-p50-us")
	b.ReportMetric(at(0.99), name+"-p99-us")
}

// BenchmarkColdFirstCall measures the first call of a server whose manifest
// is cached, so that nothing runs before it: unfold starts the server, then
// calls. Side by side, the same server started by its own client and called.
func BenchmarkColdFirstCall(b *testing.B) {
	root := b.TempDir()
	cfgs := benchServers(b, root)[:1]
	cache := filepath.Join(root, "cache")
	g, err := gateway.New(b.Context(), cfgs, gateway.Options{CacheDir: cache})
	if err != nil {
		b.Fatal(err)
	}
	if err := g.Wait(b.Context()); err != nil {
		b.Fatal(err)
	}
	g.Close()
	args := json.RawMessage(`{"message":"ping"}`)
	var viaUnfold, own []time.Duration
	for b.Loop() {
		start := time.Now()
		g, err := gateway.New(b.Context(), cfgs, gateway.Options{CacheDir: cache})
		if err != nil {
			b.Fatal(err)
		}
		if err := g.Wait(b.Context()); err != nil {
			b.Fatal(err)
		}
		u, _ := g.Upstream("everything")
		if res, err := u.CallTool(b.Context(), "echo", args); err != nil || res.IsError {
			b.Fatal(err)
		}
		viaUnfold = append(viaUnfold, time.Since(start))
		g.Close()

		start = time.Now()
		cmd := exec.Command(cfgs[0].Command)
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench"}, nil).Connect(b.Context(), &sdk.CommandTransport{Command: cmd}, nil)
		if err != nil {
			b.Fatal(err)
		}
		if res, err := cs.CallTool(b.Context(), &sdk.CallToolParams{Name: "echo", Arguments: args}); err != nil || res.IsError {
			b.Fatal(err)
		}
		own = append(own, time.Since(start))
		cs.Close()
	}
	ms := func(ds []time.Duration) float64 {
		s := slices.Clone(ds)
		slices.Sort(s)
		return float64(s[len(s)/2].Microseconds()) / 1000
	}
	b.ReportMetric(ms(viaUnfold), "unfold-p50-ms")
	b.ReportMetric(ms(own), "own-client-p50-ms")
}
