package mcp_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/spf13/afero"

	"github.com/unfold-dev/unfold/gateway"
	"github.com/unfold-dev/unfold/mcp"
)

// logBuffer collects log lines from many goroutines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// hostileUpstream is a real stdio MCP server (testdata/upstream.py) that
// lists the given resource addresses and templates and answers every read
// with "FROM name".
func hostileUpstream(t *testing.T, name string, resources, templates []string) gateway.ServerConfig {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed; the upstream server is a python script")
	}
	res, err := json.Marshal(resources)
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := json.Marshal(templates)
	if err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs("testdata/upstream.py")
	if err != nil {
		t.Fatal(err)
	}
	return gateway.ServerConfig{Name: name, Command: "python3", Args: []string{script, name, string(res), string(tmpl)}}
}

// TestUpstreamResourcesChecked starts unfold's server in front of two real
// upstream servers whose resources do not parse, or take unfold's own
// addresses or each other's. The server starts; what cannot be taken is
// left out with a warning; unfold's resources and the first server's stay
// theirs.
func TestUpstreamResourcesChecked(t *testing.T) {
	first := hostileUpstream(t, "first",
		[]string{"%zz", "no-scheme", mcp.PromptURI, mcp.ScreenURIPrefix + "counter", "UNFOLD://prompt", mcp.SkillURIPrefix + "x", "mem://doc"},
		[]string{"file:///{", "{+any}", mcp.ContextURITemplate, "tmpl://a/{x}"})
	second := hostileUpstream(t, "second",
		[]string{"mem://doc", "second://ok"},
		[]string{"tmpl://a/{x}", "tmpl://b/{x}"})
	var logs logBuffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	g, err := gateway.New(t.Context(), []gateway.ServerConfig{first, second}, gateway.Options{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	if err := g.Wait(t.Context()); err != nil {
		t.Fatal(err)
	}
	fs := afero.NewMemMapFs()
	if err := afero.WriteFile(fs, "context/notes.md", []byte("## Notes (notes)\n\nhello"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, c := setup(t, mcp.Options{Gateway: g, Prompt: promptTemplate(t), Params: []any{task{"g"}}, FS: fs, Logger: log}, withCounter(t))

	list, err := c.ListResources(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range list.Resources {
		got[r.URI] = r.Name
	}
	want := map[string]string{
		mcp.PromptURI:                   "prompt",
		mcp.ScreenURIPrefix + "counter": "counter-screen",
		"mem://doc":                     "first__r6",
		"second://ok":                   "second__r1",
	}
	if len(got) != len(want) {
		t.Errorf("got resources %v, want %v", got, want)
	}
	for uri, name := range want {
		if got[uri] != name {
			t.Errorf("got resource %s named %q, want %q", uri, got[uri], name)
		}
	}
	tmpls, err := c.ListResourceTemplates(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	gotT := map[string]string{}
	for _, r := range tmpls.ResourceTemplates {
		gotT[r.URITemplate] = r.Name
	}
	wantT := map[string]string{mcp.ContextURITemplate: "context-file", mcp.OutputURITemplate: "saved-output", "tmpl://a/{x}": "first__t3", "tmpl://b/{x}": "second__t1"}
	if len(gotT) != len(wantT) {
		t.Errorf("got templates %v, want %v", gotT, wantT)
	}
	for tmpl, name := range wantT {
		if gotT[tmpl] != name {
			t.Errorf("got template %s named %q, want %q", tmpl, gotT[tmpl], name)
		}
	}

	reads := []struct{ uri, want string }{
		{mcp.PromptURI, "# "},
		{mcp.ScreenURIPrefix + "counter", "Total: 0"},
		{mcp.ContextURIPrefix + "notes.md", "## Notes"},
		{"mem://doc", "FROM first"},
		{"second://ok", "FROM second"},
		{"tmpl://a/1", "FROM first"},
		{"tmpl://b/1", "FROM second"},
	}
	for _, r := range reads {
		text, err := readResource(t, c, r.uri)
		if err != nil {
			t.Errorf("read %s: %v", r.uri, err)
			continue
		}
		if strings.Contains(text, "FROM") != strings.HasPrefix(r.want, "FROM") || !strings.Contains(text, r.want) {
			t.Errorf("read %s: got %q, want %q", r.uri, text, r.want)
		}
	}
	if text, err := readResource(t, c, "other://x"); err == nil {
		t.Errorf("read other://x: got %q, want not found (the template {+any} is left out)", text)
	}

	for _, left := range []string{"resource=%zz", "resource=no-scheme", "template=file:///{", "template={+any}", "resource=unfold://prompt", "resource=UNFOLD://prompt",
		"template=unfold://context/{file}", "server=second resource=mem://doc", "server=second template=tmpl://a/{x}"} {
		if !strings.Contains(logs.String(), left) {
			t.Errorf("no warning names %s; the log:\n%s", left, logs.String())
		}
	}
}
