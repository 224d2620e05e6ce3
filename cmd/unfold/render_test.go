package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/prompttest"
)

func renderGolden(t *testing.T, name, got string) {
	t.Helper()
	prompttest.Golden(t, "render/"+name, got)
}

// TestRenderBinary runs the real binary on a prompt file.
func TestRenderBinary(t *testing.T) {
	file := filepath.Join("testdata", "render", "prompt.md")
	params := filepath.Join("testdata", "render", "params.json")
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"text.md", []string{file, "--params", params}},
		{"tree.txt", []string{file, "--params", params, "--tree"}},
		{"tree-estimate.txt", []string{"--tokenizer", "estimate", "--tree", "--params", params, file}},
		{"open.md", []string{file, "--params", params, "--open", "reference.calls"}},
		{"budget.txt", []string{file, "--params", params, "--open", "reference", "--budget", "190", "--tree", "--tokenizer", "cl100k"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(binary, append([]string{"render"}, tc.args...)...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%v: %s", err, stderr.String())
			}
			renderGolden(t, tc.name, string(out))
		})
	}
}

func TestRenderJSON(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run([]string{"render", "testdata/render/prompt.md", "--params", "testdata/render/params.json", "--json"}, nil, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var out struct {
		Text   string `json:"text"`
		Tokens int    `json:"tokens"`
		Tools  []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"tools"`
		Report []struct {
			Path, Mode, Why string
			Tokens          int
		} `json:"report"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.Text, "## 1. Task (task)") || out.Tokens == 0 {
		t.Errorf("text %q tokens %d", out.Text[:20], out.Tokens)
	}
	if len(out.Tools) != 1 || out.Tools[0].Name != "open_sections" || !json.Valid(out.Tools[0].InputSchema) {
		t.Errorf("tools: %+v", out.Tools)
	}
	if len(out.Report) != 7 || out.Report[2].Path != "rules.style" || out.Report[2].Mode != "summary" || out.Report[2].Why != "declared" {
		t.Errorf("report: %+v", out.Report)
	}
}

func TestRenderErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.md", "# A {visibility=summary summary=\"s\"}\nHello {{.name}}\n")
	bad := write("bad.md", "# A\n\n## B {color=red}\n")
	arr := write("arr.json", "[1]")
	name := write("name.json", `{"name": "n"}`)
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no file", []string{}, 2, "want exactly one prompt file"},
		{"two files", []string{good, good}, 2, "want exactly one prompt file"},
		{"missing file", []string{filepath.Join(dir, "nope.md")}, 1, "no such file"},
		{"bad attribute", []string{bad}, 1, `bad.md:3: heading "B": unknown attribute "color"`},
		{"params not an object", []string{good, "--params", arr}, 1, "want a JSON object, got an array"},
		{"missing param", []string{good, "--open", "a"}, 1, `good.md:2: heading "A": body template: column 8:`},
		{"unknown open key", []string{good, "--params", name, "--open", "zz"}, 1, "--open: prompt: open zz: no such section; the sections are a"},
		{"bad tokenizer", []string{good, "--tokenizer", "p50k"}, 2, "want o200k, cl100k or estimate"},
		{"negative budget", []string{good, "--budget", "-3"}, 2, "want a positive number of tokens"},
		{"json and tree", []string{good, "--json", "--tree"}, 2, "exclusive"},
		{"budget too small", []string{good, "--params", name, "--budget", "3"}, 1, "budget of 3 tokens cannot be met"},
		{"bad flag", []string{good, "--nope"}, 2, "flag provided but not defined: -nope"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(append([]string{"render"}, tc.args...), nil, &stdout, &stderr)
			if code != tc.code || !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr.String(), tc.code, tc.want)
			}
		})
	}
}
