package bpe

import (
	"fmt"
	"hash/maphash"
	"math"

	"github.com/tiktoken-go/tokenizer"
)

// noRank is the rank of a byte string that is not a token.
const noRank = math.MaxUint32

// vocab maps the byte strings of an encoding's tokens to their ranks, which
// are also their ids: the lower the rank, the earlier byte-pair encoding
// merges it. It is immutable once built and safe for concurrent use.
type vocab struct {
	// tokens holds the tokens' bytes back to back in rank order; token r
	// is tokens[ends[r-1]:ends[r]] (from 0 for r == 0).
	tokens string
	ends   []uint32

	// slots is an open-addressing hash table of the tokens, probed
	// linearly from the top bits of the key's hash; a zero key marks an
	// empty slot. See key for what a slot's key holds.
	slots []slot
	shift uint // 64 - log2(len(slots))
	seed  maphash.Seed

	// pairs holds the rank of every two-byte token at index b0<<8|b1, and
	// noRank for the pairs that are not tokens: byte-pair encoding starts
	// by ranking every adjacent pair of a chunk.
	pairs []uint32
}

type slot struct {
	key  uint64
	rank uint32
}

// maxPacked is the length of the longest byte string a key holds whole.
const maxPacked = 7

// key returns the hash table key of s. A string of up to maxPacked bytes is
// its own key: its bytes, little-endian, with its length in the top byte,
// so finding it takes no comparison of bytes. A longer string's key is its
// hash with the top bit set, and a match is confirmed on the bytes.
func (v *vocab) key(s string) uint64 {
	if len(s) > maxPacked {
		return maphash.String(v.seed, s) | 1<<63
	}
	k := uint64(len(s)) << 56
	for i := 0; i < len(s); i++ {
		k |= uint64(s[i]) << (8 * i)
	}
	return k
}

// home returns the slot where the probe for key starts.
func (v *vocab) home(key uint64) uint64 {
	return (key * 0x9e3779b97f4a7c15) >> v.shift
}

// vocabSize is the number of ordinary tokens of each encoding, ids
// 0..vocabSize-1; the special tokens come after them and are not text.
var vocabSize = map[Encoding]int{
	O200k:  199998,
	Cl100k: 100256,
}

// loadVocab reads the encoding's tokens out of tiktoken-go, the only
// exported path to its vocabulary being Decode, one id at a time.
func loadVocab(enc Encoding) (*vocab, error) {
	var name tokenizer.Encoding
	switch enc {
	case O200k:
		name = tokenizer.O200kBase
	case Cl100k:
		name = tokenizer.Cl100kBase
	}
	codec, err := tokenizer.Get(name)
	if err != nil {
		return nil, err
	}
	size := vocabSize[enc]
	tokens := make([]byte, 0, 8*size)
	ends := make([]uint32, size)
	id := []uint{0}
	for r := range ends {
		id[0] = uint(r)
		t, err := codec.Decode(id)
		if err != nil {
			return nil, fmt.Errorf("token %d: %w", r, err)
		}
		tokens = append(tokens, t...)
		ends[r] = uint32(len(tokens))
	}
	id[0] = uint(size)
	if _, err := codec.Decode(id); err == nil {
		return nil, fmt.Errorf("more than the expected %d tokens", size)
	}
	return newVocab(string(tokens), ends), nil
}

// newVocab builds the table for the tokens in rank order: token r is
// tokens[ends[r-1]:ends[r]].
func newVocab(tokens string, ends []uint32) *vocab {
	v := &vocab{
		tokens: tokens,
		ends:   ends,
		seed:   maphash.MakeSeed(),
		pairs:  make([]uint32, 1<<16),
	}
	bits := uint(1)
	for 1<<bits < 2*len(ends) {
		bits++
	}
	v.slots = make([]slot, 1<<bits)
	v.shift = 64 - bits
	mask := uint64(len(v.slots) - 1)
	for i := range v.pairs {
		v.pairs[i] = noRank
	}
	for r := range ends {
		t := v.token(uint32(r))
		k := v.key(t)
		i := v.home(k)
		for v.slots[i].key != 0 {
			i = (i + 1) & mask
		}
		v.slots[i] = slot{key: k, rank: uint32(r)}
		if len(t) == 2 {
			v.pairs[int(t[0])<<8|int(t[1])] = uint32(r)
		}
	}
	return v
}

// token returns the bytes of the token of rank r.
func (v *vocab) token(r uint32) string {
	start := uint32(0)
	if r > 0 {
		start = v.ends[r-1]
	}
	return v.tokens[start:v.ends[r]]
}

// rank returns the rank of the token s, or noRank if s is not a token.
func (v *vocab) rank(s string) uint32 {
	if len(s) == 2 {
		return v.pairs[int(s[0])<<8|int(s[1])]
	}
	k := v.key(s)
	mask := uint64(len(v.slots) - 1)
	for i := v.home(k); ; i = (i + 1) & mask {
		sl := &v.slots[i]
		if sl.key == 0 {
			return noRank
		}
		if sl.key == k && (len(s) <= maxPacked || v.token(sl.rank) == s) {
			return sl.rank
		}
	}
}
