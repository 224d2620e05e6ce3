package unfold_test

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/unfold-dev/unfold"

// designFile is where the layering table and its diagram live.
const designFile = "docs/design.md"

// layer is a row of the layering table: a package, or with a trailing
// slash the packages below a folder, its layer, and the modules outside
// the standard library it may import (nil: any).
type layer struct {
	prefix     string
	layer      int
	thirdParty []string
}

// readLayers parses the table between <!-- layers:begin --> and
// <!-- layers:end --> in docs/design.md.
func readLayers(t *testing.T) []layer {
	t.Helper()
	doc, err := os.ReadFile(designFile)
	if err != nil {
		t.Fatal(err)
	}
	block := between(t, string(doc), "<!-- layers:begin -->", "<!-- layers:end -->")
	var out []layer
	for n, line := range strings.Split(strings.TrimSpace(block), "\n") {
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		if n < 2 { // the header and its rule
			continue
		}
		if len(cells) != 4 {
			t.Fatalf("%s: layers table row %q: want 4 cells (layer, package, owns, third-party modules)", designFile, line)
		}
		num, err := strconv.Atoi(strings.TrimSpace(cells[0]))
		if err != nil {
			t.Fatalf("%s: layers table row %q: layer: %v", designFile, line, err)
		}
		l := layer{prefix: strings.Trim(strings.TrimSpace(cells[1]), "`"), layer: num}
		switch mods := strings.TrimSpace(cells[3]); mods {
		case "any":
		case "none":
			l.thirdParty = []string{}
		default:
			for m := range strings.SplitSeq(mods, ",") {
				l.thirdParty = append(l.thirdParty, strings.TrimSpace(m))
			}
		}
		out = append(out, l)
	}
	if len(out) == 0 {
		t.Fatalf("%s: the layers table has no rows", designFile)
	}
	return out
}

func between(t *testing.T, doc, begin, end string) string {
	t.Helper()
	_, rest, ok := strings.Cut(doc, begin)
	block, _, ok2 := strings.Cut(rest, end)
	if !ok || !ok2 {
		t.Fatalf("%s: no %s ... %s block", designFile, begin, end)
	}
	return block
}

// layerOf returns the row for the package in directory rel: the row with
// the longest prefix that matches it ("envs/" wins over "envs" for
// envs/bash; "agent" alone does not cover agent/openai).
func layerOf(layers []layer, rel string) (layer, bool) {
	best, bestLen := layer{}, -1
	for _, l := range layers {
		match := rel == l.prefix
		if strings.HasSuffix(l.prefix, "/") {
			match = strings.HasPrefix(rel, l.prefix)
		}
		if match && len(l.prefix) > bestLen {
			best, bestLen = l, len(l.prefix)
		}
	}
	return best, bestLen >= 0
}

func TestImportLayering(t *testing.T) {
	layers := readLayers(t)
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
		from, ok := layerOf(layers, dir)
		if !ok {
			t.Errorf("%s: package %s is not in the layers table; add a row to %s", path, dir, designFile)
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
				tl, ok := layerOf(layers, to)
				if !ok || tl.layer >= from.layer || strings.HasPrefix(to, "cmd/") || strings.HasPrefix(to, "examples/") {
					t.Errorf("%s: %s (layer %d) imports %s (layer %d), which %s does not allow: imports only go down the layers; nothing imports cmd or examples", path, dir, from.layer, to, tl.layer, designFile)
				}
			case strings.Contains(strings.SplitN(ip, "/", 2)[0], "."):
				if from.thirdParty == nil {
					continue
				}
				okImp := false
				for _, a := range from.thirdParty {
					if ip == a || strings.HasPrefix(ip, a+"/") {
						okImp = true
					}
				}
				if !okImp {
					t.Errorf("%s: %s imports %s; %s allows it only %v", path, dir, ip, designFile, from.thirdParty)
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
	layers := readLayers(t)
	for _, tc := range []struct {
		dir  string
		want int
	}{
		{"session", 0}, {"prompt", 4}, {"envs", 5}, {"internal/term", 6}, {"envs/envtest", 7}, {"envs/bash", 7},
		{"internal/golden", 0}, {"orchestrator", 8}, {"tokens", 0}, {"tokens/bpe", 9}, {"agent", 10}, {"agent/internal/transport", 11}, {"agent/openai", 12},
		{"cmd/unfold", 13}, {"examples/timer", 13}, {"bench/compare", 13},
	} {
		got, ok := layerOf(layers, tc.dir)
		if !ok || got.layer != tc.want {
			t.Errorf("layerOf(%q) = %d, %v; want %d, true", tc.dir, got.layer, ok, tc.want)
		}
	}
	for _, dir := range []string{"util", "agentx"} {
		if _, ok := layerOf(layers, dir); ok {
			t.Errorf("layerOf(%s) found a layer; want none", dir)
		}
	}
}

// TestDesignDiagram keeps the diagram in docs/design.md drawn from the
// layers table: one node per layer listing its packages, each layer above
// the one below.
func TestDesignDiagram(t *testing.T) {
	layers := readLayers(t)
	byLayer := map[int][]string{}
	top := 0
	for _, l := range layers {
		byLayer[l.layer] = append(byLayer[l.layer], l.prefix)
		top = max(top, l.layer)
	}
	var b strings.Builder
	b.WriteString("\n```mermaid\nflowchart BT\n")
	var chain []string
	for n := 0; n <= top; n++ {
		if len(byLayer[n]) == 0 {
			continue
		}
		fmt.Fprintf(&b, "  L%d[\"%d: %s\"]\n", n, n, strings.Join(byLayer[n], " · "))
		chain = append(chain, fmt.Sprintf("L%d", n))
	}
	b.WriteString("  " + strings.Join(chain, " --> ") + "\n```\n")
	doc, err := os.ReadFile(designFile)
	if err != nil {
		t.Fatal(err)
	}
	if got := between(t, string(doc), "<!-- diagram:begin -->", "<!-- diagram:end -->"); got != b.String() {
		t.Errorf("%s: the diagram is not the one the layers table draws; replace the block between the diagram markers with:\n%s", designFile, b.String())
	}
}
