package mcp_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/gateway"
	"github.com/unfold-dev/unfold/internal/npmcache"
	"github.com/unfold-dev/unfold/mcp"
	"github.com/unfold-dev/unfold/orchestrator"
	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/rootfs"
	"github.com/unfold-dev/unfold/session"
)

// TestSavedOutputAsResource serves the gateway alone (no environments, as
// --builtins none does) in front of the real filesystem server: a result
// cut to the budget says to read the whole as a resource, not with tools
// the session does not offer, and that resource reads the whole. Only
// files directly in context/output are served, and no link.
func TestSavedOutputAsResource(t *testing.T) {
	dir := npmcache.Install(t, filepath.Join("..", "gateway", "testdata", "npm"))
	project, files := t.TempDir(), t.TempDir()
	var b strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&b, "line %d %s\n", i, strings.Repeat("x", 40))
	}
	whole := b.String()
	if err := os.WriteFile(filepath.Join(files, "large.txt"), []byte(whole), 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := gateway.New(t.Context(), []gateway.ServerConfig{{Name: "filesystem", Command: npmcache.Bin(dir, "mcp-server-filesystem"), Args: []string{files}}}, gateway.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	if err := g.Wait(t.Context()); err != nil {
		t.Fatal(err)
	}
	fsys, err := rootfs.New(project)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fsys.Close() })
	_, c := setup(t, mcp.Options{Gateway: g, FS: fsys}, func(*orchestrator.Orchestrator, *session.Session) {})
	call(t, c, prompt.OpenSectionsName, prompt.OpenSectionsInput{SectionKeys: []string{"mcp.filesystem"}, Reason: "test"})
	text := texts(call(t, c, "filesystem__read_text_file", map[string]any{"path": filepath.Join(files, "large.txt")}))[0]
	m := regexp.MustCompile(`the whole output is saved in (\S+): read it as the resource (\S+)\.\]`).FindStringSubmatch(text)
	if m == nil || strings.Contains(text, "editor") || strings.Contains(text, "grep") {
		t.Fatalf("the note does not say to read the resource alone:\n%s", text[len(text)/2-400:len(text)/2+400])
	}
	if want := mcp.ContextURIPrefix + strings.TrimPrefix(m[1], "context/"); m[2] != want {
		t.Errorf("got the resource %s, want %s", m[2], want)
	}
	if got, err := readResource(t, c, m[2]); err != nil || got != whole {
		t.Errorf("read %s: got %d bytes, %v; want the whole %d", m[2], len(got), err, len(whole))
	}

	if err := os.WriteFile(filepath.Join(project, "secret.txt"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(project, "secret.txt"), filepath.Join(project, "context", "output", "link.txt")); err != nil {
		t.Fatal(err)
	}
	for _, uri := range []string{mcp.OutputURIPrefix + "link.txt", mcp.OutputURIPrefix + "..%2Fsecret.txt", mcp.OutputURIPrefix + "../../secret.txt", mcp.OutputURIPrefix + "none.txt"} {
		if got, err := readResource(t, c, uri); err == nil || !strings.Contains(err.Error(), "not found") {
			t.Errorf("read %s: got %q, %v; want not found", uri, got, err)
		}
	}
}
