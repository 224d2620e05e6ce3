package gateway_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/unfold-dev/unfold/gateway"
	"github.com/unfold-dev/unfold/rootfs"
)

// TestStructuredRepeatingText reads files through the real filesystem
// server, which sends every text again as structured content
// ({"content": TEXT}): the text counts once against the budget, so a file
// of half the budget comes back whole with its structured content; a
// longer one is cut as text, its last line kept, and the saved copy holds
// the text once.
func TestStructuredRepeatingText(t *testing.T) {
	root := t.TempDir()
	var fsCfg gateway.ServerConfig
	for _, c := range referenceServers(t, root) {
		if c.Name == "filesystem" {
			fsCfg = c
		}
	}
	lines := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "line %d %s\n", i, strings.Repeat("x", 40))
		}
		return b.String()
	}
	small, large := lines(500), lines(3000)
	for name, text := range map[string]string{"small.txt": small, "large.txt": large} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := t.TempDir()
	fs, err := rootfs.New(out)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fs.Close() })
	d := disclosureIn(t, newGateway(t, gateway.Options{}, fsCfg), fs)
	open(t, d, "mcp.filesystem")

	res := call(t, d, "filesystem__read_text_file", map[string]any{"path": filepath.Join(root, "small.txt")})
	up, _ := res.Value.(*sdk.CallToolResult)
	if res.Message != small || up == nil || up.StructuredContent == nil {
		t.Errorf("a file of half the budget: got %d bytes (structured content %v), want the whole %d with its structured content", len(res.Message), up != nil && up.StructuredContent != nil, len(small))
	}

	res = call(t, d, "filesystem__read_text_file", map[string]any{"path": filepath.Join(root, "large.txt")})
	last := "line 2999 " + strings.Repeat("x", 40)
	if !strings.HasPrefix(res.Message, "line 0 ") || !strings.Contains(res.Message, last) || strings.Contains(res.Message, `"content"`) {
		t.Errorf("a file over the budget: got ...%q, want the head and the file's last line, without the JSON", res.Message[max(len(res.Message)-300, 0):])
	}
	m := savedIn.FindStringSubmatch(res.Message)
	if m == nil {
		t.Fatalf("the note names no file:\n%s", res.Message)
	}
	saved, err := os.ReadFile(filepath.Join(out, m[1]))
	if err != nil || string(saved) != large {
		t.Errorf("the saved file holds %d bytes (%v), want the text once, %d", len(saved), err, len(large))
	}
}

// TestRepeatsText: which structured contents count as what the text says.
func TestRepeatsText(t *testing.T) {
	text := func(s ...string) []sdk.Content {
		var out []sdk.Content
		for _, x := range s {
			out = append(out, &sdk.TextContent{Text: x})
		}
		return out
	}
	for _, tt := range []struct {
		name       string
		content    []sdk.Content
		structured any
		want       bool
	}{
		{"the text as JSON", text(`{"a": [1, 2], "b": "x"}`), map[string]any{"b": "x", "a": []any{1.0, 2.0}}, true},
		{"one member, the text", text("hello\n"), map[string]any{"content": "hello\n"}, true},
		{"one member, the text as JSON", text("[\n  {\"name\": \"Ada\"}\n]"), map[string]any{"entities": []any{map[string]any{"name": "Ada"}}}, true},
		{"more than the text", text("40000 rows"), map[string]any{"rows": []any{1.0, 2.0}}, false},
		{"two members", text("done"), map[string]any{"success": true, "message": "done"}, false},
		{"no text", []sdk.Content{&sdk.ImageContent{MIMEType: "image/png", Data: []byte{1}}}, map[string]any{"content": ""}, false},
		{"no structured content", text("x"), nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := gateway.RepeatsText(&sdk.CallToolResult{Content: tt.content, StructuredContent: tt.structured}); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}
