package main

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/tokens/bpe"
)

// TestAgentBudgetCountsWithTokenizer: --budget holds in the tokens of the
// tokenizer --tokenizer names, o200k by default, for text the estimate
// counts at a quarter of that (random letters): the section that would
// pass the budget is summarized in the request the model gets.
func TestAgentBudgetCountsWithTokenizer(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var keys strings.Builder
	for range 200 {
		w := make([]byte, 12)
		for i := range w {
			w[i] = byte('a' + rng.IntN(26))
		}
		keys.WriteString(string(w) + "\n")
	}
	dir := t.TempDir()
	promptPath := filepath.Join(dir, "prompt.md")
	text := "# Task\n\nCheck the keys.\n\n# Keys {summary=\"The keys, on request.\"}\n\n" + keys.String()
	if err := os.WriteFile(promptPath, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	const budget = 1000
	for _, tc := range []struct {
		name    string
		args    []string
		counter interface{ Count(string) int }
	}{
		{"default", nil, bpe.O200kBase()},
		{"cl100k", []string{"--tokenizer", "cl100k"}, bpe.Cl100kBase()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url, reqs := fakeEndpoint(t, "Done.")
			var stdout, stderr bytes.Buffer
			args := append([]string{"agent", "check", "--project", dir, "--base-url", url, "--model", "m", "--builtins", "none", "--help-tool=false", "--prompt", promptPath, "--budget", "1000"}, tc.args...)
			if code := run(args, strings.NewReader(""), &stdout, &stderr); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			sys, _ := (*reqs)[0]["messages"].([]any)[0].(map[string]any)["content"].(string)
			if n := tc.counter.Count(sys); n > budget {
				t.Errorf("the system message is %d tokens, over the budget of %d:\n%s", n, budget, sys)
			}
			if !strings.Contains(sys, "The keys, on request.") {
				t.Errorf("the keys are not summarized:\n%s", sys)
			}
		})
	}
	var stdout, stderr bytes.Buffer
	code := run([]string{"agent", "check", "--project", dir, "--base-url", "http://127.0.0.1:1/v1", "--model", "m", "--tokenizer", "o300k"}, strings.NewReader(""), &stdout, &stderr)
	if want := `unfold agent: --tokenizer "o300k": want o200k, cl100k or estimate` + "\n"; code != 2 || stderr.String() != want {
		t.Errorf("--tokenizer o300k: got exit %d, %q; want 2, %q", code, stderr.String(), want)
	}
}
