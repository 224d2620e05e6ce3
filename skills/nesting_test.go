package skills_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/skills"
)

// stair is a mapping nested n levels deep by indentation, one space more
// on each line.
func stair(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%sk%d:\n", strings.Repeat(" ", i+1), i)
	}
	return b.String()
}

// dashes is a list nested n levels deep by indentation.
func dashes(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%s-\n", strings.Repeat(" ", i))
	}
	return b.String()
}

// keys is a mapping of n keys, indented by two spaces.
func keys(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "  k%d: v\n", i)
	}
	return b.String()
}

// listValues is a mapping of n keys, each a list of mappings at the
// key's column.
func listValues(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "  x%d:\n  - a: b\n    c: d\n", i)
	}
	return b.String()
}

// TestNesting loads, from files on disk, front matters whose nesting or
// number of keys would take go-yaml's parser gigabytes or seconds, each
// within the 64 KiB limit: each is refused on its line, and the load
// allocates a bounded amount. Brackets the parser does not read as
// nesting (in quotes, comments, block scalars) and nesting up to the
// bound load.
func TestNesting(t *testing.T) {
	const head = "---\nname: demo\ndescription: d\nmetadata:"
	deep := fmt.Sprintf("more than %d levels deep", skills.MaxNesting)
	many := fmt.Sprintf("more than %d keys", skills.MaxKeys)
	cases := []struct {
		name string
		yml  string // after "metadata:"
		rule skills.Rule
		line int    // 0 when the skill loads
		msg  string // part of the message
	}{
		{"unclosed [", " " + strings.Repeat("[", 65000), skills.RuleFrontMatter, 4, deep},
		{"closed [", " " + strings.Repeat("[", 30000) + strings.Repeat("]", 30000), skills.RuleFrontMatter, 4, deep},
		{"unclosed {", " " + strings.Repeat("{", 65000), skills.RuleFrontMatter, 4, deep},
		{"flow mappings", " " + strings.Repeat("{a: ", 16000), skills.RuleFrontMatter, 4, deep},
		{"flow lists with entries", " " + strings.Repeat("[a, ", 16000), skills.RuleFrontMatter, 4, deep},
		{"brackets over lines", strings.Repeat("\n [", 20000), skills.RuleFrontMatter, 4 + skills.MaxNesting, deep},
		{"block lists on a line", "\n" + strings.Repeat("- ", 32000) + "x", skills.RuleFrontMatter, 5, deep},
		{"indentation", "\n" + stair(300), skills.RuleFrontMatter, 4 + skills.MaxNesting, deep},
		{"lists by indentation", "\n" + dashes(300), skills.RuleFrontMatter, 4 + skills.MaxNesting, deep},
		{"keys", "\n" + keys(5000), skills.RuleFrontMatter, 5 + skills.MaxKeys, many},
		{"explicit keys", "\n" + strings.Repeat("  ? k\n", 5000), skills.RuleFrontMatter, 5 + skills.MaxKeys, many},
		{"at the bound", " " + strings.Repeat("[", skills.MaxNesting-1) + strings.Repeat("]", skills.MaxNesting-1), skills.RuleMetadata, 4, "not a list"},
		{"past the bound", " " + strings.Repeat("[", skills.MaxNesting) + strings.Repeat("]", skills.MaxNesting), skills.RuleFrontMatter, 4, deep},
		{"keys at the bound", "\n" + keys(skills.MaxKeys), "", 0, ""},
		{"brackets quoted", " {a: \"" + strings.Repeat("[{", 20000) + "\", b: '" + strings.Repeat("[{", 10000) + "'}", "", 0, ""},
		{"brackets in comments", " # " + strings.Repeat("[", 30000) + "\n  a: b # " + strings.Repeat("{", 30000), "", 0, ""},
		{"brackets in a block scalar", "\n  a: |\n    " + strings.Repeat("[", 30000) + "\n  b: >\n    " + strings.Repeat("- ", 10000), "", 0, ""},
		{"lists as values", "\n" + listValues(900), skills.RuleMetadata, 5, "must be strings"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "skills")
			src := head + c.yml + "\n---\nbody\n"
			if len(src) > skills.MaxFrontMatterBytes {
				t.Fatalf("the front matter is %d bytes, past the limit", len(src))
			}
			if err := os.MkdirAll(filepath.Join(dir, "demo"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "demo", skills.FileName), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			set, err := skills.Load(dir)
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatal(err)
			}
			// The lexer's tokens take some 300 bytes for each byte of
			// brackets; parsing "[" 16,000 deep took 425 MB.
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
				t.Errorf("loading allocated %d MB, want at most 64", alloc>>20)
			}
			ps := set.Problems()
			if c.rule == "" {
				if set.Len() != 1 {
					t.Fatalf("got problems %v, want the skill loaded", ps)
				}
				return
			}
			if len(ps) == 0 {
				t.Fatalf("the skill loaded, want %s:%d: ...%s... (%s)", skills.FileName, c.line, c.msg, c.rule)
			}
			p := ps[0]
			if p.Rule != c.rule || p.Line != c.line || p.File != filepath.Join(dir, "demo", skills.FileName) || !strings.Contains(p.Message, c.msg) {
				t.Errorf("got %s, want %s:%d: ...%s... (%s)", p, skills.FileName, c.line, c.msg, c.rule)
			}
		})
	}
}
