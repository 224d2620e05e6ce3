package unfold_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/imports"
)

// snippet is a Go code block of a document.
type snippet struct {
	file string // the document
	line int    // the block's first line in it
	code string
}

// docSnippets returns the ```go blocks of README.md and docs/*.md, and the
// indented code of the envtest package comment (a test users copy).
func docSnippets(t *testing.T) []snippet {
	t.Helper()
	files := []string{"README.md"}
	mds, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, mds...)
	var out []snippet
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(data), "\n")
		for i := 0; i < len(lines); i++ {
			if strings.TrimSpace(lines[i]) != "```go" {
				continue
			}
			start := i + 1
			for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			}
			out = append(out, snippet{name, start + 1, strings.Join(lines[start:i], "\n")})
		}
	}
	doc, err := os.ReadFile("envs/envtest/doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var code []string
	first := 0
	for n, line := range strings.Split(string(doc), "\n") {
		if rest, ok := strings.CutPrefix(line, "//\t"); ok {
			if first == 0 {
				first = n + 1
			}
			code = append(code, rest)
		} else if first > 0 {
			break
		}
	}
	return append(out, snippet{"envs/envtest/doc.go", first, strings.Join(code, "\n")})
}

// freeVars are the names documents use without declaring them, and their
// types: a snippet that uses one gets it declared.
var freeVars = map[string]string{
	"sess":      "*session.Session",
	"fs":        "afero.Fs",
	"ctx":       "context.Context",
	"args":      "json.RawMessage",
	"verify":    "*tools.Tool",
	"tool":      "*tools.Tool",
	"p":         "*prompt.Prompt",
	"tmpl":      "*prompt.Template",
	"m":         "agent.Model",
	"o":         "*orchestrator.Orchestrator",
	"orch":      "*orchestrator.Orchestrator",
	"counter":   "tokens.Counter",
	"t":         "*testing.T",
	"intro":     "*section.Section",
	"reference": "*section.Section",
	"task":      "*section.Section",
	"r":         "*prompt.Rendered",
	"project":   "string",
	"dirs":      "[]string",
}

// TestDocSnippetsCompile builds every Go block of the README and the docs,
// so that what users copy compiles. A block of statements is wrapped in a
// function; names a block uses without declaring come from freeVars;
// imports are found as goimports finds them.
func TestDocSnippetsCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every snippet with the go command")
	}
	snippets := docSnippets(t)
	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	overlay := map[string]string{}
	var pkgs []string
	where := map[string]snippet{}
	for i, s := range snippets {
		dir := filepath.Join(root, fmt.Sprintf("zz_docsnippet_%03d", i))
		name := filepath.Join(dir, "snippet.go")
		src, err := wrapSnippet(name, s.code)
		if err != nil {
			t.Errorf("%s:%d: %v", s.file, s.line, err)
			continue
		}
		file := filepath.Join(tmp, fmt.Sprintf("%03d.go", i))
		if err := os.WriteFile(file, src, 0o644); err != nil {
			t.Fatal(err)
		}
		overlay[name] = file
		pkgs = append(pkgs, "./"+filepath.Base(dir))
		where[filepath.Base(dir)] = s
	}
	if len(pkgs) == 0 {
		return
	}
	ov, _ := json.Marshal(map[string]any{"Replace": overlay})
	ovFile := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(ovFile, ov, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", append([]string{"build", "-overlay", ovFile}, pkgs...)...)
	out, err := cmd.CombinedOutput()
	if err == nil {
		return
	}
	// Name the document and line of each failing block.
	failed := regexp.MustCompile(`zz_docsnippet_\d{3}`).FindAllString(string(out), -1)
	slices.Sort(failed)
	for _, d := range slices.Compact(failed) {
		s := where[d]
		src, _ := os.ReadFile(overlay[filepath.Join(root, d, "snippet.go")])
		t.Errorf("%s:%d: the Go block does not compile; as built:\n%s", s.file, s.line, src)
	}
	t.Errorf("go build of the blocks:\n%s", out)
}

// wrapSnippet makes a compilable file of a block: a whole file as it is;
// otherwise its declarations at file level and its statements in a
// function, every variable they declare used, missing names declared from
// freeVars and imports added.
func wrapSnippet(name, code string) ([]byte, error) {
	if strings.HasPrefix(strings.TrimSpace(code), "package ") {
		return imports.Process(name, []byte(code), nil)
	}
	var decls, stmts []string
	lines := strings.Split(code, "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, "func ") {
			j := i
			for j < len(lines) && lines[j] != "}" && !(j == i && strings.HasSuffix(l, "}")) {
				j++
			}
			decls = append(decls, lines[i:min(j+1, len(lines))]...)
			i = j
			continue
		}
		stmts = append(stmts, l)
	}
	body := strings.Join(stmts, "\n")
	var b bytes.Buffer
	b.WriteString("package snippet\n\n")
	b.WriteString(strings.Join(decls, "\n"))
	b.WriteString("\n\nfunc _() {\n")
	declared := declaredIn(body)
	for name, typ := range freeVars {
		if !declared[name] && regexp.MustCompile(`\b`+name+`\b`).MatchString(body+strings.Join(decls, "\n")) {
			fmt.Fprintf(&b, "\tvar %s %s\n\t_ = %s\n", name, typ, name)
		}
	}
	b.WriteString(body)
	b.WriteString("\n")
	var used []string
	for name := range declared {
		used = append(used, name)
	}
	slices.Sort(used)
	for _, name := range used {
		fmt.Fprintf(&b, "\t_ = %s\n", name)
	}
	b.WriteString("}\n")
	return imports.Process(name, b.Bytes(), nil)
}

// declaredIn returns the variables statements declare with := or var.
func declaredIn(body string) map[string]bool {
	out := map[string]bool{}
	f, err := parser.ParseFile(token.NewFileSet(), "", "package p\nfunc _() {\n"+body+"\n}\n", 0)
	if err != nil {
		return out // the build reports it
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			if n.Tok == token.DEFINE {
				for _, l := range n.Lhs {
					if id, ok := l.(*ast.Ident); ok && id.Name != "_" {
						out[id.Name] = true
					}
				}
			}
		case *ast.ValueSpec:
			for _, id := range n.Names {
				if id.Name != "_" {
					out[id.Name] = true
				}
			}
		case *ast.FuncLit:
			return false
		}
		return true
	})
	return out
}
