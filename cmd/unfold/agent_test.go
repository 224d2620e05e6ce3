package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/unfold-dev/unfold/agent"
)

// fakeEndpoint answers chat completions with the replies in order, streamed;
// a reply starting with "call " is a tool call "call <name> <args>".
func fakeEndpoint(t *testing.T, replies ...string) (string, *[]map[string]any) {
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
		w.Header().Set("Content-Type", "text/event-stream")
		delta := map[string]any{"role": "assistant", "content": replies[n]}
		finish := "stop"
		if rest, ok := strings.CutPrefix(replies[n], "call "); ok {
			name, args, _ := strings.Cut(rest, " ")
			delta = map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{
				"index": 0, "id": fmt.Sprintf("call%d", n), "type": "function",
				"function": map[string]any{"name": name, "arguments": args},
			}}}
			finish = "tool_calls"
		}
		for _, c := range []map[string]any{
			{"id": "x", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": nil}}},
			{"id": "x", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": []any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": finish}}},
			{"id": "x", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": []any{}, "usage": map[string]any{"prompt_tokens": 50, "completion_tokens": 5, "total_tokens": 55}},
		} {
			b, _ := json.Marshal(c)
			fmt.Fprintf(w, "data: %s\n\n", b)
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1", &reqs
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
	for _, want := range []string{"step 1  model: 1 tool calls", "step 1  tool help: ok", "step 2  answered", "2 steps, 110 tokens"} {
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
		{"unreachable", []string{"agent", "task", "--project", ".", "--builtins", "none", "--base-url", "http://127.0.0.1:1/v1", "--model", "m"}, nil, 1, "cannot reach http://127.0.0.1:1/v1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("OPENAI_BASE_URL", "")
			t.Setenv("UNFOLD_MODEL", "")
			var stdout, stderr bytes.Buffer
			code := run(tt.args, strings.NewReader(""), &stdout, &stderr)
			if code != tt.code || !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("got exit %d, stderr %q; want exit %d and %q", code, stderr.String(), tt.code, tt.want)
			}
		})
	}
}
