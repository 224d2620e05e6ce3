package bpe

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestMergeRunsAgrees checks that the run merge counts as the heap merge
// does, on chunks of every shape: runs of one byte of every length up to
// 130 for each byte whose runs are tokens, runs of random bytes of random
// lengths, runs mixed with single bytes, and random bytes.
func TestMergeRunsAgrees(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 8))
	for _, c := range counters {
		v, err := c.vocab()
		if err != nil {
			t.Fatal(err)
		}
		t.Run(string(c.Encoding()), func(t *testing.T) {
			var sc scratch
			check := func(chunk string) {
				t.Helper()
				if want, got := v.mergeLarge(chunk, &sc), v.mergeRuns(chunk); got != want {
					t.Fatalf("%q: mergeRuns gives %d tokens, mergeLarge %d", chunk, got, want)
				}
			}
			for b := range 256 {
				unit := string([]byte{byte(b)})
				if v.rank(unit+unit) == noRank {
					continue
				}
				for n := 2; n <= 130; n++ {
					check(strings.Repeat(unit, n))
				}
			}
			alphabet := " -=xA\n\t.0é€"
			for range 500 {
				var b strings.Builder
				for range 1 + r.IntN(12) {
					u := string([]rune(alphabet)[r.IntN(len([]rune(alphabet)))])
					if r.IntN(4) == 0 {
						b.WriteString(u)
						continue
					}
					b.WriteString(strings.Repeat(u, 1+r.IntN(300)))
				}
				if b.Len() >= 2 {
					check(b.String())
				}
			}
			for range 500 {
				b := make([]byte, 2+r.IntN(300))
				for i := range b {
					b[i] = byte(r.IntN(256))
				}
				check(string(b))
			}
		})
	}
}

// TestMergeRunsFromParts checks the run merge where merging a run's parts
// all at once would be wrong: runs of parts U whose UUU or UUUU ranks below
// UU, and parts P before a run whose PUU ranks below UU. Such states do not
// come up from the bytes of the chunks above, so the merges start from
// them, and are checked against tiktoken's merge loop written plainly.
func TestMergeRunsFromParts(t *testing.T) {
	for _, c := range counters {
		v, err := c.vocab()
		if err != nil {
			t.Fatal(err)
		}
		t.Run(string(c.Encoding()), func(t *testing.T) {
			type state struct{ before, unit, after string }
			var states []state
			for r := range uint32(vocabSize[c.Encoding()]) {
				tok := v.token(r)
				if uu := v.rank(tok + tok); uu != noRank && (v.rank(tok+tok+tok) < uu || v.rank(tok+tok+tok+tok) < uu) {
					states = append(states, state{"", tok, ""}, state{"a", tok, "b"})
				}
				for l := 1; 2*l < len(tok); l++ {
					u, p := tok[len(tok)-l:], tok[:len(tok)-2*l]
					if tok[len(tok)-2*l:len(tok)-l] == u && v.rank(p) != noRank && v.rank(u) != noRank && r < v.rank(u+u) && v.rank(p+u) > v.rank(u+u) {
						states = append(states, state{p, u, ""})
					}
				}
			}
			if len(states) < 10 {
				t.Fatalf("only %d states found where a run cannot merge at once", len(states))
			}
			for _, st := range states {
				for k := 2; k <= 12; k++ {
					parts := []string{}
					if st.before != "" {
						parts = append(parts, st.before)
					}
					for range k {
						parts = append(parts, st.unit)
					}
					if st.after != "" {
						parts = append(parts, st.after)
					}
					want := plainMerge(v, parts)
					if got := v.mergeParts(strings.Join(parts, ""), runsOfParts(parts)); got != want {
						t.Fatalf("parts %q: mergeParts gives %d tokens, tiktoken's loop %d", parts, got, want)
					}
				}
			}
		})
	}
}

// runsOfParts returns parts as runs of equal parts.
func runsOfParts(parts []string) []runNode {
	var nodes []runNode
	at := int32(0)
	for i, p := range parts {
		if i > 0 && parts[i-1] == p {
			nodes[len(nodes)-1].count++
		} else {
			nodes = append(nodes, runNode{start: at, ulen: int32(len(p)), count: 1})
		}
		at += int32(len(p))
	}
	return nodes
}

// plainMerge is tiktoken's merge loop from parts: merge the leftmost pair
// of lowest rank until no pair is a token; it returns the parts left.
func plainMerge(v *vocab, parts []string) int {
	parts = slices.Clone(parts)
	for {
		best, at := uint32(noRank), -1
		for i := 0; i+1 < len(parts); i++ {
			if r := v.rank(parts[i] + parts[i+1]); r < best {
				best, at = r, i
			}
		}
		if at < 0 {
			return len(parts)
		}
		parts[at] += parts[at+1]
		parts = slices.Delete(parts, at+1, at+2)
	}
}
