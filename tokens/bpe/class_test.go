package bpe

import (
	"fmt"
	"testing"
	"unicode"
	"unicode/utf8"
)

// wantClass is the classes of r as tiktoken-go's compiled patterns test
// them: unicode tables above ASCII, and for ASCII the bitmaps the compiled
// code holds for [^\r\n\p{L}\p{N}] and [^\s\p{L}\p{N}].
func wantClass(r rune) class {
	var c class
	bit := func(ok bool, b class) {
		if ok {
			c |= b
		}
	}
	inBitmap := func(lo, hi uint64) bool {
		if r < 64 {
			return lo&(1<<uint(r)) != 0
		}
		return hi&(1<<uint(r-64)) != 0
	}
	letterOrNumber := unicode.In(r, unicode.L, unicode.N)
	bit(unicode.In(r, unicode.Lu, unicode.Lt, unicode.Lm, unicode.Lo, unicode.M), clsUpper)
	bit(unicode.In(r, unicode.Ll, unicode.Lm, unicode.Lo, unicode.M), clsLower)
	bit(unicode.In(r, unicode.L), clsLetter)
	bit(unicode.In(r, unicode.N), clsNumber)
	bit(unicode.IsSpace(r), clsSpace)
	bit(r == '\r' || r == '\n', clsNewline)
	if r < utf8.RuneSelf {
		bit(inBitmap(0xfc00ffffffffdbff, 0x78000001f8000001), clsPrefix)
		bit(inBitmap(0xfc00fffeffffc1ff, 0x78000001f8000001), clsPunct)
	} else {
		bit(!letterOrNumber, clsPrefix)
		bit(!letterOrNumber && !unicode.IsSpace(r), clsPunct)
	}
	return c
}

// TestClasses checks the class of every rune, and of invalid bytes.
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
			if bad++; bad > 20 {
				t.Fatal("too many errors")
			}
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
