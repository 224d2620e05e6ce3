package tools

import (
	"fmt"
	"strings"
	"testing"
)

// distinctWords is a query of n different words.
func distinctWords(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "w%x ", i)
	}
	return b.String()
}

// A query of many words keeps the first maxQueryWords different ones, and
// costs what a query of just over that many costs: the words past the cap
// are not collected (they were, and each was compared with all before it).
func TestQueryWordsCapped(t *testing.T) {
	long := distinctWords(20000)
	words, used := queryWords(long)
	if len(words) != maxQueryWords {
		t.Fatalf("got %d words, want %d", len(words), maxQueryWords)
	}
	if want := strings.Index(long, fmt.Sprintf("w%x ", maxQueryWords)); used != want {
		t.Errorf("used: got %d bytes, want %d (up to the first word left out)", used, want)
	}
	short := distinctWords(maxQueryWords + 1)
	longAllocs := testing.AllocsPerRun(3, func() { queryWords(long) })
	shortAllocs := testing.AllocsPerRun(3, func() { queryWords(short) })
	if longAllocs > shortAllocs {
		t.Errorf("allocations: got %v for 20,000 words, want at most the %v of %d words", longAllocs, shortAllocs, maxQueryWords+1)
	}
	// Repeats and stop words are not words of their own.
	words, used = queryWords("Edit the EDIT file, edit a file " + long)
	if len(words) != maxQueryWords || words[0] != "edit" || words[1] != "file" || words[2] != "w0" {
		t.Errorf("got %q..., want edit, file, w0 first", words[:3])
	}
	if words, used = queryWords("run the tests"); used != len("run the tests") || len(words) != 2 {
		t.Errorf("got %q, %d, want [run tests] and all 13 bytes used", words, used)
	}
}
