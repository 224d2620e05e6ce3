package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/agent"
)

// fakeEndpoint answers chat completions with the replies in order, streamed;
// a reply starting with "call " is tool calls, one a line: "call <name> <args>".
func fakeEndpoint(t *testing.T, replies ...string) (string, *[]map[string]any) {
	t.Helper()
	return fakeEndpointIDs(t, func(n, i int) string {
		if i > 0 {
			return fmt.Sprintf("call%d_%d", n, i)
		}
		return fmt.Sprintf("call%d", n)
	}, replies...)
}

// fakeEndpointIDs is fakeEndpoint with the ID of call i of reply n given
// by id.
func fakeEndpointIDs(t *testing.T, id func(n, i int) string, replies ...string) (string, *[]map[string]any) {
	t.Helper()
	var mu sync.Mutex
	var reqs []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req map[string]any
		_ = json.Unmarshal(body, &req)
		mu.Lock()
		n := len(reqs)
		reqs = append(reqs, req)
		mu.Unlock()
		if n >= len(replies) {
			http.Error(w, `{"error":{"message":"no more replies"}}`, http.StatusBadRequest)
			return
		}
		delta := map[string]any{"role": "assistant", "content": replies[n]}
		finish := "stop"
		if strings.HasPrefix(replies[n], "call ") {
			var calls []any
			for i, line := range strings.Split(replies[n], "\n") {
				name, args, _ := strings.Cut(strings.TrimPrefix(line, "call "), " ")
				calls = append(calls, map[string]any{
					"index": i, "id": id(n, i), "type": "function",
					"function": map[string]any{"name": name, "arguments": args},
				})
			}
			delta = map[string]any{"role": "assistant", "tool_calls": calls}
			finish = "tool_calls"
		}
		writeChat(w, delta, finish, map[string]any{"prompt_tokens": 50, "completion_tokens": 5, "total_tokens": 55})
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1", &reqs
}

// writeChat streams one chat completion as an OpenAI-compatible endpoint
// does: the delta, the finish reason, the usage when given, and [DONE].
func writeChat(w http.ResponseWriter, delta any, finish string, usage map[string]any) {
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(choices []any) map[string]any {
		return map[string]any{"id": "x", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": choices}
	}
	chunks := []map[string]any{
		chunk([]any{map[string]any{"index": 0, "delta": delta, "finish_reason": nil}}),
		chunk([]any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": finish}}),
	}
	if usage != nil {
		u := chunk([]any{})
		u["usage"] = usage
		chunks = append(chunks, u)
	}
	for _, c := range chunks {
		b, _ := json.Marshal(c)
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func TestAgentCommand(t *testing.T) {
	url, reqs := fakeEndpoint(t, `call help {"query":"files"}`, "All done.")
	dir := t.TempDir()
	tpath := filepath.Join(dir, "run.jsonl")
	var stdout, stderr bytes.Buffer
	code := run([]string{"agent", "look around", "--project", dir, "--base-url", url, "--model", "m", "--builtins", "none", "--transcript", tpath}, strings.NewReader(""), &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit: got %d, want 0; stderr:\n%s", code, stderr.String())
	}
	if got := stdout.String(); got != "All done.\n" {
		t.Errorf("stdout: got %q, want %q", got, "All done.\n")
	}
	for _, want := range []string{"step 1  model: 1 tool call ", "step 1  tool help: ok", "step 2  answered", "2 steps, ", ": 100 input tokens (0 cached by the provider, ", "% of the requests in a prefix shared with the one before), 10 output tokens"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr: got\n%s\nwant %q in it", stderr.String(), want)
		}
	}
	if len(*reqs) != 2 {
		t.Errorf("requests: got %d, want 2", len(*reqs))
	}
	f, err := os.Open(tpath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := agent.ReadTranscript(f)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Answer() != "All done." {
		t.Errorf("transcript answer: got %q", tr.Answer())
	}
}

func TestAgentCommandErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  map[string]string
		code int
		want string
	}{
		{"no endpoint", []string{"agent", "task", "--project", "."}, nil, 2, "no model endpoint configured: pass --base-url"},
		{"no task", []string{"agent", "--base-url", "http://127.0.0.1:1/v1", "--model", "m"}, nil, 2, "no task"},
		{"bad actions", []string{"agent", "task", "--actions", "json", "--base-url", "http://x/v1", "--model", "m"}, nil, 2, "--actions \"json\": want native or text"},
		{"unreachable", []string{"agent", "task", "--project", ".", "--builtins", "none", "--base-url", "http://127.0.0.1:1/v1", "--model", "m", "--max-retries", "0"}, nil, 1, "cannot reach http://127.0.0.1:1/v1"},
		{"output budget", []string{"agent", "task", "--base-url", "http://x/v1", "--model", "m", "--output-budget", "0"}, nil, 2, "--output-budget must be 1 or more, got 0"},
		{"anthropic, no key", []string{"agent", "task", "--provider", "anthropic", "--model", "m", "--project", "/no/such/dir"}, map[string]string{"ANTHROPIC_API_KEY": "", "ANTHROPIC_BASE_URL": ""}, 2, "unfold agent: ANTHROPIC_API_KEY is not set, and api.anthropic.com wants an API key: set it, or name the variable that holds the key with --api-key-env\n"},
		{"anthropic, its URL, no key", []string{"agent", "task", "--provider", "anthropic", "--base-url", "https://api.anthropic.com/", "--model", "m", "--api-key-env", "MY_KEY"}, map[string]string{"MY_KEY": ""}, 2, "MY_KEY is not set, and api.anthropic.com wants an API key"},
		{"openai's API, no key", []string{"agent", "task", "--base-url", "https://API.openai.com/v1", "--model", "m"}, map[string]string{"OPENAI_API_KEY": ""}, 2, "OPENAI_API_KEY is not set, and api.openai.com wants an API key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("OPENAI_BASE_URL", "")
			t.Setenv("UNFOLD_MODEL", "")
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			var stdout, stderr bytes.Buffer
			code := run(tt.args, strings.NewReader(""), &stdout, &stderr)
			if code != tt.code || !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("got exit %d, stderr %q; want exit %d and %q", code, stderr.String(), tt.code, tt.want)
			}
		})
	}
}

// scriptedEndpoint answers chat completion requests with reply(n, w):
// n counts from 0. It returns the base URL and the request count.
func scriptedEndpoint(t *testing.T, reply func(n int, w http.ResponseWriter, r *http.Request)) (string, func() int) {
	t.Helper()
	var mu sync.Mutex
	count := 0
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		n := count
		count++
		bodies = append(bodies, string(body))
		mu.Unlock()
		reply(n, w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1", func() int {
		mu.Lock()
		defer mu.Unlock()
		return count
	}
}

// streamText streams a chat completion that says text.
func streamText(w http.ResponseWriter, text string) {
	writeChat(w, map[string]any{"role": "assistant", "content": text}, "stop", nil)
}

// TestAgentPriced: a run of a model in the price table, or of one of its
// snapshots, ends with its cost; one of a model the table does not have,
// though its name starts with one that is (gpt-5-pro, gpt-4.1-nano), says
// it has no price instead of giving the other model's.
func TestAgentPriced(t *testing.T) {
	for _, tt := range []struct{ model, want, not string }{
		{"gpt-5-2025-08-07", ", about $0.0001", "no price"},
		{"gpt-5-pro", "; no price for gpt-5-pro: give --prices FILE", "about $"},
		{"gpt-4.1-nano", "; no price for gpt-4.1-nano: give --prices FILE", "about $"},
	} {
		t.Run(tt.model, func(t *testing.T) {
			url, _ := fakeEndpoint(t, "All done.")
			var stdout, stderr bytes.Buffer
			code := run([]string{"agent", "go", "--project", t.TempDir(), "--base-url", url, "--model", tt.model, "--builtins", "none"}, strings.NewReader(""), &stdout, &stderr)
			if code != 0 {
				t.Fatalf("exit: got %d, want 0; stderr:\n%s", code, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.want) || strings.Contains(stderr.String(), tt.not) {
				t.Errorf("stderr: want %q and not %q in\n%s", tt.want, tt.not, stderr.String())
			}
		})
	}
}

// TestAgentEndpointFailures: an endpoint that rate-limits (each retry
// shown, then the answer), answers HTML (named, not "cannot reach"), or
// stalls (the timeout named, the wait shown).
func TestAgentEndpointFailures(t *testing.T) {
	defer func(d time.Duration) { waitEvery = d }(waitEvery)
	waitEvery = 50 * time.Millisecond
	tests := []struct {
		name  string
		reply func(n int, w http.ResponseWriter, r *http.Request)
		flags []string
		code  int
		want  []string
		not   string
	}{
		{"rate limited", func(n int, w http.ResponseWriter, _ *http.Request) {
			switch n {
			case 0:
				w.Header().Set("Retry-After", "0.02")
				http.Error(w, `{"error":{"message":"slow down"}}`, http.StatusTooManyRequests)
			case 1:
				w.Header().Set("Retry-After", "0.01")
				http.Error(w, `{"error":{"message":"busy"}}`, http.StatusBadGateway)
			default:
				streamText(w, "All done.")
			}
		}, nil, 0, []string{"step 1  retrying in 20ms: 429 rate limited", "step 1  retrying in 10ms: 502 bad gateway", "step 1  answered"}, ""},
		{"HTML", func(_ int, w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<!DOCTYPE html><title>Router login</title>")
		}, nil, 1, []string{`answered 200 text/html: "<!DOCTYPE html><title>Router login</title>"`}, "cannot reach"},
		{"stalls", func(_ int, _ http.ResponseWriter, r *http.Request) {
			<-r.Context().Done()
		}, []string{"--timeout", "300ms", "--max-retries", "0"}, 1, []string{"step 1  still waiting for the model", "within 300ms (the request timeout)"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url, _ := scriptedEndpoint(t, tt.reply)
			var stdout, stderr bytes.Buffer
			args := append([]string{"agent", "go", "--project", t.TempDir(), "--base-url", url, "--model", "m", "--builtins", "none"}, tt.flags...)
			code := run(args, strings.NewReader(""), &stdout, &stderr)
			if code != tt.code {
				t.Errorf("exit: got %d, want %d; stderr:\n%s", code, tt.code, stderr.String())
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr: want %q in\n%s", w, stderr.String())
				}
			}
			if tt.not != "" && strings.Contains(stderr.String(), tt.not) {
				t.Errorf("stderr: got %q in it:\n%s", tt.not, stderr.String())
			}
		})
	}
}

// TestAgentParams: --params gives the prompt file's templates their
// values, like render and mcp.
func TestAgentParams(t *testing.T) {
	dir := t.TempDir()
	promptPath := filepath.Join(dir, "prompt.md")
	paramsPath := filepath.Join(dir, "params.json")
	if err := os.WriteFile(promptPath, []byte("# Role\n\nYou help {{.user}} with {{.project}}.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(paramsPath, []byte(`{"user": "Ada", "project": "the engine"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	url, reqs := fakeEndpoint(t, "Hello Ada.")
	var stdout, stderr bytes.Buffer
	code := run([]string{"agent", "greet", "--project", dir, "--base-url", url, "--model", "m", "--builtins", "none", "--prompt", promptPath, "--params", paramsPath}, strings.NewReader(""), &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	sys, _ := (*reqs)[0]["messages"].([]any)[0].(map[string]any)["content"].(string)
	if !strings.Contains(sys, "You help Ada with the engine.") {
		t.Errorf("system message: got %q", sys)
	}
	code = run([]string{"agent", "greet", "--base-url", url, "--model", "m", "--params", paramsPath}, strings.NewReader(""), &stdout, &stderr)
	if code != 2 || !strings.Contains(stderr.String(), "--params needs --prompt") {
		t.Errorf("--params alone: got exit %d, %s", code, stderr.String())
	}
}

// TestAgentDryRun: --dry-run starts no environment (a process spec's
// program would leave a mark), calls no model, writes no transcript and
// no context file, and prints the first request.
func TestAgentDryRun(t *testing.T) {
	dir := t.TempDir()
	mark := filepath.Join(dir, "started")
	script := filepath.Join(dir, "probe.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\ntouch "+mark+"\nexec cat\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "env"), 0o755); err != nil {
		t.Fatal(err)
	}
	spec := `{"kind": "process", "executable": "` + script + `", "description": "A probe that marks its start"}`
	if err := os.WriteFile(filepath.Join(dir, "env", "probe.json"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	url, count := scriptedEndpoint(t, func(_ int, w http.ResponseWriter, _ *http.Request) { streamText(w, "done") })
	tpath := filepath.Join(dir, "run.jsonl")
	var stdout, stderr bytes.Buffer
	code := run([]string{"agent", "look around", "--dry-run", "--project", dir, "--base-url", url, "--model", "gpt-5", "--transcript", tpath}, strings.NewReader(""), &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit: got %d, want 0; stderr:\n%s", code, stderr.String())
	}
	if n := count(); n != 0 {
		t.Errorf("the model was called %d times", n)
	}
	for _, p := range []string{mark, tpath, filepath.Join(dir, "context")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s exists: the dry run started or wrote something", p)
		}
	}
	out := stdout.String()
	for _, want := range []string{
		"Dry run: no environment started, no model called, nothing written.",
		"== System message (", "You are an agent working in the project directory " + dir,
		"== Tools (", "- bash (", "- probe (", "- help (",
		"== Messages (", "look around", "[dry run: the probe environment (" + script + ") was not started",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout: want %q in\n%s", want, out)
		}
	}
}

// TestAgentBinaryInterrupt: SIGINT during a model call stops the run with
// exit status 130.
func TestAgentBinaryInterrupt(t *testing.T) {
	got := make(chan struct{}, 1)
	url, _ := scriptedEndpoint(t, func(_ int, _ http.ResponseWriter, r *http.Request) {
		got <- struct{}{}
		<-r.Context().Done()
	})
	cmd := exec.Command(binary, "agent", "wait", "--project", t.TempDir(), "--base-url", url, "--model", "m", "--builtins", "none")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-got:
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("the model was never called; stderr:\n%s", stderr.String())
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("still running 5s after SIGINT")
	}
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Errorf("exit: got %d, want 130; stderr:\n%s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "stopped by SIGINT") {
		t.Errorf("stderr: got\n%s", stderr.String())
	}
}

// TestAgentUnfinishedReply: a reply cut at the output token limit, or a
// refusal, ends the run with exit 1 and an error naming the reason; the
// reply's text is still printed.
func TestAgentUnfinishedReply(t *testing.T) {
	tests := []struct {
		name, delta, finish string
		stdout              string
		want                []string
	}{
		{"length", `{"role":"assistant","content":"The three steps are: 1. back up the datab"}`, "length", "The three steps are: 1. back up the datab\n",
			[]string{"step 1  stopped: truncated (length)", "unfold agent: agent: the reply was cut short (length): the model reached its output token limit", "raise the model's output limit (--max-tokens N raises the limit where the endpoint reads max_completion_tokens; some OpenAI-compatible servers, such as Ollama, ignore it: set the limit on the server)\n"}},
		{"refusal", `{"role":"assistant","refusal":"I can't help with deploying that."}`, "stop", "I can't help with deploying that.\n",
			[]string{"step 1  stopped: refused (stop)", "unfold agent: agent: the model refused to answer\n"}},
		{"empty, twice", `{"role":"assistant","content":""}`, "stop", "",
			[]string{"unfold agent: agent: the model's reply was empty (no text, no tool calls, finish reason \"stop\"), again after it was told so: resume the run to try again, or use another model\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url, _ := scriptedEndpoint(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
				writeChat(w, json.RawMessage(tt.delta), tt.finish, nil)
			})
			var stdout, stderr bytes.Buffer
			code := run([]string{"agent", "go", "--project", t.TempDir(), "--base-url", url, "--model", "m", "--builtins", "none"}, strings.NewReader(""), &stdout, &stderr)
			if code != 1 || stdout.String() != tt.stdout {
				t.Errorf("exit %d, stdout %q; want 1, %q; stderr:\n%s", code, stdout.String(), tt.stdout, stderr.String())
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr: want %q in\n%s", w, stderr.String())
				}
			}
		})
	}
}

// TestAgentContextWindow: a conversation the endpoint refuses as longer
// than the model's context window ends the run with exit 1 and an error
// that says so and what to do, naming the flags: a resume would send the
// same conversation again.
func TestAgentContextWindow(t *testing.T) {
	url, requests := scriptedEndpoint(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9310 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`)
	})
	var stdout, stderr bytes.Buffer
	code := run([]string{"agent", "go", "--project", t.TempDir(), "--base-url", url, "--model", "m", "--builtins", "none"}, strings.NewReader(""), &stdout, &stderr)
	if code != 1 || requests() != 1 {
		t.Errorf("exit %d after %d requests; want 1 after 1; stderr:\n%s", code, requests(), stderr.String())
	}
	want := "unfold agent: agent: the conversation is longer than the model's context window (openai: chat completions: 400 Bad Request: This model's maximum context length is 8192 tokens. However, your messages resulted in 9310 tokens. Please reduce the length of the messages.): resuming this conversation sends it again; start a new run, with a smaller budget for the system message or a task that reads fewer or smaller tool results (run unfold agent again without --resume; --budget N bounds the system message)\n"
	if !strings.HasSuffix(stderr.String(), want) {
		t.Errorf("stderr: got\n%s\nwant it to end with\n%s", stderr.String(), want)
	}
}

// TestAgentContextWindowOutputLimit: a refusal that names the output
// limit asked for (vLLM's, on the first request) says to ask for fewer
// output tokens with --max-tokens, not to bound the system message.
func TestAgentContextWindowOutputLimit(t *testing.T) {
	url, requests := scriptedEndpoint(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error":{"message":"'max_tokens' or 'max_completion_tokens' is too large: 40000. This model's maximum context length is 32768 tokens and your request has 412 input tokens (40000 > 32768 - 412). None","type":"BadRequestError","param":null,"code":400}}`)
	})
	var stdout, stderr bytes.Buffer
	code := run([]string{"agent", "go", "--project", t.TempDir(), "--base-url", url, "--model", "m", "--builtins", "none", "--max-tokens", "40000"}, strings.NewReader(""), &stdout, &stderr)
	if code != 1 || requests() != 1 {
		t.Errorf("exit %d after %d requests; want 1 after 1; stderr:\n%s", code, requests(), stderr.String())
	}
	want := "unfold agent: agent: the output limit and the conversation do not fit the model's context window (openai: chat completions: 400 Bad Request: 'max_tokens' or 'max_completion_tokens' is too large: 40000. This model's maximum context length is 32768 tokens and your request has 412 input tokens (40000 > 32768 - 412). None): ask for fewer output tokens (the model's max tokens option); if the conversation alone is near the window, start a new run (--max-tokens N asks for fewer output tokens)\n"
	if !strings.HasSuffix(stderr.String(), want) {
		t.Errorf("stderr: got\n%s\nwant it to end with\n%s", stderr.String(), want)
	}
}

// TestAgentNoKeyRefused: an endpoint that refuses a request made without
// a key (401 or 403) gets the variable to set named after its message; a
// local endpoint needs no key, and a refusal with a key set names none.
func TestAgentNoKeyRefused(t *testing.T) {
	refuse := func(status int) func(int, http.ResponseWriter, *http.Request) {
		return func(_ int, w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			fmt.Fprint(w, `{"type":"error","error":{"type":"authentication_error","message":"no key given"}}`)
		}
	}
	hint := " is not set: set it to the API key, or name the variable that holds it with --api-key-env)"
	tests := []struct {
		name   string
		status int
		flags  []string
		env    map[string]string
		code   int
		want   string // in stderr
		not    string // not in stderr
	}{
		{"openai 401", 401, nil, map[string]string{"OPENAI_API_KEY": ""}, 1, "no key given (OPENAI_API_KEY" + hint, ""},
		{"openai 403, own variable", 403, []string{"--api-key-env", "MY_KEY"}, map[string]string{"MY_KEY": ""}, 1, "(MY_KEY" + hint, ""},
		{"anthropic 401", 401, []string{"--provider", "anthropic"}, map[string]string{"ANTHROPIC_API_KEY": ""}, 1, "(ANTHROPIC_API_KEY" + hint, ""},
		{"key set", 401, nil, map[string]string{"OPENAI_API_KEY": "wrong"}, 1, "no key given", hint},
		{"local, no key", 0, nil, map[string]string{"OPENAI_API_KEY": ""}, 0, "1 step, ", hint},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			reply := func(_ int, w http.ResponseWriter, _ *http.Request) { streamText(w, "All done.") }
			if tt.status != 0 {
				reply = refuse(tt.status)
			}
			url, _ := scriptedEndpoint(t, reply)
			if slices.Contains(tt.flags, "anthropic") {
				url = strings.TrimSuffix(url, "/v1")
			}
			var stdout, stderr bytes.Buffer
			args := append([]string{"agent", "go", "--project", t.TempDir(), "--base-url", url, "--model", "m", "--builtins", "none", "--max-retries", "0"}, tt.flags...)
			code := run(args, strings.NewReader(""), &stdout, &stderr)
			if code != tt.code {
				t.Errorf("exit: got %d, want %d; stderr:\n%s", code, tt.code, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("stderr: want %q in\n%s", tt.want, stderr.String())
			}
			if tt.not != "" && strings.Contains(stderr.String(), tt.not) {
				t.Errorf("stderr: got %q in it:\n%s", tt.not, stderr.String())
			}
		})
	}
}

// TestPromptFileMissingParam: agent and mcp name the prompt file's line
// and heading of a param its templates miss, as render does, and the flag
// that gives params; agent refuses before anything starts.
func TestPromptFileMissingParam(t *testing.T) {
	dir := t.TempDir()
	promptPath := filepath.Join(dir, "prompt.md")
	paramsPath := filepath.Join(dir, "params.json")
	if err := os.WriteFile(promptPath, []byte("# Role\n\nYou help.\n\n# Task\n\nFirst line.\nDo {{.task}} now.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(paramsPath, []byte(`{"user": "Ada"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	at := promptPath + `:8: heading "Task": body template: column 5: executing "task" at <.task>: map has no entry for key "task"; give it in the params`
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"agent", []string{"agent", "go", "--project", dir, "--prompt", promptPath, "--base-url", "http://127.0.0.1:1/v1", "--model", "m", "--builtins", "none"}, 2, "unfold agent: " + at + " (a JSON object given with --params FILE)\n"},
		{"agent dry run, params", []string{"agent", "go", "--project", dir, "--prompt", promptPath, "--params", paramsPath, "--dry-run"}, 2, "unfold agent: " + at + " (" + paramsPath + ", given with --params)\n"},
		{"mcp", []string{"mcp", "--project", dir, "--prompt", promptPath, "--builtins", "none"}, 1, "unfold mcp: " + at + " (a JSON object given with --params FILE)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tt.args, strings.NewReader(""), &stdout, &stderr)
			if code != tt.code || stderr.String() != tt.want {
				t.Errorf("got exit %d, stderr\n%q\nwant exit %d, stderr\n%q", code, stderr.String(), tt.code, tt.want)
			}
		})
	}
}

// TestPromptFileMissingParamSummarized: a param that only a summarized
// section's body uses, or the summary of a section under it, is named
// at startup by render (without --open), agent and mcp, not first when
// the model opens the section.
func TestPromptFileMissingParamSummarized(t *testing.T) {
	dir := t.TempDir()
	paramsPath := filepath.Join(dir, "params.json")
	if err := os.WriteFile(paramsPath, []byte(`{"task": "t"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, src, at string }{
		{"body", "# A\n\nx {{.task}}\n\n# B {visibility=summary summary=\"s\"}\n\n{{.nope}}\n",
			`:7: heading "B": body template: column 2: executing "b" at <.nope>: map has no entry for key "nope"; give it in the params`},
		{"nested summary", "# A {visibility=summary summary=\"s\"}\n\nx {{.task}}\n\n## B {visibility=summary summary=\"{{.nope}}\"}\n\ny\n",
			`:5: heading "B": summary template: template: b:1:2: executing "b" at <.nope>: map has no entry for key "nope"; give it in the params`},
	} {
		promptPath := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".md")
		if err := os.WriteFile(promptPath, []byte(tc.src), 0o644); err != nil {
			t.Fatal(err)
		}
		at := promptPath + tc.at + " (" + paramsPath + ", given with --params)\n"
		for _, cmd := range []struct {
			name string
			args []string
			code int
		}{
			{"render", []string{"render", promptPath, "--params", paramsPath}, 1},
			{"agent", []string{"agent", "go", "--project", dir, "--prompt", promptPath, "--params", paramsPath, "--base-url", "http://127.0.0.1:1/v1", "--model", "m", "--builtins", "none"}, 2},
			{"mcp", []string{"mcp", "--project", dir, "--prompt", promptPath, "--params", paramsPath, "--builtins", "none"}, 1},
		} {
			t.Run(tc.name+"/"+cmd.name, func(t *testing.T) {
				var stdout, stderr bytes.Buffer
				code := run(cmd.args, strings.NewReader(""), &stdout, &stderr)
				if want := "unfold " + cmd.name + ": " + at; code != cmd.code || stderr.String() != want {
					t.Errorf("got exit %d, stderr\n%q\nwant exit %d, stderr\n%q", code, stderr.String(), cmd.code, want)
				}
			})
		}
	}
}

// TestAgentAnswerLast: the run's totals come before the answer, which is
// the last line when stdout and stderr go to one terminal, as the README
// says.
func TestAgentAnswerLast(t *testing.T) {
	url, _ := fakeEndpoint(t, "All done.")
	cmd := exec.Command(binary, "agent", "look around", "--project", t.TempDir(), "--builtins", "none", "--base-url", url, "--model", "m")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v; output:\n%s", err, out.String())
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if n := len(lines); n < 2 || lines[n-1] != "All done." || !strings.HasPrefix(lines[n-2], "1 step, ") {
		t.Errorf("got\n%s\nwant the totals, then the answer last", out.String())
	}
}

// TestAgentProgressWords: a step's line counts its tool calls in words
// that agree with the number, says a text action's reply is text (its
// action has a line of its own) rather than "0 tool calls", and the
// totals say "1 step".
func TestAgentProgressWords(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		replies []string
		want    []string
	}{
		{"native", nil, []string{`call help {"query":"files"}`, "Done."}, []string{"step 1  model: 1 tool call ", "step 2  model: 0 tool calls ", "2 steps, "}},
		{"text", []string{"--actions", "text"}, []string{`{"tool": "help", "input": {"query": "files"}}`, `{"final": "Done."}`}, []string{"step 1  model: a text reply ", "step 1  tool help: ok", "2 steps, "}},
		{"one step", nil, []string{"Done."}, []string{"step 1  model: 0 tool calls ", "1 step, "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url, _ := fakeEndpoint(t, tc.replies...)
			var stdout, stderr bytes.Buffer
			args := append([]string{"agent", "look around", "--project", t.TempDir(), "--base-url", url, "--model", "m", "--builtins", "none"}, tc.args...)
			if code := run(args, strings.NewReader(""), &stdout, &stderr); code != 0 || stdout.String() != "Done.\n" {
				t.Fatalf("exit %d, stdout %q; stderr:\n%s", code, stdout.String(), stderr.String())
			}
			for _, want := range tc.want {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("stderr: want %q in\n%s", want, stderr.String())
				}
			}
		})
	}
}
