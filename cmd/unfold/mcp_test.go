package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/unfold-dev/unfold/mcp"
)

// tallyEnv is a process environment in POSIX sh that counts its commands.
const tallyEnv = `n=0
while IFS= read -r line; do
  case "$line" in
    *'"type":"screen"'*) printf '{"type":"screen","content":"tally: %d commands\\n\\nAny word counts one.","max_lines":5}\n' "$n" ;;
    *'"type":"execute"'*) n=$((n+1)); printf '{"type":"response","output":"ran %d","success":true}\n' "$n" ;;
    *'"type":"shutdown"'*) exit 0 ;;
    *) printf '{"type":"error","message":"unknown request"}\n' ;;
  esac
done
`

// mcpProject has an on-demand process environment (tally) and a prompt
// file with a summarized content-only section.
var mcpProject = map[string]string{
	"env/tally.sh":   tallyEnv,
	"env/tally.json": `{"kind":"process","executable":"sh","args":["env/tally.sh"],"description":"A tally","on_demand":true}`,
	"prompt.md": `# Assistant

You help with the project.

# Reference {#reference visibility=summary summary="The reference, on request."}

The secret word is unfolded.
`,
}

func needSh(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("sh is not installed; the test's process environment is a sh script")
	}
}

// TestMCPTypeScriptClient drives the real binary with the official
// TypeScript SDK client (mcp/testdata/ts/client.mjs), installed from npm
// into a temporary directory.
func TestMCPTypeScriptClient(t *testing.T) {
	needSh(t)
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed; the client runs a bash command")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed; the test runs the TypeScript MCP SDK client")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("npm is not installed; the test installs the TypeScript MCP SDK with it")
	}
	dir := t.TempDir()
	for _, name := range []string{"package.json", "package-lock.json", "client.mjs"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "mcp", "testdata", "ts", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	install := exec.Command(npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
	install.Dir = dir
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("npm ci: %v\n%s", err, out)
	}

	project := writeProject(t, mcpProject)
	cmd := exec.Command(node, "client.mjs", binary, project, filepath.Join(project, "prompt.md"))
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	t.Logf("client output:\n%s", stdout.String())
	if err != nil {
		t.Fatalf("client: %v\nstderr:\n%s", err, stderr.String())
	}
	want := []string{"ok connect", "ok list tools", "ok run a bash command", "ok open a section with tools", "ok read a context file", "ok read a screen", "ok close"}
	var got []string
	for line := range strings.Lines(stdout.String()) {
		step, _, _ := strings.Cut(strings.TrimSpace(line), ":")
		got = append(got, step)
	}
	if !slices.Equal(got, want) {
		t.Errorf("got steps %q, want %q", got, want)
	}
	data, err := os.ReadFile(filepath.Join(project, "context", "reference.md"))
	if err != nil {
		t.Fatalf("the context file was not written to the project: %v", err)
	}
	if want := "## Reference (reference)\n\nThe secret word is unfolded.\n"; string(data) != want {
		t.Errorf("got context file %q, want %q", data, want)
	}
}

// startStdio runs `unfold mcp` in-process with args and connects a client
// to its stdin and stdout; stop ends the input and returns the exit status
// and stderr.
func startStdio(t *testing.T, args ...string) (*sdk.ClientSession, func() (int, string)) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		code := run(append([]string{"mcp"}, args...), inR, outW, &stderr)
		outW.Close()
		done <- code
	}()
	client := sdk.NewClient(&sdk.Implementation{Name: "test"}, nil)
	cs, err := client.Connect(t.Context(), &sdk.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		inW.Close()
		t.Fatalf("connect: %v (exit %d, stderr %s)", err, <-done, stderr.String())
	}
	stop := func() (int, string) {
		cs.Close()
		inW.Close()
		return <-done, stderr.String()
	}
	return cs, stop
}

func TestMCPStdio(t *testing.T) {
	needSh(t)
	project := writeProject(t, mcpProject)
	cs, stop := startStdio(t, "--builtins", "none", "--project", project, "--prompt", filepath.Join(project, "prompt.md"))
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	if want := []string{"help", "open_sections"}; !slices.Equal(names, want) {
		t.Errorf("got tools %v, want %v", names, want)
	}
	pr, err := cs.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: "unfold://prompt"})
	if err != nil {
		t.Fatal(err)
	}
	if got := pr.Contents[0].Text; !strings.HasPrefix(got, "## 1. Assistant (assistant)\n\nYou help with the project.") {
		t.Errorf("got prompt %q, want the prompt file rendered", got)
	}
	code, stderr := stop()
	if code != 0 {
		t.Errorf("got exit %d, want 0 at the end of input; stderr:\n%s", code, stderr)
	}
}

// TestMCPBinaryHTTP starts the binary on a loopback port, drives it with
// the Go SDK's streamable HTTP client, and stops it with SIGTERM.
func TestMCPBinaryHTTP(t *testing.T) {
	needSh(t)
	project := writeProject(t, mcpProject)
	cmd, port := startHTTPBinary(t, "mcp", "--builtins", "none", "--project", project, "--http", "127.0.0.1:0")
	url := "http://127.0.0.1:" + port + "/mcp"

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	changed := make(chan struct{}, 4)
	client := sdk.NewClient(&sdk.Implementation{Name: "test"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { changed <- struct{}{} },
	})
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "tally", Arguments: map[string]any{"command": "one"}})
	if err != nil {
		t.Fatal(err)
	}
	// The client decodes structured content into a map, whose keys
	// marshal sorted.
	data, _ := json.Marshal(res.StructuredContent)
	if want := `{"output":"ran 1","screen":"tally: 1 commands\n\nAny word counts one.","success":true}`; string(data) != want {
		t.Errorf("got %s, want %s", data, want)
	}
	cs.Close()

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); cmd.ProcessState.ExitCode() != 143 {
		t.Errorf("got %v after SIGTERM, want exit status 143", err)
	}
}

// TestMCPBinaryToken serves on every address with a token: requests
// without it are refused, and a client that sends it works.
func TestMCPBinaryToken(t *testing.T) {
	needSh(t)
	project := writeProject(t, mcpProject)
	tokenFile := filepath.Join(project, "token")
	if err := os.WriteFile(tokenFile, []byte("open-sesame\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd, port := startHTTPBinary(t, "mcp", "--builtins", "none", "--project", project, "--http", "0.0.0.0:0", "--token-file", tokenFile)
	url := "http://127.0.0.1:" + port + "/mcp"

	ping := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(ping))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("without the token: got status %d, want 401", resp.StatusCode)
	}

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "test"}, nil)
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearerTransport("open-sesame")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "tally", Arguments: map[string]any{"command": "one"}})
	if err != nil || res.IsError {
		t.Fatalf("with the token: got %v, %v", res, err)
	}
	cs.Close()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); cmd.ProcessState.ExitCode() != 143 {
		t.Errorf("got %v after SIGTERM, want exit status 143", err)
	}
}

// startHTTPBinary starts the binary with args, which serve HTTP, and
// returns it with the port it says it listens on; the test kills it at the
// end.
func startHTTPBinary(t *testing.T, args ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	lines := bufio.NewScanner(stderr)
	serving := regexp.MustCompile(`serving streamable HTTP at http://.*:(\d+)/mcp`)
	for lines.Scan() {
		if m := serving.FindStringSubmatch(lines.Text()); m != nil {
			go io.Copy(io.Discard, stderr)
			return cmd, m[1]
		}
		t.Logf("stderr: %s", lines.Text())
	}
	t.Fatal("the server never said where it listens")
	return nil, ""
}

// bearerTransport adds a bearer token to every request.
type bearerTransport string

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

func TestMCPFlags(t *testing.T) {
	project := writeProject(t, map[string]string{"bad.md": "# A {#a visibility=summary}\n\nbody\n", "empty": "\n", "token": "t\n"})
	t.Setenv(tokenEnv, "")
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStderr string
	}{
		{"help", []string{"--help"}, 0, ""},
		{"not loopback without a token", []string{"--http", "0.0.0.0:8080"}, 2, "unfold mcp: --http 0.0.0.0:8080: serving off loopback needs a bearer token"},
		{"empty token file", []string{"--http", "0.0.0.0:8080", "--token-file", filepath.Join(project, "empty")}, 2, "the file is empty"},
		{"missing token file", []string{"--http", "0.0.0.0:8080", "--token-file", filepath.Join(project, "none")}, 2, "--token-file"},
		{"token file without http", []string{"--token-file", filepath.Join(project, "token")}, 2, "unfold mcp: --token-file needs --http"},
		{"max sessions without http", []string{"--max-sessions", "4"}, 2, "unfold mcp: --max-sessions needs --http"},
		{"no port", []string{"--http", "127.0.0.1"}, 2, "unfold mcp: --http 127.0.0.1: want HOST:PORT"},
		{"params without prompt", []string{"--params", "p.json"}, 2, "unfold mcp: --params needs --prompt"},
		{"missing prompt", []string{"--builtins", "none", "--project", project, "--prompt", filepath.Join(project, "none.md")}, 1, "no such file"},
		{"bad prompt", []string{"--builtins", "none", "--project", project, "--prompt", filepath.Join(project, "bad.md")}, 1, "no summary"},
		{"stray argument", []string{"extra"}, 2, `unfold mcp: unexpected arguments ["extra"]`},
		{"no sessions", []string{"--http", "127.0.0.1:0", "--max-sessions", "0"}, 2, "unfold mcp: --max-sessions 0: give a number of sessions above 0"},
		{"output budget", []string{"--output-budget", "-5"}, 2, "unfold mcp: --output-budget must be 1 or more, got -5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(append([]string{"mcp"}, tt.args...), strings.NewReader(""), &stdout, &stderr)
			if code != tt.wantCode {
				t.Errorf("got exit %d, want %d; stderr:\n%s", code, tt.wantCode, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.wantStderr) {
				t.Errorf("got stderr %q, want it to contain %q", stderr.String(), tt.wantStderr)
			}
			if tt.name == "help" && !strings.Contains(stdout.String(), fmt.Sprintf("--max-sessions sessions are open at once (default %d)", mcp.DefaultMaxSessions)) {
				t.Errorf("got stdout %q, want the default of --max-sessions", stdout.String())
			}
			if tt.name == "help" && !strings.Contains(stdout.String(), "Usage: unfold mcp") {
				t.Errorf("got stdout %q, want the usage", stdout.String())
			}
		})
	}
}

// TestServeHTTPHeaderTimeout opens a connection that sends half a request's
// headers and nothing more: the server closes it after the header timeout,
// and answers other clients meanwhile.
func TestServeHTTPHeaderTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "fine") })
	go func() {
		done <- serveHTTP(ctx, h, ln, httpTimeouts{header: 200 * time.Millisecond, idle: time.Second}, io.Discard)
	}()

	slow, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	if _, err := io.WriteString(slow, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + ln.Addr().String() + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "fine" {
		t.Errorf("another client got %q, want fine", body)
	}
	// A guard against hanging: without a header timeout the server waits
	// for the rest of the headers for ever.
	slow.SetReadDeadline(time.Now().Add(30 * time.Second))
	if n, err := slow.Read(make([]byte, 512)); err != io.EOF {
		t.Errorf("half a request's headers: got %d bytes and %v, want the connection closed (EOF)", n, err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("serveHTTP: %v", err)
	}
}

// connectMCP starts `unfold mcp` with args and connects client to it. The
// context it returns bounds the test's calls (two minutes); the session is
// closed when the test ends. A failed connection fails the test with what
// the server wrote to stderr.
func connectMCP(t *testing.T, client *sdk.Client, args ...string) (context.Context, *sdk.ClientSession) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"mcp"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v (stderr: %s)", err, stderr.String())
	}
	t.Cleanup(func() { cs.Close() })
	return ctx, cs
}

// watchingClient returns a client that sends the URIs of the resources
// the server announces as updated to updated, and a value to acked for
// every subscription the server acknowledges.
func watchingClient() (client *sdk.Client, updated <-chan string, acked <-chan struct{}) {
	up := make(chan string, 16)
	ack := make(chan struct{}, 4)
	client = sdk.NewClient(&sdk.Implementation{Name: "test"}, &sdk.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *sdk.ResourceUpdatedNotificationRequest) { up <- req.Params.URI },
	})
	client.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			if method == "notifications/subscriptions/acknowledged" {
				ack <- struct{}{}
			}
			return next(ctx, method, req)
		}
	})
	return client, up, ack
}

// subscribe subscribes to the resource at uri and, in the protocol where
// the subscription is acknowledged, waits for that.
func subscribe(ctx context.Context, t *testing.T, cs *sdk.ClientSession, acked <-chan struct{}, uri string) {
	t.Helper()
	if err := cs.Subscribe(ctx, &sdk.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	if cs.InitializeResult().ProtocolVersion >= "2026-07-28" {
		// Subscribe sent subscriptions/listen without waiting for it.
		select {
		case <-acked:
		case <-ctx.Done():
			t.Fatal("the subscription was never acknowledged")
		}
	}
}

// TestMCPBinaryAnnotationsAndScreens drives `unfold mcp` with bash and the
// editor on stdio with the Go SDK's client: its instructions name the
// environments, every tool says what it does (the shell may reach the
// network, the editor only its files, help only reads), and a command that
// changes the shell's screen is announced to a client subscribed to it.
func TestMCPBinaryAnnotationsAndScreens(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed; the test runs the bash environment")
	}
	client, updated, acked := watchingClient()
	ctx, cs := connectMCP(t, client, "--builtins", "bash,editor", "--project", t.TempDir())
	init := cs.InitializeResult()
	if !strings.Contains(init.Instructions, "Persistent environments (bash, editor)") {
		t.Errorf("the instructions do not name the environments: %q", init.Instructions)
	}

	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	type hints struct{ readOnly, destructive, idempotent, openWorld bool }
	want := map[string]hints{
		"bash":   {false, true, false, true},
		"editor": {false, true, false, false},
		"help":   {true, false, true, false},
	}
	for _, tool := range list.Tools {
		a := tool.Annotations
		if a == nil {
			t.Errorf("%s: no annotations", tool.Name)
			continue
		}
		// A hint left out is what MCP assumes: destructive, open world.
		got := hints{a.ReadOnlyHint, !a.ReadOnlyHint && (a.DestructiveHint == nil || *a.DestructiveHint), a.IdempotentHint, a.OpenWorldHint == nil || *a.OpenWorldHint}
		if w, ok := want[tool.Name]; ok && got != w {
			t.Errorf("%s: got %+v, want %+v", tool.Name, got, w)
		}
		delete(want, tool.Name)
	}
	if len(want) > 0 {
		t.Errorf("tools not offered: %v", want)
	}

	const screen = "unfold://screen/bash"
	subscribe(ctx, t, cs, acked, screen)
	if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "cd / && false"}}); err != nil {
		t.Fatal(err)
	}
	select {
	case uri := <-updated:
		if uri != screen {
			t.Errorf("got an update of %s, want %s", uri, screen)
		}
	case <-ctx.Done():
		t.Fatal("no notifications/resources/updated after a command changed the screen")
	}
}

// TestTokenFromEnvironment reads the bearer token from the environment
// variable when no file is given, which lets unfold mcp serve off loopback.
func TestTokenFromEnvironment(t *testing.T) {
	t.Setenv(tokenEnv, " s3cret\n")
	token, err := readToken("")
	if err != nil || token != "s3cret" {
		t.Fatalf("got %q, %v; want s3cret from $%s", token, err, tokenEnv)
	}
	if err := checkAddr("0.0.0.0:8080", token != ""); err != nil {
		t.Errorf("off loopback with a token: %v", err)
	}
	t.Setenv(tokenEnv, "")
	if token, _ := readToken(""); checkAddr("0.0.0.0:8080", token != "") == nil {
		t.Error("off loopback without a token: got no error")
	}
}
