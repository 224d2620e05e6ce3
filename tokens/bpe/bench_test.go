package bpe

import (
	"testing"

	"github.com/unfold-dev/unfold/internal/textgen"
)

// The benchmarks count 1 MB of mixed markdown (see textgen.Markdown). They
// measure warm counters: the first Count of a process also loads the
// vocabulary, which BenchmarkLoad measures.

// BenchmarkCount measures Count, and tiktoken-go's Count on the same text
// for comparison.
func BenchmarkCount(b *testing.B) {
	text := textgen.Markdown(1 << 20)
	for _, c := range counters {
		b.Run(string(c.Encoding())+"/bpe", func(b *testing.B) {
			c.Count("warm up")
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				c.Count(text)
			}
		})
		b.Run(string(c.Encoding())+"/tiktoken-go", func(b *testing.B) {
			loadRef(b)
			ref := goCodecs[c.Encoding()]
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ref.Count(text); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLowerBound measures LowerBound, which needs no vocabulary.
func BenchmarkLowerBound(b *testing.B) {
	text := textgen.Markdown(1 << 20)
	for _, c := range counters {
		b.Run(string(c.Encoding()), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				c.LowerBound(text)
			}
		})
	}
}

// BenchmarkLoad measures building a counter's vocabulary from tiktoken-go's,
// the part of a process's first Count that this package adds: the first
// use of tiktoken-go's own vocabulary, once per process, comes on top.
func BenchmarkLoad(b *testing.B) {
	for _, c := range counters {
		b.Run(string(c.Encoding()), func(b *testing.B) {
			if _, err := loadVocab(c.Encoding()); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := loadVocab(c.Encoding()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
