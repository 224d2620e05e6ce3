package bpe

import (
	_ "embed"
	"errors"
	"fmt"
	"math"
	"math/bits"
)

// noRank is the rank of a byte string that is not a token.
const noRank = math.MaxUint32

// The vocabularies are compiled in as tables that are read where they lie:
// loading one checks its header and slices it, so a process that counts
// pays microseconds, not the tens of milliseconds that building a hash
// table of two hundred thousand tokens would take, and only the pages a
// count touches are read from the binary. The tables are generated from
// github.com/tiktoken-go/tokenizer's vocabularies by TestTables, which also
// checks them against the library's (`go generate` rewrites them).
//
//go:generate go test -run ^TestTables$ -args -write-tables

var (
	//go:embed o200k_base.table
	o200kTable string
	//go:embed cl100k_base.table
	cl100kTable string
)

// A table is, all integers little-endian:
//
//	header   magic "bpetab1\n", then uint32 tokens, homes, records, tokenBytes
//	pairs    65536 uint32: the rank of the two-byte token b0 b1 at b0<<8|b1, noRank if none
//	records  records times {key uint64, rank | distance<<24 uint32}: the hash table, see vocab.rank
//	ends     tokens uint32: token r is the bytes from ends[r-1] (0 for r == 0) to ends[r]
//	bytes    tokenBytes bytes: the tokens back to back in rank order
const (
	tableMagic = "bpetab1\n"
	headerSize = len(tableMagic) + 4*4
	pairsSize  = 4 << 16
	recordSize = 12
	rankBits   = 24 // a record's rank; the distance from its home is above
)

// vocab maps the byte strings of an encoding's tokens to their ranks, which
// are also their ids: the lower the rank, the earlier byte-pair encoding
// merges it. It reads a table (see tableMagic) in place; it is immutable
// and safe for concurrent use.
type vocab struct {
	pairs   string // the pairs section
	records string // the records section
	ends    string // the ends section
	bytes   string // the bytes section
	homes   uint64 // the records where probes start, 0 to homes-1
}

// vocabSize is the number of ordinary tokens of each encoding, ids
// 0..vocabSize-1; the special tokens come after them and are not text.
var vocabSize = map[Encoding]int{
	O200k:  199998,
	Cl100k: 100256,
}

// loadVocab returns the encoding's compiled-in vocabulary.
func loadVocab(enc Encoding) (*vocab, error) {
	switch enc {
	case O200k:
		return readTable(o200kTable, vocabSize[enc])
	case Cl100k:
		return readTable(cl100kTable, vocabSize[enc])
	}
	return nil, fmt.Errorf("no table for %s", enc)
}

var errTable = errors.New("malformed vocabulary table")

// readTable checks the header of table, which must hold tokens tokens, and
// returns the vocabulary that reads it.
func readTable(table string, tokens int) (*vocab, error) {
	if len(table) < headerSize || table[:len(tableMagic)] != tableMagic {
		return nil, fmt.Errorf("%w: no %q header", errTable, tableMagic)
	}
	h := table[len(tableMagic):]
	n, homes, records, size := le32(h, 0), le32(h, 4), le32(h, 8), le32(h, 12)
	if int(n) != tokens {
		return nil, fmt.Errorf("%w: %d tokens, want %d", errTable, n, tokens)
	}
	if homes == 0 || records <= homes {
		return nil, fmt.Errorf("%w: %d records for %d homes", errTable, records, homes)
	}
	want := uint64(headerSize) + pairsSize + uint64(records)*recordSize + 4*uint64(n) + uint64(size)
	if uint64(len(table)) != want {
		return nil, fmt.Errorf("%w: %d bytes, want %d", errTable, len(table), want)
	}
	v := &vocab{homes: uint64(homes)}
	rest := table[headerSize:]
	v.pairs, rest = rest[:pairsSize], rest[pairsSize:]
	v.records, rest = rest[:records*recordSize], rest[records*recordSize:]
	v.ends, v.bytes = rest[:4*n], rest[4*n:]
	if le64(v.records, len(v.records)-recordSize) != 0 {
		return nil, fmt.Errorf("%w: the last record is not empty", errTable)
	}
	if n > 0 && le32(v.ends, 4*int(n-1)) != size {
		return nil, fmt.Errorf("%w: the tokens end at %d, not %d", errTable, le32(v.ends, 4*int(n-1)), size)
	}
	return v, nil
}

// maxPacked is the length of the longest byte string a key holds whole.
const maxPacked = 7

// key returns the hash table key of s, never 0. A string of up to maxPacked
// bytes is its own key: its bytes, little-endian, with its length in the
// top byte, so finding it takes no comparison of bytes. A longer string's
// key is its hash with the top bit set, and a match is confirmed on the
// bytes.
func key(s string) uint64 {
	if len(s) > maxPacked {
		return hashLong(s) | 1<<63
	}
	k := uint64(len(s)) << 56
	for i := 0; i < len(s); i++ {
		k |= uint64(s[i]) << (8 * i)
	}
	return k
}

// hashLong hashes a string of more than maxPacked bytes. The hash is fixed
// (the tables store it), so it is written out here: each 8-byte word, then
// the last 8 bytes, multiplied in and folded down. It only has to spread the
// tokens of the tables over their homes: whatever the string, a lookup reads
// at most the records from its home to the last entry of that home, which
// TestTables bounds.
func hashLong(s string) uint64 {
	const m = 0x9e3779b97f4a7c15
	h := uint64(len(s)) * m
	for i := 0; i+8 <= len(s); i += 8 {
		h = (h ^ le64(s, i)) * m
		h ^= h >> 29
	}
	h = (h ^ le64(s, len(s)-8)) * m
	return h ^ h>>32
}

// home returns the record where the probe for key starts.
func (v *vocab) home(key uint64) uint64 {
	h, _ := bits.Mul64(key*0x9e3779b97f4a7c15, v.homes)
	return h
}

// token returns the bytes of the token of rank r.
func (v *vocab) token(r uint32) string {
	start := uint32(0)
	if r > 0 {
		start = le32(v.ends, 4*int(r-1))
	}
	return v.bytes[start:le32(v.ends, 4*int(r))]
}

// pair returns the rank of the two-byte token a b, or noRank.
func (v *vocab) pair(a, b byte) uint32 {
	return le32(v.pairs, 4*(int(a)<<8|int(b)))
}

// rank returns the rank of the token s, or noRank if s is not a token.
//
// The records are a hash table with linear probing whose entries lie in
// the order of their keys' homes, each at its home or just after the entry
// before it, and which ends with an empty record. A probe starts at the
// key's home and stops at the key, at an empty record, or at an entry that
// lies nearer its own home than the probe has come from the key's: that
// entry's home is after the key's, so the key would have come before it.
func (v *vocab) rank(s string) uint32 {
	if len(s) == 2 {
		return v.pair(s[0], s[1])
	}
	k := key(s)
	i := int(v.home(k)) * recordSize
	for d := uint32(0); ; d++ {
		rec := v.records[i : i+recordSize]
		rk := le64(rec, 0)
		if rk == 0 {
			return noRank
		}
		x := le32(rec, 8)
		if rk == k {
			r := x & (1<<rankBits - 1)
			if len(s) <= maxPacked || v.token(r) == s {
				return r
			}
		} else if x>>rankBits < d {
			return noRank
		}
		i += recordSize
	}
}

// le32 returns the little-endian uint32 at s[i:].
func le32(s string, i int) uint32 {
	s = s[i : i+4]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

// le64 returns the little-endian uint64 at s[i:].
func le64(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}
