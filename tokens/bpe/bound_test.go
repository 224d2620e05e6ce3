package bpe

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

func TestLowerBound(t *testing.T) {
	for _, tc := range []struct {
		text string
		want int
	}{
		{"", 0},
		{"hello world", 2},
		{"it's", 1},               // the contraction joins the word
		{"abc123def", 3},          // digits split letters
		{"1234567", 3},            // pieces of three digits
		{"12\u00b23", 0},          // digits beside a byte outside ASCII may be one longer run
		{"caf\u00e9teria", 1},     // bytes outside ASCII join letters
		{"a_b c-d", 4},            // punctuation and spaces separate
		{"## 1. Title (path)", 6}, // "(" goes with "path"
	} {
		if got := lowerBound(tc.text); got != tc.want {
			t.Errorf("lowerBound(%q) = %d, want %d", tc.text, got, tc.want)
		}
	}
}

// TestLowerBoundSamples checks the bound against exact counts of the sample
// files, and reports how close it comes.
func TestLowerBoundSamples(t *testing.T) {
	files, err := filepath.Glob("../testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no samples: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []*Counter{O200kBase(), Cl100kBase()} {
			lo, n := lowerBound(string(b)), c.Count(string(b))
			if lo > n {
				t.Errorf("%s %s: lower bound %d above the count %d", filepath.Base(f), c.Encoding(), lo, n)
			}
			t.Logf("%s %s: bound %d of %d tokens (%.0f%%)", filepath.Base(f), c.Encoding(), lo, n, 100*float64(lo)/float64(n))
		}
	}
}

// TestLowerBoundAddsUp checks the bound against the count of random texts
// built from every class of character the split patterns tell apart, alone
// and joined by a blank line.
func TestLowerBoundAddsUp(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 8))
	for range 3000 {
		checkBound(t, randomText(r, r.IntN(40)), randomText(r, r.IntN(40)))
	}
}

// FuzzLowerBound checks that the bound never exceeds the count, alone and
// across a blank line, with both encodings.
func FuzzLowerBound(f *testing.F) {
	for _, s := range []string{"hello world", "it's 12", "x\u00b2y", "a'b'c", "ABCdef ghi", "(x)\n/y", "123\u0661\u0662", "\u00e9\u0301a"} {
		f.Add(s, "## Title (path)")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		checkBound(t, a, b)
		checkBound(t, fromPalette(a), fromPalette(b))
	})
}

func checkBound(t *testing.T, a, b string) {
	for _, c := range counters {
		if lo, n := c.LowerBound(a), c.Count(a); lo > n {
			t.Fatalf("%s: LowerBound(%q) = %d, above Count %d", c.Encoding(), a, lo, n)
		}
		if lo, n := c.LowerBound(a)+c.LowerBound(b), c.Count(a+"\n\n"+b); lo > n {
			t.Fatalf("%s: bounds of %q and %q add to %d, above Count of the two joined by a blank line %d", c.Encoding(), a, b, lo, n)
		}
	}
}
