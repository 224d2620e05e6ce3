package bpe

import (
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/internal/textgen"
)

// FuzzCount checks, for both encodings, that the chunks and the count of
// any text are tiktoken's (see checkAgainstRef), and that LowerBound stays
// below the count.
// Each input is checked as it is, and mapped through the palette so that
// mutating bytes also explores sequences of every class the split
// patterns tell apart.
func FuzzCount(f *testing.F) {
	for _, tc := range edgeCases {
		if len(tc.text) < 200 {
			f.Add(tc.text)
		}
	}
	f.Add(textgen.Markdown(500))
	f.Fuzz(func(t *testing.T, text string) {
		for _, c := range counters {
			checkAgainstRef(t, c, text)
			checkAgainstRef(t, c, fromPalette(text))
		}
	})
}

// fromPalette maps each byte of s to a piece of the palette.
func fromPalette(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		b.WriteString(palette[int(s[i])%len(palette)])
	}
	return b.String()
}

// TestLowerBoundNeedsNoVocabulary checks that LowerBound does not load the
// vocabulary.
func TestLowerBoundNeedsNoVocabulary(t *testing.T) {
	c := &Counter{enc: O200k, chunk: o200kChunk}
	if got := c.LowerBound("hello world"); got != 2 {
		t.Errorf("LowerBound: got %d, want 2", got)
	}
	if c.v != nil {
		t.Error("LowerBound loaded the vocabulary")
	}
}
