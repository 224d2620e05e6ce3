package unfold_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/unfold-dev/unfold"

// layer gives each project package its place in DESIGN.md's list: a package
// may import only project packages of a lower layer. Packages under one
// prefix share its layer, so envs/bash cannot import envs/python.
var layers = []struct {
	prefix string
	layer  int
}{
	{"session", 0},
	{"tokens", 0},
	{"internal/", 0}, // test support: golden files, failing filesystems
	{"visibility", 1},
	{"tools", 2},
	{"section", 3},
	{"prompt", 4},
	{"envs", 5},
	{"promptfile", 5},
	{"prompttest", 5},
	{"internal/term", 6}, // terminal output to plain text and pseudo-terminals, shared by the pty environments
	{"envs/", 7},
	{"internal/ptyfloor", 7}, // the benchmarks' pty floors, read as internal/term reads
	{"orchestrator", 8},
	{"tokens/", 9}, // exact counters: only programs that ask for them link them
	{"agent", 10},
	{"mcp", 10},
	{"agent/", 11}, // model adapters implement agent.Model
	{"cmd/", 12},
	{"examples/", 12},
	{"bench/", 12},
}

// thirdParty lists the modules outside the standard library that the lower
// layers may use; packages not listed may use any module in go.mod.
var thirdParty = map[string][]string{
	"session":          {},
	"internal/faultfs": {"github.com/spf13/afero"},
	"internal/golden":  {},
	"tokens":           {},
	"tokens/bpe":       {"github.com/tiktoken-go/tokenizer"},
	"visibility":       {},
	"tools":            {"github.com/spf13/afero", "github.com/santhosh-tekuri/jsonschema/v5"},
	"section":          {},
	"prompt":           {"github.com/yuin/goldmark", "github.com/spf13/afero"},
	"envs":             {},
	"promptfile":       {"github.com/yuin/goldmark"},
}

// layerOf returns the layer of the package in directory rel: the entry with
// the longest prefix that matches it ("envs/" wins over "envs" for envs/bash;
// "agent" covers agent/openai).
func layerOf(rel string) (int, bool) {
	best, bestLen := -1, -1
	for _, l := range layers {
		match := rel == l.prefix || strings.HasPrefix(rel, strings.TrimSuffix(l.prefix, "/")+"/")
		if strings.HasSuffix(l.prefix, "/") {
			match = strings.HasPrefix(rel, l.prefix)
		}
		if match && len(l.prefix) > bestLen {
			best, bestLen = l.layer, len(l.prefix)
		}
	}
	return best, bestLen >= 0
}

func TestImportLayering(t *testing.T) {
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		if dir == "." {
			return nil
		}
		from, ok := layerOf(dir)
		if !ok {
			t.Errorf("%s: package %s is not in the layering table; add it to layers in layering_test.go and to DESIGN.md", path, dir)
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		checked++
		for _, imp := range f.Imports {
			ip := strings.Trim(imp.Path.Value, `"`)
			switch {
			case ip == module || strings.HasPrefix(ip, module+"/"):
				to := strings.TrimPrefix(strings.TrimPrefix(ip, module), "/")
				if to == dir {
					continue
				}
				tl, ok := layerOf(to)
				if !ok || tl >= from || strings.HasPrefix(to, "cmd/") || strings.HasPrefix(to, "examples/") {
					t.Errorf("%s: %s imports %s, which DESIGN.md does not allow (imports only go down the package list; nothing imports cmd or examples)", path, dir, to)
				}
			case strings.Contains(strings.SplitN(ip, "/", 2)[0], "."):
				allowed, limited := thirdParty[dir]
				if !limited {
					continue
				}
				okImp := false
				for _, a := range allowed {
					if ip == a || strings.HasPrefix(ip, a+"/") {
						okImp = true
					}
				}
				if !okImp {
					t.Errorf("%s: %s imports %s; DESIGN.md allows it only %v", path, dir, ip, allowed)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("checked no files")
	}
}

func TestLayerOf(t *testing.T) {
	for _, tc := range []struct {
		dir  string
		want int
	}{
		{"session", 0}, {"prompt", 4}, {"envs", 5}, {"internal/term", 6}, {"envs/envtest", 7}, {"envs/bash", 7},
		{"orchestrator", 8}, {"tokens", 0}, {"tokens/bpe", 9}, {"agent", 10}, {"agent/openai", 11}, {"cmd/unfold", 12}, {"examples/timer", 12}, {"bench/compare", 12},
	} {
		got, ok := layerOf(tc.dir)
		if !ok || got != tc.want {
			t.Errorf("layerOf(%q) = %d, %v; want %d, true", tc.dir, got, ok, tc.want)
		}
	}
	if _, ok := layerOf("util"); ok {
		t.Errorf("layerOf(util) found a layer; want none")
	}
}
