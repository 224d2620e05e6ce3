package bpe

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// longChunks are texts that are one chunk of 1 MB each: runs of one
// character, a repeated pair, and random letters.
func longChunks() []struct{ name, text string } {
	r := rand.New(rand.NewPCG(3, 3))
	b := make([]byte, 1<<20)
	for i := range b {
		b[i] = "abcdefghijklmnopqrstuvwxyz"[r.IntN(26)]
	}
	return []struct{ name, text string }{
		{"x", strings.Repeat("x", 1<<20)},
		{"dash", strings.Repeat("-", 1<<20)},
		{"space", strings.Repeat(" ", 1<<20)},
		{"ff", strings.Repeat("\xff", 1<<20)},
		{"ab", strings.Repeat("ab", 1<<19)},
		{"letters", string(b)},
	}
}

// BenchmarkLongChunk measures Count on 1 MB texts that are one chunk.
func BenchmarkLongChunk(b *testing.B) {
	for _, tc := range longChunks() {
		for _, c := range counters {
			b.Run(string(c.Encoding())+"/"+tc.name, func(b *testing.B) {
				b.SetBytes(int64(len(tc.text)))
				b.ReportAllocs()
				for b.Loop() {
					c.Count(tc.text)
				}
			})
		}
	}
}
