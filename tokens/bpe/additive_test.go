package bpe

import (
	"math/rand/v2"
	"testing"
)

// checkAdditive checks that counts add up across a blank line before a
// printable ASCII character other than '/' (b's first, or '#'), as the
// counters claim (tokens.Additive).
func checkAdditive(t *testing.T, a, b string) {
	t.Helper()
	if len(b) == 0 || b[0] <= ' ' || b[0] > '~' || b[0] == '/' {
		b = "#" + b
	}
	for _, c := range counters {
		if whole, parts := c.Count(a+"\n\n"+b), c.Count(a+"\n\n")+c.Count(b); whole != parts {
			t.Fatalf("%s: Count(%q + blank line + %q) = %d, but the parts count %d", c.Encoding(), a, b, whole, parts)
		}
	}
}

// TestAddsUpAtHeadings joins random texts built from every class of
// character the split patterns tell apart.
func TestAddsUpAtHeadings(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for range 3000 {
		checkAdditive(t, randomText(r, r.IntN(40)), randomText(r, r.IntN(40)))
	}
	for _, a := range []string{"", "a", "end.", "x/", "tail  ", "tab\t", "line\n", "1234", "\u00e9", "\xff", "]", "##"} {
		checkAdditive(t, a, "# 1. Title (path)\n\nBody.")
		checkAdditive(t, a, "/\n/x")
	}
}

// FuzzAddsUpAtHeadings is TestAddsUpAtHeadings on fuzzed texts.
func FuzzAddsUpAtHeadings(f *testing.F) {
	for _, s := range []string{"hello world.", "it's 12", "(x)\n/y", "a\n  \n  b", "x/\n"} {
		f.Add(s, "## Title (path)")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		checkAdditive(t, a, b)
		checkAdditive(t, fromPalette(a), fromPalette(b))
	})
}
