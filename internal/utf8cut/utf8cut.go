// Package utf8cut cuts text to a number of bytes without splitting a UTF-8
// sequence, for the messages, events and screens that bound what they keep,
// and finds the start of a sequence whose other bytes are still to come,
// for output read in pieces.
package utf8cut

import "unicode/utf8"

// Prefix returns the longest start of s of at most n bytes that does not
// end inside a UTF-8 sequence (s itself when it fits; "" when n <= 0).
func Prefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Partial returns how many bytes at the end of b begin a UTF-8 sequence
// that has not ended yet (at most 3): bytes to hold back until the rest
// comes. It returns 0 when b ends with a whole character, or with bytes
// that no more bytes could make valid.
func Partial(b []byte) int {
	for k := 1; k <= min(len(b), utf8.UTFMax-1); k++ {
		if utf8.RuneStart(b[len(b)-k]) {
			if utf8.FullRune(b[len(b)-k:]) {
				return 0
			}
			return k
		}
	}
	return 0
}
