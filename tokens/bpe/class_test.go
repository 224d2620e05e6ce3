package bpe

import (
	"fmt"
	"testing"
	"unicode"
	"unicode/utf8"
)

// wantClass is the classes of r as the split patterns define them, from
// the unicode package's tables, rune by rune.
func wantClass(r rune) class {
	var c class
	bit := func(ok bool, b class) {
		if ok {
			c |= b
		}
	}
	letterOrNumber := unicode.In(r, unicode.L, unicode.N)
	newline := r == '\r' || r == '\n'
	bit(unicode.In(r, unicode.Lu, unicode.Lt, unicode.Lm, unicode.Lo, unicode.M), clsUpper)
	bit(unicode.In(r, unicode.Ll, unicode.Lm, unicode.Lo, unicode.M), clsLower)
	bit(unicode.In(r, unicode.L), clsLetter)
	bit(unicode.In(r, unicode.N), clsNumber)
	bit(unicode.IsSpace(r), clsSpace)
	bit(newline, clsNewline)
	bit(!letterOrNumber && !newline, clsPrefix)
	bit(!letterOrNumber && !unicode.IsSpace(r), clsPunct)
	return c
}

// TestClasses checks the class of every rune, and of invalid bytes, and
// that every rune can start a chunk.
func TestClasses(t *testing.T) {
	step := rune(1)
	if testing.Short() {
		step = 7
	}
	bad := 0
	for r := rune(0); r <= unicode.MaxRune; r += step {
		if 0xd800 <= r && r <= 0xdfff {
			continue // surrogates do not decode
		}
		s := string(r)
		got, n := classAt(s, 0)
		if want := wantClass(r); got != want || n != len(s) {
			t.Errorf("classAt(%U): got %08b, %d bytes, want %08b, %d bytes", r, got, n, want, len(s))
			bad++
		}
		if got&(clsUpper|clsLower|clsNumber|clsSpace|clsPunct) == 0 {
			t.Errorf("classAt(%U): got %08b, in no class a chunk starts with", r, got)
			bad++
		}
		if bad > 20 {
			t.Fatal("too many errors")
		}
	}
	for _, s := range []string{"\xff", "\x80", "\xc3", "\xe2\x82", "\xed\xa0\x80"} {
		t.Run(fmt.Sprintf("%q", s), func(t *testing.T) {
			got, n := classAt(s, 0)
			if want := wantClass(utf8.RuneError); got != want || n != 1 {
				t.Errorf("got %08b, %d bytes, want %08b, 1 byte", got, n, want)
			}
		})
	}
}
