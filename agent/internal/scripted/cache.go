package scripted

import (
	"crypto/sha256"
	"encoding/json"

	"github.com/unfold-dev/unfold/tokens"
)

// The prompt caches the servers simulate, as the providers document them:
// OpenAI serves the longest prefix identical to an earlier request, from
// 1,024 tokens on, in steps of 128; Anthropic writes the prefix up to each
// cache_control breakpoint and reads the longest written prefix that ends
// at most 20 blocks before a breakpoint of the request, from 1,024 tokens
// on. Tokens are counted with tokens.Estimate over each piece's JSON.

const (
	minCached  = 1024
	cacheStep  = 128
	lookBehind = 20
)

func pieceTokens(segs []string) []int {
	out := make([]int, len(segs))
	for i, s := range segs {
		out[i] = tokens.Estimate.Count(s)
	}
	return out
}

func pieces(vs ...any) []string {
	var out []string
	for _, v := range vs {
		switch v := v.(type) {
		case []json.RawMessage:
			for _, r := range v {
				out = append(out, string(r))
			}
		case json.RawMessage:
			if len(v) > 0 {
				out = append(out, string(v))
			}
		case string:
			out = append(out, v)
		}
	}
	return out
}

// openAICache remembers the requests' pieces.
type openAICache struct {
	seen [][]string
}

// serve returns the tokens of segs and how many a cache serves.
func (c *openAICache) serve(segs []string) (total, cached int) {
	toks := pieceTokens(segs)
	for _, t := range toks {
		total += t
	}
	for _, prev := range c.seen {
		n := 0
		for i := range segs {
			if i >= len(prev) || prev[i] != segs[i] {
				break
			}
			n += toks[i]
		}
		cached = max(cached, n)
	}
	c.seen = append(c.seen, segs)
	if cached < minCached {
		return total, 0
	}
	return total, cached / cacheStep * cacheStep
}

// anthropicCache holds the prefixes written, by hash, with their tokens.
type anthropicCache struct {
	written map[[32]byte]bool
}

// serve returns a request's input tokens after its last breakpoint, the
// tokens read from the cache and those written to it. breaks are the
// indices of the pieces that carry cache_control.
func (c *anthropicCache) serve(segs []string, breaks []int) (input, read, write int) {
	if c.written == nil {
		c.written = map[[32]byte]bool{}
	}
	toks := pieceTokens(segs)
	sums := make([]int, len(segs)+1) // sums[i]: tokens of segs[:i]
	keys := make([][32]byte, len(segs)+1)
	h := sha256.New()
	for i, s := range segs {
		sums[i+1] = sums[i] + toks[i]
		h.Write([]byte(s))
		h.Write([]byte{0})
		copy(keys[i+1][:], h.Sum(nil))
	}
	last := 0 // pieces up to the last breakpoint
	for _, b := range breaks {
		last = max(last, b+1)
	}
	hit := 0
	for _, b := range breaks {
		for i := b + 1; i > 0 && i >= b+1-lookBehind; i-- {
			if c.written[keys[i]] {
				hit = max(hit, i)
				break
			}
		}
	}
	for _, b := range breaks {
		if sums[b+1] >= minCached {
			c.written[keys[b+1]] = true
		}
	}
	read = sums[hit]
	if last > hit && sums[last] >= minCached {
		write = sums[last] - sums[hit]
	}
	input = sums[len(segs)] - read - write
	return input, read, write
}
