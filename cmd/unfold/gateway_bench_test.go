package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/gateway"
	"github.com/unfold-dev/unfold/internal/npmcache"
)

// BenchmarkMCPStartupCached measures `unfold mcp --builtins none` with five
// servers configured and their manifests cached: from starting the process
// to the answer of its first tools/list on stdio (initialize, initialized,
// tools/list). No upstream server starts.
func BenchmarkMCPStartupCached(b *testing.B) {
	dir := npmcache.Install(b, filepath.Join("..", "..", "gateway", "testdata", "npm"))
	project := b.TempDir()
	servers := map[string]any{}
	for i, name := range []string{"everything", "filesystem", "memory", "everything2", "memory2"} {
		bin := []string{"mcp-server-everything", "mcp-server-filesystem", "mcp-server-memory", "mcp-server-everything", "mcp-server-memory"}[i]
		s := map[string]any{"command": npmcache.Bin(dir, bin)}
		if strings.HasPrefix(name, "filesystem") {
			s["args"] = []string{project}
		}
		if strings.HasPrefix(name, "memory") {
			s["env"] = map[string]string{"MEMORY_FILE_PATH": filepath.Join(project, name+".jsonl")}
		}
		servers[name] = s
	}
	data, _ := json.Marshal(map[string]any{"mcpServers": servers})
	if err := os.WriteFile(filepath.Join(project, gateway.ProjectConfig), data, 0o644); err != nil {
		b.Fatal(err)
	}
	ready := func() (time.Duration, int) {
		start := time.Now()
		cmd := exec.Command(binary, "mcp", "--builtins", "none", "--project", project)
		in, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		cmd.Stderr = io.Discard
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		fmt.Fprintln(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
		fmt.Fprintln(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		fmt.Fprintln(in, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
		r := bufio.NewReader(out)
		n := 0
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				b.Fatalf("no tools/list answer: %v", err)
			}
			if strings.HasPrefix(line, `{"jsonrpc":"2.0","id":2,`) {
				n = strings.Count(line, `"name":`)
				break
			}
		}
		el := time.Since(start)
		in.Close()
		cmd.Wait()
		return el, n
	}
	ready() // fetches and caches the five manifests
	for _, name := range []string{"everything", "filesystem", "memory", "everything2", "memory2"} {
		if _, err := os.Stat(filepath.Join(project, gateway.CacheDir, name+".json")); err != nil {
			b.Fatalf("manifest of %s not cached: %v", name, err)
		}
	}
	var ds []time.Duration
	for b.Loop() {
		d, n := ready()
		if n == 0 {
			b.Fatal("an empty tool list")
		}
		ds = append(ds, d)
	}
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, "ready-p50-ms")
	b.ReportMetric(float64(ds[len(ds)*99/100].Microseconds())/1000, "ready-p99-ms")
}
