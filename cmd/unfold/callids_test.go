package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// TestAgentResumeOnAnthropicAfterEmptyIDs: a run on an endpoint that
// leaves call IDs empty, resumed on the Messages API, which refuses a
// tool_use ID sent twice: each call went out with an ID of its own.
func TestAgentResumeOnAnthropicAfterEmptyIDs(t *testing.T) {
	dir := t.TempDir()
	tpath := filepath.Join(dir, "tr.jsonl")
	url, _ := fakeEndpointIDs(t, func(int, int) string { return "" }, `call help {"query":"files"}`, `call help {"query":"tools"}`, "All done.")
	if code, _, stderr := agentRun(t, url, "go", "--project", dir, "--builtins", "none", "--transcript", tpath); code != 0 {
		t.Fatalf("run: exit %d; stderr:\n%s", code, stderr)
	}
	murl, bodies := fakeMessages(t)
	t.Setenv("ANTHROPIC_API_KEY", "k")
	var stdout, stderr bytes.Buffer
	args := []string{"agent", "and now?", "--provider", "anthropic", "--project", dir, "--base-url", murl, "--model", "claude-sonnet-4-5", "--builtins", "none", "--resume", tpath}
	if code := run(args, strings.NewReader(""), &stdout, &stderr); code != 0 || stdout.String() != "Done.\n" {
		t.Fatalf("resume: exit %d, stdout %q; stderr:\n%s", code, stdout.String(), stderr.String())
	}
	body := string((*bodies)[0])
	for _, id := range []string{`"call_1"`, `"call_1_2"`} {
		if n := strings.Count(body, id); n != 2 {
			t.Errorf("%s: %d times in the request, want 2 (a tool_use and its tool_result)", id, n)
		}
	}
}
