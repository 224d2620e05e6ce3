package bpe

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestMergeSmallLarge checks that the two merge loops agree on chunks both
// can take: random bytes, and text from the palette.
func TestMergeSmallLarge(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, c := range counters {
		v, err := c.vocab()
		if err != nil {
			t.Fatal(err)
		}
		t.Run(string(c.Encoding()), func(t *testing.T) {
			var sc scratch
			for range 5000 {
				var chunk string
				if r.IntN(2) == 0 {
					b := make([]byte, 2+r.IntN(smallChunk-1))
					for i := range b {
						b[i] = byte(r.IntN(256))
					}
					chunk = string(b)
				} else {
					chunk = randomText(r, 30)
					if len(chunk) < 2 || len(chunk) > smallChunk {
						continue
					}
				}
				if small, large := v.mergeSmall(chunk), v.mergeLarge(chunk, &sc); small != large {
					t.Fatalf("%q: mergeSmall gives %d tokens, mergeLarge %d", chunk, small, large)
				}
			}
		})
	}
}

// TestLongChunks compares counts with tiktoken's on chunks long enough for
// the heap merge.
func TestLongChunks(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	letters := func(n int, alphabet string) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		return string(b)
	}
	for _, tc := range []struct{ name, text string }{
		{"letters at the threshold", letters(smallChunk, "abcdefghijklmnopqrstuvwxyz")},
		{"letters past the threshold", letters(smallChunk+1, "abcdefghijklmnopqrstuvwxyz")},
		{"random letters", letters(5000, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")},
		{"repeated letter", strings.Repeat("a", 3001)},
		{"random punctuation", letters(5000, "!\"#$%&()*+,-./:;<=>?@[\\]^_`{|}~")},
		{"table rule", "|" + strings.Repeat("---|", 400) + "\n"},
		{"spaces", strings.Repeat(" ", 4000)},
		{"cjk", strings.Repeat("漢字かなカナ", 300)},
		{"emoji", strings.Repeat("🚀✨👍", 300)},
	} {
		for _, c := range counters {
			t.Run(string(c.Encoding())+"/"+tc.name, func(t *testing.T) {
				checkAgainstRef(t, c, tc.text)
			})
		}
	}
}
