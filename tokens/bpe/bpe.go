// Package bpe counts tokens exactly with the byte-pair encodings of OpenAI's
// models: o200k_base (GPT-4o and later) and cl100k_base (GPT-4, GPT-3.5).
// The vocabularies are compiled into the program; nothing is downloaded at
// run time.
package bpe

import (
	"fmt"
	"sync"

	"github.com/tiktoken-go/tokenizer"

	"github.com/unfold-dev/unfold/tokens"
)

// Encoding names a byte-pair encoding.
type Encoding string

// The encodings this package counts with.
const (
	O200k  Encoding = "o200k_base"
	Cl100k Encoding = "cl100k_base"
)

// Counter counts tokens with one encoding. It is safe for concurrent use.
type Counter struct {
	enc  Encoding
	once sync.Once
	c    tokenizer.Codec
	err  error
}

var _ tokens.Counter = (*Counter)(nil)

var (
	o200k  = &Counter{enc: O200k}
	cl100k = &Counter{enc: Cl100k}
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

func (c *Counter) codec() (tokenizer.Codec, error) {
	c.once.Do(func() {
		switch c.enc {
		case O200k:
			c.c, c.err = tokenizer.Get(tokenizer.O200kBase)
		case Cl100k:
			c.c, c.err = tokenizer.Get(tokenizer.Cl100kBase)
		}
		if c.err != nil {
			c.err = fmt.Errorf("bpe: load %s: %w", c.enc, c.err)
		}
	})
	return c.c, c.err
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
func (c *Counter) CountErr(text string) (int, error) {
	codec, err := c.codec()
	if err != nil {
		return 0, err
	}
	n, err := codec.Count(text)
	if err != nil {
		return 0, fmt.Errorf("bpe: count %s: %w", c.enc, err)
	}
	return n, nil
}
