package bpe

import (
	"fmt"
	"sync"
	"unicode/utf8"

	"github.com/unfold-dev/unfold/tokens"
)

// Encoding names a byte-pair encoding.
type Encoding string

// The encodings this package counts with.
const (
	O200k  Encoding = "o200k_base"
	Cl100k Encoding = "cl100k_base"
)

// Counter counts tokens with one encoding ([O200k] or [Cl100k]). It is
// safe for concurrent use. [Counter.CountErr] reports a vocabulary that
// failed to load, which Count cannot.
type Counter struct {
	enc   Encoding
	chunk func(s string, i int) int // the encoding's pre-tokenizer

	once sync.Once // loads v
	v    *vocab
	err  error
}

var _ tokens.Additive = (*Counter)(nil)

var (
	o200k  = &Counter{enc: O200k, chunk: o200kChunk}
	cl100k = &Counter{enc: Cl100k, chunk: cl100kChunk}
)

// O200kBase returns the o200k_base counter. Its vocabulary loads on first use.
func O200kBase() *Counter { return o200k }

// Cl100kBase returns the cl100k_base counter. Its vocabulary loads on first use.
func Cl100kBase() *Counter { return cl100k }

// For returns the counter for an encoding name: "o200k", "o200k_base",
// "cl100k" or "cl100k_base".
func For(name string) (*Counter, error) {
	switch name {
	case "o200k", string(O200k):
		return o200k, nil
	case "cl100k", string(Cl100k):
		return cl100k, nil
	}
	return nil, fmt.Errorf("bpe: unknown encoding %q: want o200k or cl100k", name)
}

// Encoding returns the counter's encoding.
func (c *Counter) Encoding() Encoding { return c.enc }

func (c *Counter) vocab() (*vocab, error) {
	c.once.Do(func() {
		c.v, c.err = loadVocab(c.enc)
		if c.err != nil {
			c.err = fmt.Errorf("bpe: load %s: %w", c.enc, c.err)
		}
	})
	return c.v, c.err
}

// Count returns the exact number of tokens in text. Special-token strings
// such as "<|endoftext|>" count as ordinary text. It panics only if the
// built-in vocabulary cannot load, which would be a build defect.
func (c *Counter) Count(text string) int {
	n, err := c.CountErr(text)
	if err != nil {
		panic(err)
	}
	return n
}

// CountErr is Count with the vocabulary's load error returned instead of
// panicking.
//
// Text that is not valid UTF-8 counts as if each invalid byte were U+FFFD,
// the rune a Go string yields for it (tiktoken itself only takes valid
// text, and tiktoken-go counts the same way).
func (c *Counter) CountErr(text string) (int, error) {
	v, err := c.vocab()
	if err != nil {
		return 0, err
	}
	if !utf8.ValidString(text) {
		text = replaceInvalid(text)
	}
	var sc scratch
	n := 0
	for i := 0; i < len(text); {
		e := c.chunk(text, i)
		if e == i { // no chunk starts here, which no rune allows: count it alone
			_, n := utf8.DecodeRuneInString(text[i:])
			e = i + n
		}
		n += v.encodedLen(text[i:e], &sc)
		i = e
	}
	return n, nil
}

// LowerBound returns a number of tokens text has at least, for a small
// fraction of the cost of Count: it reads each byte once, needs no
// vocabulary (so it never loads one and never fails), and, on English prose,
// comes to about nine tenths of the count (on markdown and code, two thirds
// to four fifths). Bounds add up across a blank line: LowerBound(a) +
// LowerBound(b) <= Count(a + "\n\n" + b). It implements
// tokens.LowerBounder, which budgeted renders use to pass over sections that
// cannot fit without counting them.
func (c *Counter) LowerBound(text string) int { return lowerBound(text) }

// AddsUpAtHeadings marks the counter as tokens.Additive. In both
// encodings, after a line break a chunk takes only more line breaks,
// whitespace or, in o200k_base, '/', so a printable ASCII character other
// than '/' after a blank line starts a chunk, and counts add up there:
// Count(a + "\n\n" + b) == Count(a + "\n\n") + Count(b).
func (c *Counter) AddsUpAtHeadings() {}

// replaceInvalid returns s with each byte that is not part of a valid UTF-8
// sequence replaced by U+FFFD, the rune ranging over s yields there.
func replaceInvalid(s string) string {
	b := make([]byte, 0, len(s)+len(s)/2)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b = utf8.AppendRune(b, utf8.RuneError)
		} else {
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return string(b)
}
