package bpe_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/unfold-dev/unfold/tokens/bpe"
)

// Known counts: the first two are OpenAI's published examples (the tiktoken
// cookbook encodes "tiktoken is great!" to six cl100k_base tokens); the
// sample files pin this package's counts so a change of vocabulary shows.
func TestKnownCounts(t *testing.T) {
	for _, tc := range []struct {
		enc  *bpe.Counter
		text string
		want int
	}{
		{bpe.Cl100kBase(), "tiktoken is great!", 6},
		{bpe.O200kBase(), "tiktoken is great!", 6},
		{bpe.Cl100kBase(), "hello world", 2},
		{bpe.O200kBase(), "hello world", 2},
		{bpe.O200kBase(), "", 0},
		{bpe.Cl100kBase(), "<|endoftext|>", 7},
		{bpe.O200kBase(), "\xff", 1},      // an invalid byte counts as U+FFFD
		{bpe.Cl100kBase(), "\xff\xfe", 1}, // "\ufffd\ufffd" is one token
	} {
		if got := tc.enc.Count(tc.text); got != tc.want {
			t.Errorf("%s: Count(%q) = %d, want %d", tc.enc.Encoding(), tc.text, got, tc.want)
		}
	}
}

// TestJavaScriptCounts checks counts computed with gpt-tokenizer 4.0.0
// (countTokens) and js-tiktoken 1.0.21 (encode), JavaScript ports of
// OpenAI's tiktoken, on Node 20, for the same encodings; the two agree on
// every text here. Most are where tiktoken-go counts otherwise: runs of
// whitespace holding line breaks apart, and DEL.
func TestJavaScriptCounts(t *testing.T) {
	for _, tc := range []struct {
		name          string
		text          string
		o200k, cl100k int
	}{
		{"blank line with spaces", "a\n  \n  b", 4, 4},
		{"line break spaces line break", "\n  \nx", 2, 2},
		{"line break spaces line break alone", "\n  \n", 1, 1},
		{"line breaks spaces line breaks", "\n\n  \n\n  x", 3, 4},
		{"spaces line break spaces", "  \n  \n  x", 3, 3},
		{"blank lines then rule", "  \n    \n\n---", 3, 3},
		{"indented command then rule", "    $ run --x=1  \n    \n\n---\n\n", 10, 10},
		{"space line break space", "a \n \n b", 3, 3},
		{"tabs and line breaks", "\t\n\t\nx", 2, 2},
		{"crlf blank line", "a\r\n\r\nb", 3, 3},
		{"crlf blank line with spaces", "a\r\n  \r\n  b", 5, 5},
		{"crlf run at end", "line\r\n\r\n\r\n", 2, 2},
		{"cr and lf", "\r\r\n\n", 2, 2},
		{"crlf space tab", "a\r\n \r\n\tb\r\n", 5, 5},
		{"spaces at end", "x  ", 2, 2},
		{"line break spaces at end", "x\n  ", 3, 3},
		{"line breaks tab at end", "x\n\n\t", 3, 3},
		{"space line break space at end", "x \n ", 3, 3},
		{"punctuation line break spaces at end", "end.\n  ", 3, 3},
		{"line breaks spaces at end", "a\n\n\n    ", 3, 3},
		{"spaces only", "  ", 1, 1},
		{"line break only", "\n", 1, 1},
		{"del inside word", "a\x7fb", 3, 3},
		{"del", "\x7f", 1, 1},
		{"del run", "\x7f\x7f\x7f", 3, 3},
		{"del between spaces", "x \x7f y", 4, 4},
		{"del before word", "\x7fword \x7f", 4, 4},
		{"vertical tab form feed", "a\vb\f \v\n\fc", 9, 9},
		{"unicode spaces and line breaks", "a\u00a0\n\u3000\nb", 5, 5},
		{"line and paragraph separators", "a\u2028\n  \u2029b", 7, 8},
		{"markdown blank lines", "## Title\n\n  \n- item\n    \n\n---\n", 7, 8},
		{"code block", "```go\nfunc f() {\n\treturn\n}\n```\n", 12, 12},
		{"contractions", "don't DON'T we'LL they'Re I'M", 9, 11},
		{"digits", "1234567 12 3", 7, 7},
		{"cookbook", "tiktoken is great!", 6, 6},
	} {
		for _, c := range []struct {
			enc  *bpe.Counter
			want int
		}{{bpe.O200kBase(), tc.o200k}, {bpe.Cl100kBase(), tc.cl100k}} {
			t.Run(string(c.enc.Encoding())+"/"+tc.name, func(t *testing.T) {
				if got := c.enc.Count(tc.text); got != c.want {
					t.Errorf("Count(%q): got %d, want %d", tc.text, got, c.want)
				}
			})
		}
	}
}

// TestSampleCounts pins the counts of the sample files, which are also
// gpt-tokenizer 4.0.0's and js-tiktoken 1.0.21's.
func TestSampleCounts(t *testing.T) {
	want := map[string][2]int{ // o200k, cl100k
		"prose.txt":     {305, 306},
		"code.go.txt":   {488, 489},
		"data.json.txt": {454, 453},
		"shell.txt":     {515, 515},
		"markdown.txt":  {350, 353},
	}
	for name, w := range want {
		data, err := os.ReadFile(filepath.Join("..", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		if got := bpe.O200kBase().Count(string(data)); got != w[0] {
			t.Errorf("%s o200k: got %d, want %d", name, got, w[0])
		}
		if got := bpe.Cl100kBase().Count(string(data)); got != w[1] {
			t.Errorf("%s cl100k: got %d, want %d", name, got, w[1])
		}
	}
}

func TestFor(t *testing.T) {
	for _, name := range []string{"o200k", "o200k_base", "cl100k", "cl100k_base"} {
		if _, err := bpe.For(name); err != nil {
			t.Errorf("For(%q): %v", name, err)
		}
	}
	if _, err := bpe.For("p50k"); err == nil || !strings.Contains(err.Error(), "want o200k or cl100k") {
		t.Errorf("For(p50k): got %v, want an error naming the choices", err)
	}
}

func TestConcurrentCount(t *testing.T) {
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if got := bpe.O200kBase().Count("hello world"); got != 2 {
				t.Errorf("got %d, want 2", got)
			}
		})
	}
	wg.Wait()
}

func TestCounterLowerBound(t *testing.T) {
	for _, tc := range []struct {
		name string
		text string
		want [2]int // o200k, cl100k
	}{
		{"empty", "", [2]int{0, 0}},
		{"words", "hello world", [2]int{2, 2}},
		{"contraction", "don't stop", [2]int{2, 2}}, // the contraction may join the word
		{"digits in threes", "1234567", [2]int{3, 3}},
		{"punctuation run", "a --> b", [2]int{3, 3}},
		{"spaces before a word", "a   b", [2]int{2, 2}}, // whitespace is not counted
		{"newlines", "a\n\nb", [2]int{2, 2}},
		{"rare word", "antidisestablishmentarianism", [2]int{1, 1}},
		{"del", "a\x7f", [2]int{1, 1}},
	} {
		for k, c := range []*bpe.Counter{bpe.O200kBase(), bpe.Cl100kBase()} {
			t.Run(string(c.Encoding())+"/"+tc.name, func(t *testing.T) {
				got := c.LowerBound(tc.text)
				if got != tc.want[k] {
					t.Errorf("LowerBound(%q): got %d, want %d", tc.text, got, tc.want[k])
				}
				if n := c.Count(tc.text); got > n {
					t.Errorf("LowerBound(%q) = %d, above Count %d", tc.text, got, n)
				}
			})
		}
	}
}
