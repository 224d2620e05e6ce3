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

// BenchmarkLoad measures loading a counter's vocabulary, the part of a
// process's first Count that the later ones do not pay: checking the
// compiled-in table's header and slicing it.
func BenchmarkLoad(b *testing.B) {
	for _, c := range counters {
		b.Run(string(c.Encoding()), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := loadVocab(c.Encoding()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
