package bpe

import (
	"sync"
	"unicode"
	"unicode/utf8"
)

// class is the set of pre-tokenizer character classes a rune belongs to, one
// bit per class. The classes are the sets the split patterns name, with the
// meaning Unicode gives them, as OpenAI's tiktoken reads them (see split.go).
type class uint8

const (
	// clsUpper is [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}], the head of an o200k word.
	clsUpper class = 1 << iota
	// clsLower is [\p{Ll}\p{Lm}\p{Lo}\p{M}], the tail of an o200k word.
	clsLower
	// clsLetter is \p{L}.
	clsLetter
	// clsNumber is \p{N}.
	clsNumber
	// clsSpace is \s: the White_Space property, which unicode.IsSpace
	// tests (U+0085 included, U+FEFF and U+001C..U+001F not).
	clsSpace
	// clsNewline is [\r\n].
	clsNewline
	// clsPrefix is [^\r\n\p{L}\p{N}], the optional character before a word.
	clsPrefix
	// clsPunct is [^\s\p{L}\p{N}], a run of symbols and punctuation.
	clsPunct
)

// classOfRune computes a rune's classes from the unicode tables. Every
// rune is in at least one of clsUpper, clsLower, clsLetter, clsNumber,
// clsSpace and clsPunct, so every rune starts a chunk: control characters,
// DEL (U+007F) among them, are symbols like any other.
func classOfRune(r rune) class {
	var c class
	switch {
	case unicode.Is(unicode.Lu, r), unicode.Is(unicode.Lt, r):
		c = clsUpper | clsLetter
	case unicode.Is(unicode.Ll, r):
		c = clsLower | clsLetter
	case unicode.Is(unicode.Lm, r), unicode.Is(unicode.Lo, r):
		c = clsUpper | clsLower | clsLetter
	case unicode.Is(unicode.M, r):
		c = clsUpper | clsLower
	case unicode.Is(unicode.N, r):
		c = clsNumber
	}
	if unicode.IsSpace(r) {
		c |= clsSpace
	}
	if r == '\r' || r == '\n' {
		c |= clsNewline
	}
	if c&(clsLetter|clsNumber|clsNewline) == 0 {
		c |= clsPrefix
	}
	if c&(clsLetter|clsNumber|clsSpace) == 0 {
		c |= clsPunct
	}
	return c
}

// asciiClass holds the classes of the ASCII runes; it is filled at init
// because the hot loops read it for almost every byte.
var asciiClass [utf8.RuneSelf]class

// bmpClass holds the classes of the runes below U+10000 once built;
// runes above it are rare enough in text to classify from the tables.
var (
	bmpOnce  sync.Once
	bmpClass *[1 << 16]class
)

func init() {
	for r := range rune(utf8.RuneSelf) {
		asciiClass[r] = classOfRune(r)
	}
}

// buildBMP fills the table for U+0000..U+FFFF from the category range
// tables, which is much faster than classifying 65536 runes one by one.
func buildBMP() {
	t := new([1 << 16]class)
	mark := func(tab *unicode.RangeTable, c class) {
		for _, r := range tab.R16 {
			for x := uint32(r.Lo); x <= uint32(r.Hi); x += uint32(r.Stride) {
				t[x] |= c
			}
		}
		for _, r := range tab.R32 {
			for x := r.Lo; x <= r.Hi && x < 1<<16; x += r.Stride {
				t[x] |= c
			}
		}
	}
	mark(unicode.Lu, clsUpper|clsLetter)
	mark(unicode.Lt, clsUpper|clsLetter)
	mark(unicode.Ll, clsLower|clsLetter)
	mark(unicode.Lm, clsUpper|clsLower|clsLetter)
	mark(unicode.Lo, clsUpper|clsLower|clsLetter)
	mark(unicode.M, clsUpper|clsLower)
	mark(unicode.N, clsNumber)
	mark(unicode.White_Space, clsSpace) // unicode.IsSpace outside Latin-1
	for r := range rune(0x100) {
		t[r] &^= clsSpace
		if unicode.IsSpace(r) {
			t[r] |= clsSpace
		}
	}
	t['\r'] |= clsNewline
	t['\n'] |= clsNewline
	for r := range t {
		c := t[r]
		if c&(clsLetter|clsNumber|clsNewline) == 0 {
			c |= clsPrefix
		}
		if c&(clsLetter|clsNumber|clsSpace) == 0 {
			c |= clsPunct
		}
		t[r] = c
	}
	bmpClass = t
}

// classAt returns the classes of the rune at s[i] and its length in bytes.
// An invalid byte has the classes of U+FFFD, the rune a Go string yields
// for it (see Counter.CountErr).
func classAt(s string, i int) (class, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return asciiClass[c], 1
	}
	return classAtSlow(s, i)
}

func classAtSlow(s string, i int) (class, int) {
	r, n := utf8.DecodeRuneInString(s[i:])
	if r < 1<<16 {
		bmpOnce.Do(buildBMP)
		return bmpClass[r], n
	}
	return classOfRune(r), n
}
