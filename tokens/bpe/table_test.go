package bpe

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/tiktoken-go/tokenizer"
)

var writeTables = flag.Bool("write-tables", false, "rewrite the vocabulary tables from tiktoken-go's vocabularies (go generate runs this)")

// tableFiles names the compiled-in table of each encoding and the
// tiktoken-go vocabulary it is built from.
var tableFiles = []struct {
	enc      Encoding
	lib      tokenizer.Encoding
	file     string
	embedded *string
}{
	{O200k, tokenizer.O200kBase, "o200k_base.table", &o200kTable},
	{Cl100k, tokenizer.Cl100kBase, "cl100k_base.table", &cl100kTable},
}

// libraryTokens returns the ordinary tokens of tiktoken-go's encoding in
// rank order, read one id at a time through Decode, its only exported path
// to the vocabulary; it fails unless there are exactly size of them.
func libraryTokens(lib tokenizer.Encoding, size int) ([]string, error) {
	codec, err := tokenizer.Get(lib)
	if err != nil {
		return nil, err
	}
	tokens := make([]string, size)
	id := []uint{0}
	for r := range tokens {
		id[0] = uint(r)
		if tokens[r], err = codec.Decode(id); err != nil {
			return nil, fmt.Errorf("token %d: %w", r, err)
		}
	}
	id[0] = uint(size)
	if _, err := codec.Decode(id); err == nil {
		return nil, fmt.Errorf("more than the expected %d tokens", size)
	}
	return tokens, nil
}

// tableStats describes a built table's hash table.
type tableStats struct {
	homes           int
	maxDisplacement int // the farthest an entry lies from its home
}

// buildTable returns the table of the tokens, given in rank order, in the
// format vocab reads (see tableMagic).
func buildTable(tokens []string) ([]byte, tableStats) {
	n := len(tokens)
	// Five homes for every three keys keep most probes to one record.
	homes := max(1, n*5/3)
	v := &vocab{homes: uint64(homes)}
	type entry struct {
		home, key uint64
		rank      uint32
	}
	entries := make([]entry, n)
	for r, t := range tokens {
		k := key(t)
		entries[r] = entry{v.home(k), k, uint32(r)}
	}
	slices.SortFunc(entries, func(a, b entry) int {
		return cmp.Or(cmp.Compare(a.home, b.home), cmp.Compare(a.rank, b.rank))
	})
	st := tableStats{homes: homes}
	pos := make([]int, n)
	next := 0
	for i, e := range entries {
		pos[i] = max(int(e.home), next)
		next = pos[i] + 1
		st.maxDisplacement = max(st.maxDisplacement, pos[i]-int(e.home))
	}
	records := max(homes, next) + 1 // and an empty record to end every probe

	pairs := make([]uint32, 1<<16)
	for i := range pairs {
		pairs[i] = noRank
	}
	size := 0
	for r, t := range tokens {
		if len(t) == 2 {
			pairs[int(t[0])<<8|int(t[1])] = uint32(r)
		}
		size += len(t)
	}

	le := binary.LittleEndian
	b := make([]byte, 0, headerSize+pairsSize+records*recordSize+4*n+size)
	b = append(b, tableMagic...)
	b = le.AppendUint32(b, uint32(n))
	b = le.AppendUint32(b, uint32(homes))
	b = le.AppendUint32(b, uint32(records))
	b = le.AppendUint32(b, uint32(size))
	for _, p := range pairs {
		b = le.AppendUint32(b, p)
	}
	recs := make([]byte, records*recordSize)
	for i, e := range entries {
		le.PutUint64(recs[pos[i]*recordSize:], e.key)
		le.PutUint32(recs[pos[i]*recordSize+8:], e.rank|uint32(pos[i]-int(e.home))<<rankBits)
	}
	b = append(b, recs...)
	end := 0
	for _, t := range tokens {
		end += len(t)
		b = le.AppendUint32(b, uint32(end))
	}
	for _, t := range tokens {
		b = append(b, t...)
	}
	return b, st
}

// TestTables checks each compiled-in table against the table built from
// tiktoken-go's vocabulary, byte for byte, and that the vocabulary read
// from it gives every token its rank and every rank its token. With
// -write-tables it rewrites the tables instead.
func TestTables(t *testing.T) {
	for _, tf := range tableFiles {
		t.Run(string(tf.enc), func(t *testing.T) {
			tokens, err := libraryTokens(tf.lib, vocabSize[tf.enc])
			if err != nil {
				t.Fatalf("tiktoken-go %s: %v", tf.enc, err)
			}
			table, st := buildTable(tokens)
			t.Logf("%s: %d bytes, %d homes, entries at most %d records from home", tf.file, len(table), st.homes, st.maxDisplacement)
			if *writeTables {
				if err := os.WriteFile(tf.file, table, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if !bytes.Equal([]byte(*tf.embedded), table) {
				t.Fatalf("%s differs from the table built from tiktoken-go's %s; run go generate ./tokens/bpe to rewrite it", tf.file, tf.enc)
			}
			// A probe, hit or miss, reads at most the records from a
			// home to the last entry of that home; a record has 8 bits
			// for the distance.
			if st.maxDisplacement > 64 || len(tokens) > 1<<rankBits {
				t.Errorf("%s: an entry lies %d records from its home, want at most 64, and %d tokens, want at most %d", tf.file, st.maxDisplacement, len(tokens), 1<<rankBits)
			}
			v, err := loadVocab(tf.enc)
			if err != nil {
				t.Fatal(err)
			}
			for r, tok := range tokens {
				if got := v.rank(tok); got != uint32(r) {
					t.Fatalf("rank(%q) = %d, want %d", tok, got, r)
				}
				if got := v.token(uint32(r)); got != tok {
					t.Fatalf("token(%d) = %q, want %q", r, got, tok)
				}
				// The token with a byte more or less is another token or
				// none, never this one.
				for _, other := range []string{tok + "\x00", tok[:len(tok)-1]} {
					if got := v.rank(other); got == uint32(r) {
						t.Fatalf("rank(%q) = %d, the rank of %q", other, got, tok)
					}
				}
			}
		})
	}
}

// TestReadTableErrors checks that a damaged table is refused with an error
// that says what is wrong, never read.
func TestReadTableErrors(t *testing.T) {
	good, _ := buildTable([]string{"a", "b", "ab", "abcdefghij"})
	if _, err := readTable(string(good), 4); err != nil {
		t.Fatalf("readTable on a good table: %v", err)
	}
	records := int(binary.LittleEndian.Uint32(good[len(tableMagic)+8:]))
	lastRecord := headerSize + pairsSize + (records-1)*recordSize
	lastEnd := lastRecord + recordSize + 3*4
	for _, tc := range []struct {
		name   string
		table  string
		tokens int
		want   string
	}{
		{"empty", "", 4, "header"},
		{"other magic", "bpetab9\n" + string(good[8:]), 4, "header"},
		{"truncated", string(good[:len(good)-1]), 4, "bytes, want"},
		{"trailing byte", string(good) + "x", 4, "bytes, want"},
		{"wrong token count", string(good), 5, "4 tokens, want 5"},
		{"no empty record at the end", damage(good, lastRecord, 5), 4, "the last record is not empty"},
		{"ends past the bytes", damage(good, lastEnd, 99), 4, "the tokens end"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readTable(tc.table, tc.tokens)
			if !errors.Is(err, errTable) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want errTable saying %q", err, tc.want)
			}
		})
	}
}

// damage returns a copy of table with the uint32 at offset set to x.
func damage(table []byte, offset int, x uint32) string {
	b := slices.Clone(table)
	binary.LittleEndian.PutUint32(b[offset:], x)
	return string(b)
}
