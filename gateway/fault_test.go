package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/unfold-dev/unfold/gateway"
)

// TestFaultsStayLocal makes one server fail in every way while another
// keeps answering: each failure is an error naming the server, and the
// failed server starts again on next use.
func TestFaultsStayLocal(t *testing.T) {
	good := newUpstream(t)
	bad := newUpstream(t)
	sdk.AddTool(bad.srv, &sdk.Tool{Name: "crash", Description: "Ends the connection."},
		func(_ context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			go req.Session.Close()
			time.Sleep(time.Second)
			return nil, nil, nil
		})
	badCfg := bad.config("bad")
	// Long enough for a restart and a call on a loaded machine, short
	// enough for the hang below.
	badCfg.Timeout = 2 * time.Second
	g := newGateway(t, gateway.Options{}, good.config("good"), badCfg)
	up, _ := g.Upstream("bad")
	ok, _ := g.Upstream("good")
	echo := json.RawMessage(`{"message":"hi"}`)
	alive := func(when string) {
		t.Helper()
		if res, err := ok.CallTool(t.Context(), "echo", echo); err != nil || gateway.ResultText(res) != "hi" {
			t.Errorf("%s: the other server: got %v, %v", when, res, err)
		}
	}

	// A hang past the call timeout.
	_, err := up.CallTool(t.Context(), "hang", nil)
	if err == nil || !strings.Contains(err.Error(), "MCP server bad: call hang: no answer within 2s") {
		t.Errorf("hang: got %v, want an error naming the server and the timeout", err)
	}
	alive("after a hang")
	if res, err := up.CallTool(t.Context(), "echo", echo); err != nil || gateway.ResultText(res) != "hi" {
		t.Errorf("after a hang: got %v, %v, want the server started again", res, err)
	}

	// A crash in the middle of a call.
	_, err = up.CallTool(t.Context(), "crash", nil)
	if err == nil || !strings.Contains(err.Error(), "MCP server bad") {
		t.Errorf("crash: got %v, want an error naming the server", err)
	}
	alive("after a crash")
	if res, err := up.CallTool(t.Context(), "echo", echo); err != nil || gateway.ResultText(res) != "hi" {
		t.Errorf("after a crash: got %v, %v, want the server started again", res, err)
	}
	before := bad.connects.Load()

	// Failures to start, then backoff.
	bad.fail.Store(true)
	up.CallTool(t.Context(), "crash", nil) // the connection goes
	_, err = up.CallTool(t.Context(), "echo", echo)
	if err == nil || !strings.Contains(err.Error(), "MCP server bad: start: cannot reach the server") {
		t.Errorf("start failure: got %v", err)
	}
	_, err = up.CallTool(t.Context(), "echo", echo)
	if err == nil || !strings.Contains(err.Error(), "it is started again in") {
		t.Errorf("right after failures: got %v, want the backoff", err)
	}
	alive("after failed starts")
	bad.fail.Store(false)
	if bad.connects.Load() != before {
		t.Errorf("got %d connects during the failures, want %d", bad.connects.Load(), before)
	}
}

// TestGarbageAndStderr starts a real process that writes garbage instead
// of JSON-RPC: the error names the server and shows its stderr.
func TestGarbageAndStderr(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("sh is not installed; the test's bad server is a sh script")
	}
	junk := gateway.ServerConfig{Name: "junk", Command: "sh", Args: []string{"-c", `echo "junk: starting up" >&2; read line; echo "this is not JSON-RPC"; sleep 30`}, Timeout: 5 * time.Second}
	g := newGateway(t, gateway.Options{}, junk, newUpstream(t).config("good"))
	d := disclosure(t, g)
	text := d.Rendered(0).Text()
	if !strings.Contains(text, "Its tools are not known yet: it did not start (MCP server junk: start:") {
		t.Errorf("the section does not say the server failed:\n%s", text)
	}
	up, _ := g.Upstream("junk")
	err := up.Err()
	if err == nil || !strings.Contains(err.Error(), "Its stderr ends with:\njunk: starting up") {
		t.Errorf("got %v, want the tail of the server's stderr", err)
	}
	open(t, d, "mcp.good.tools.echo")
	if res := call(t, d, "good__echo", map[string]any{"message": "fine"}); res.Message != "fine" {
		t.Errorf("the other server: got %q", res.Message)
	}
}

// TestStderrTailMasksSecrets: a server whose stderr holds its key and then
// more than the tail shown puts the cut inside the key: the tail shown
// holds the key masked whole, no part of it, in the error, the section
// and find_tools' answer.
func TestStderrTailMasksSecrets(t *testing.T) {
	const key = "sk-live-ABCDEFGHIJKLMNOP1234567890"
	cfg := rogue(t, "leak", "leak")
	args, _ := json.Marshal(cfg.Args)
	cfgs, _, err := gateway.ParseConfig("a.json", []byte(`{"mcpServers": {"leak": {"command": "`+cfg.Command+`", "args": `+string(args)+`, "env": {"API_KEY": "${SVC_KEY}"}}}}`), env(map[string]string{"SVC_KEY": key}))
	if err != nil || len(cfgs) != 1 {
		t.Fatal(err, cfgs)
	}
	g := newGateway(t, gateway.Options{}, cfgs...)
	up, _ := g.Upstream("leak")
	d := disclosure(t, g)
	shown := map[string]string{
		"the error":   fmt.Sprint(up.Err()),
		"the section": d.Rendered(0).Text(),
		"find_tools":  call(t, d, gateway.FindToolsName, gateway.FindToolsInput{Query: "anything"}).Message,
	}
	if !strings.Contains(shown["the error"], "Its stderr ends with:\n${SVC_KEY}\n....") {
		t.Errorf("got %q, want the tail to start with the key masked whole", shown["the error"])
	}
	for where, text := range shown {
		for i := 0; i+minSecret <= len(key); i++ {
			if part := key[i:]; strings.Contains(text, part[:minSecret]) {
				t.Errorf("%s shows %q of the key:\n%s", where, part[:minSecret], text)
				break
			}
		}
	}
}

// minSecret is the shortest part of a key that TestStderrTailMasksSecrets
// counts as shown.
const minSecret = 6

// TestAnswerTooLarge: a result over what one message may hold fails with
// an error naming the limit and what to do.
func TestAnswerTooLarge(t *testing.T) {
	cfg := rogue(t, "big", "flood")
	cfg.Timeout = time.Minute // 16 MiB, read under -race on a busy machine
	g := newGateway(t, gateway.Options{}, cfg)
	up, _ := g.Upstream("big")
	_, err := up.CallTool(t.Context(), "flood", nil)
	want := "its answer is over the 16 MiB unfold reads in one message; ask the tool for less (a range of lines, a head or a tail, a narrower query)"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want an error holding %q", err, want)
	}
}
