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
		{bpe.O200kBase(), "a\x7fb", 2},    // tiktoken-go drops DEL
		{bpe.O200kBase(), "\xff", 1},      // an invalid byte counts as U+FFFD
		{bpe.Cl100kBase(), "\xff\xfe", 1}, // "\ufffd\ufffd" is one token
	} {
		if got := tc.enc.Count(tc.text); got != tc.want {
			t.Errorf("%s: Count(%q) = %d, want %d", tc.enc.Encoding(), tc.text, got, tc.want)
		}
	}
}

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
