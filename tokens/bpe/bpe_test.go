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

func BenchmarkCount(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "markdown.txt"))
	if err != nil {
		b.Fatal(err)
	}
	text := strings.Repeat(string(data), 800) // about 1 MB of markdown
	for _, c := range []*bpe.Counter{bpe.O200kBase(), bpe.Cl100kBase()} {
		b.Run(string(c.Encoding()), func(b *testing.B) {
			c.Count("warm up")
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				c.Count(text)
			}
		})
	}
}
