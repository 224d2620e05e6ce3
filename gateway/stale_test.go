package gateway_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/gateway"
	"github.com/unfold-dev/unfold/prompt"
)

// specServer is a stdio MCP server whose version and tools are read from
// a JSON file at each request ({"version": ..., "tools": [...]}), as a
// server under development changes between runs. Calling "storm" makes it
// send tools/list_changed every millisecond from then on; "counts" answers
// how many tools/list it received and how many list_changed it sent.
const specServer = `import json, sys, threading, time
spec_path = sys.argv[1]
def spec():
    with open(spec_path) as f:
        return json.load(f)
lock = threading.Lock()
lists = 0
sent = 0
def send(msg):
    with lock:
        sys.stdout.write(json.dumps(msg) + "\n")
        sys.stdout.flush()
def storm():
    global sent
    while True:
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        sent += 1
        time.sleep(0.001)
for line in sys.stdin:
    m = json.loads(line)
    i, meth = m.get("id"), m.get("method")
    if i is None:
        continue
    s = spec()
    if meth == "initialize":
        r = {"protocolVersion": m["params"]["protocolVersion"], "capabilities": {"tools": {"listChanged": True}},
             "serverInfo": {"name": "dev", "version": s["version"]}}
    elif meth == "tools/list":
        lists += 1
        r = {"tools": [{"name": n, "description": "Tool %s." % n, "inputSchema": {"type": "object"}} for n in s["tools"] + ["storm", "counts"]]}
    elif meth == "tools/call":
        n = m["params"]["name"]
        if n == "storm":
            threading.Thread(target=storm, daemon=True).start()
            r = {"content": [{"type": "text", "text": "storming"}]}
        elif n == "counts":
            r = {"content": [{"type": "text", "text": "lists=%d sent=%d" % (lists, sent)}]}
        elif n in s["tools"]:
            r = {"content": [{"type": "text", "text": "ran " + n}]}
        else:
            send({"jsonrpc": "2.0", "id": i, "error": {"code": -32602, "message": "Unknown tool: " + n}})
            continue
    else:
        send({"jsonrpc": "2.0", "id": i, "error": {"code": -32601, "message": "no " + meth}})
        continue
    send({"jsonrpc": "2.0", "id": i, "result": r})
`

// devServer writes specServer and its spec into a temporary directory and
// returns the server's configuration and a func that changes the spec.
func devServer(t *testing.T, version string, tools ...string) (gateway.ServerConfig, func(version string, tools ...string)) {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed; the server is a Python script")
	}
	dir := t.TempDir()
	script, spec := filepath.Join(dir, "dev.py"), filepath.Join(dir, "spec.json")
	if err := os.WriteFile(script, []byte(specServer), 0o644); err != nil {
		t.Fatal(err)
	}
	set := func(version string, tools ...string) {
		data, _ := json.Marshal(map[string]any{"version": version, "tools": tools})
		// Written whole, then renamed: the server never reads half a file.
		if err := os.WriteFile(spec+".tmp", data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(spec+".tmp", spec); err != nil {
			t.Fatal(err)
		}
	}
	set(version, tools...)
	return gateway.ServerConfig{Name: "dev", Command: py, Args: []string{script, spec}, Timeout: 20 * time.Second}, set
}

// changes returns a channel that receives a server's tool names each time
// the gateway tells its subscribers the server changed, after d (when
// not nil) replaced its section, as unfold mcp does.
func changes(t *testing.T, g *gateway.Gateway, d *prompt.Disclosure) <-chan []string {
	ch := make(chan []string, 64)
	t.Cleanup(g.Subscribe(func(u *gateway.Upstream) {
		if d != nil {
			sec, err := g.Section()
			if err == nil {
				err = d.Replace(0, prompt.MustNew("test", "gw", sec).MustBind())
			}
			if err != nil {
				t.Errorf("replace the section: %v", err)
			}
		}
		var names []string
		for _, tool := range u.Manifest().Tools {
			names = append(names, tool.Name)
		}
		slices.Sort(names)
		select {
		case ch <- names:
		default:
		}
	}))
	return ch
}

// await waits for a change notice; a minute without one fails the test
// (a guard against a hang, not a timing).
func await(t *testing.T, ch <-chan []string, what string) []string {
	t.Helper()
	select {
	case names := <-ch:
		return names
	case <-time.After(time.Minute):
		t.Fatalf("no change notice: %s", what)
		return nil
	}
}

// TestCachedManifestRefreshedOnStart: a server was updated since its
// manifest was cached (a new version, a new tool). Started for a call, it
// is listed again: the manifest, the cache and the offer follow it, and
// the subscribers (unfold mcp's list_changed) are told.
func TestCachedManifestRefreshedOnStart(t *testing.T) {
	cache := t.TempDir()
	cfg, set := devServer(t, "1.0.0", "echo")
	g1 := newGateway(t, gateway.Options{CacheDir: cache}, cfg)
	g1.Close()

	set("2.0.0", "echo", "deploy")
	g := newGateway(t, gateway.Options{CacheDir: cache}, cfg)
	u, _ := g.Upstream("dev")
	if u.Running() || u.Manifest().Version != "1.0.0" {
		t.Fatalf("got running %v, version %q; want the cached 1.0.0, not started", u.Running(), u.Manifest().Version)
	}
	d := disclosure(t, g)
	changed := changes(t, g, d)
	open(t, d, "mcp.dev.tools.echo")
	// echo is in both versions: the call works, and no error says the
	// cache is old.
	if res := call(t, d, "dev__echo", map[string]any{}); !res.Success || res.Message != "ran echo" {
		t.Fatalf("dev__echo: got %v %q", res.Success, res.Message)
	}
	if got, want := await(t, changed, "the updated server was not listed again"), []string{"counts", "deploy", "echo", "storm"}; !slices.Equal(got, want) {
		t.Errorf("got tools %v, want %v", got, want)
	}
	if v := u.Manifest().Version; v != "2.0.0" {
		t.Errorf("got version %q, want 2.0.0", v)
	}
	data, err := os.ReadFile(filepath.Join(cache, "dev.json"))
	if err != nil || !strings.Contains(string(data), `"version": "2.0.0"`) || !strings.Contains(string(data), `"deploy"`) {
		t.Errorf("the cache was not updated (%v):\n%s", err, data)
	}
	if res := call(t, d, gateway.FindToolsName, gateway.FindToolsInput{Query: "deploy"}); !res.Success || !strings.Contains(res.Message, "dev__deploy") {
		t.Errorf("find_tools deploy: got %v %q", res.Success, res.Message)
	}
}

// TestUnknownToolRelists: a running server drops a tool without saying so
// (no list_changed). A call of it fails with the server's error and a
// note that the tools are listed again; they are, and the offer follows.
func TestUnknownToolRelists(t *testing.T) {
	cfg, set := devServer(t, "1.0.0", "echo", "old")
	g := newGateway(t, gateway.Options{}, cfg)
	d := disclosure(t, g)
	changed := changes(t, g, d)
	open(t, d, "mcp.dev")
	if res := call(t, d, "dev__old", map[string]any{}); res.Message != "ran old" {
		t.Fatalf("dev__old: got %q", res.Message)
	}
	set("1.0.0", "echo", "new")
	res := call(t, d, "dev__old", map[string]any{})
	if want := "Unknown tool: old (unfold lists the server's tools again: find_tools shows the current ones)"; res.Success || !strings.Contains(res.Message, want) {
		t.Errorf("dev__old after it went: got %v %q, want %q", res.Success, res.Message, want)
	}
	if got, want := await(t, changed, "an unknown tool did not list again"), []string{"counts", "echo", "new", "storm"}; !slices.Equal(got, want) {
		t.Errorf("got tools %v, want %v", got, want)
	}
	if res := call(t, d, "dev__new", map[string]any{}); res.Message != "ran new" {
		t.Errorf("dev__new: got %q", res.Message)
	}
}

// TestListChangedStorm: a server sends list_changed every millisecond
// for three seconds, its tools unchanged. It is listed a few times a
// second at most, the cache is not written again, and the subscribers
// are not called.
func TestListChangedStorm(t *testing.T) {
	cache := t.TempDir()
	cfg, _ := devServer(t, "1.0.0", "echo")
	g := newGateway(t, gateway.Options{CacheDir: cache}, cfg)
	changed := changes(t, g, nil)
	before, err := os.Stat(filepath.Join(cache, "dev.json"))
	if err != nil {
		t.Fatal(err)
	}
	u, _ := g.Upstream("dev")
	if _, err := u.CallTool(t.Context(), "storm", nil); err != nil {
		t.Fatal(err)
	}
	const storm = 3 * time.Second
	time.Sleep(storm) // the storm lasts this long; nothing is timed
	res, err := u.CallTool(t.Context(), "counts", nil)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`^lists=(\d+) sent=(\d+)$`).FindStringSubmatch(gateway.ResultText(res))
	if m == nil {
		t.Fatalf("counts: got %q", gateway.ResultText(res))
	}
	lists, _ := strconv.Atoi(m[1])
	sent, _ := strconv.Atoi(m[2])
	t.Logf("%d list_changed sent, %d tools/list received", sent, lists)
	if sent < 200 {
		t.Fatalf("the server sent %d list_changed, want a storm", sent)
	}
	// One list at the start, then one per relistGap (500 ms) at most: 7.
	// The bound is generous; without the gap there are hundreds.
	if lists > 20 {
		t.Errorf("the server was listed %d times during the storm, want a few", lists)
	}
	if lists < 2 {
		t.Errorf("the server was listed %d times, want it listed again after list_changed", lists)
	}
	after, err := os.Stat(filepath.Join(cache, "dev.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(before, after) {
		t.Error("the cache was written again, though the tools did not change")
	}
	select {
	case names := <-changed:
		t.Errorf("the subscribers were told of a change (%v), though the tools did not change", names)
	default:
	}
}
